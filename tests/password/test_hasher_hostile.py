"""Hostile requests: memory and work limits, huge inputs, allocation failure, Ctrl-C, secrets."""

from __future__ import annotations

import dataclasses
import errno
import logging
import mmap
import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from twocats import kdf, phc
from twocats._units import format_size
from twocats.cli import main
from twocats.exceptions import (
    HashingError,
    HashLimitError,
    HashMemoryLimitError,
    InvalidHashError,
    InvalidParametersError,
    MemoryLimitError,
    VerifyMismatchError,
)
from twocats.kdf import limits
from twocats.kdf.engine import Engine
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST

SALT = bytes(range(16))
PASSWORD = b"correct horse battery staple"

#: One tebibyte, the memory of mem_cost 30.
TIB = 1 << 40


def run(*args: str, stdin: str | bytes | None = None) -> Result:
    """Invoke the CLI with separate stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=stdin)


def error_line(result: Result) -> str:
    """Return the one line on stderr, checking that it is an Error: line and no traceback."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def no_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any engine allocates work memory."""

    def refuse(words: int, params: Params) -> None:
        pytest.fail("work memory was allocated despite the limit")

    monkeypatch.setattr(Engine, "_allocate", staticmethod(refuse))


def machine_text() -> str:
    """The machine's limit as the error messages write it."""
    machine = limits.machine_memory()
    assert machine is not None
    return f"this machine's memory ({format_size(machine)}, {machine} bytes)"


# -- memory: a stored hash over max_memory ---------------------------------------------------------


@pytest.mark.usefixtures("no_allocation")
def test_stored_hash_over_max_memory() -> None:
    """A planted hash over max_memory is a HashMemoryLimitError, an InvalidHashError too."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_memory=4 << 20)
    planted = phc.encode(Params(mem_cost=13), SALT, bytes(32))
    message = (
        "the stored hash is refused: mem_cost=13 needs 8 MiB of work memory (8388608 bytes), "
        "more than max_memory (4 MiB, 4194304 bytes)"
    )
    for call in (lambda: hasher.verify(planted, PASSWORD), lambda: hasher.check_hash(planted)):
        with pytest.raises(HashMemoryLimitError) as caught:
            call()
        assert str(caught.value) == message
        assert isinstance(caught.value, InvalidHashError)
        assert isinstance(caught.value, MemoryLimitError)


def test_cli_refuses_a_stored_hash_over_max_memory_before_the_prompt() -> None:
    """twocats verify refuses the planted hash with exit status 2 before reading a password."""
    planted = phc.encode(Params(mem_cost=19), SALT, bytes(32))
    result = run("verify", planted, "--max-memory", "300MiB")
    assert result.exit_code == 2
    assert error_line(result) == (
        "Error: the stored hash is refused: mem_cost=19 needs 512 MiB of work memory (536870912 "
        "bytes), more than max_memory (300 MiB, 314572800 bytes)"
    )
    assert "Password" not in result.stderr


# -- memory: mem_cost 30 ---------------------------------------------------------------------------


@pytest.mark.usefixtures("no_allocation")
def test_mem_cost_30_is_refused_by_every_library_entry_point() -> None:
    """derive, client, update, Engine and PasswordHasher refuse 1 TiB before allocating."""
    huge = Params(mem_cost=30)
    message = f"mem_cost=30 needs 1 TiB of work memory ({TIB} bytes), more than {machine_text()}"
    calls = {
        "derive": lambda: kdf.derive(PASSWORD, SALT, huge),
        "client": lambda: kdf.client(PASSWORD, SALT, huge),
        "update": lambda: kdf.update(bytes(32), huge, 29),
        "Engine": lambda: Engine().derive(PASSWORD, SALT, huge),
        "Engine.check_memory": lambda: Engine().check_memory(huge),
        "PasswordHasher": lambda: PasswordHasher(mem_cost=30),
    }
    for name, call in calls.items():
        with pytest.raises(MemoryLimitError) as caught:
            call()
        assert str(caught.value) == message, name
    hasher = PasswordHasher.from_params(CHEAPEST, max_memory=1 << 30)
    with pytest.raises(HashMemoryLimitError) as caught:
        hasher.verify(phc.encode(huge, SALT, bytes(32)), PASSWORD)
    assert str(caught.value) == (
        f"the stored hash is refused: mem_cost=30 needs 1 TiB of work memory ({TIB} bytes), "
        "more than max_memory (1 GiB, 1073741824 bytes)"
    )


def test_a_limit_above_the_machine_is_lowered_to_it() -> None:
    """max_memory never exceeds what the machine can give, for engines and hashers alike."""
    machine = limits.machine_memory()
    assert machine is not None
    assert Engine(max_memory=1 << 50).max_memory == machine
    assert Engine().max_memory == machine
    assert PasswordHasher.from_params(CHEAPEST, max_memory=1 << 50).max_memory == machine
    with pytest.raises(MemoryLimitError, match=r"more than this machine's memory"):
        Engine(max_memory=1 << 50).check_memory(Params(mem_cost=30))


@pytest.mark.parametrize(
    "command",
    [
        ["hash", "--mem-cost", "30", "--password-stdin"],
        ["derive", "--mem-cost", "30", "--salt", "salty salt", "--password-stdin"],
    ],
)
def test_cli_refuses_mem_cost_30(command: list[str]) -> None:
    """The hash and derive commands refuse mem_cost 30 with exit status 2 and one line."""
    result = run(*command, stdin="pw\n")
    assert result.exit_code == 2
    assert error_line(result) == (
        f"Error: mem_cost=30 needs 1 TiB of work memory ({TIB} bytes), more than {machine_text()}"
    )


@pytest.mark.usefixtures("no_allocation")
def test_a_call_limit_refuses_before_allocating() -> None:
    """max_memory of one derive, client or update call names itself as the limit."""
    params = Params(mem_cost=12)
    message = (
        "mem_cost=12 needs 4 MiB of work memory (4194304 bytes), more than max_memory "
        "(1 MiB, 1048576 bytes)"
    )
    for call in (
        lambda: kdf.derive(PASSWORD, SALT, params, max_memory=1 << 20),
        lambda: kdf.client(PASSWORD, SALT, params, max_memory=1 << 20),
        lambda: kdf.update(bytes(32), params, 11, max_memory=1 << 20),
        lambda: kdf.simple(PASSWORD, SALT, 12, max_memory=1 << 20),
    ):
        with pytest.raises(MemoryLimitError) as caught:
            call()
        assert str(caught.value) == message


def test_the_address_space_limit_caps_the_machine_memory() -> None:
    """Under ulimit -v the limit is the address space, and a request within it is refused."""
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))\n"
        "from twocats import kdf\n"
        "from twocats.kdf.limits import machine_memory\n"
        "from twocats.params import Params\n"
        "print(machine_memory())\n"
        "try:\n"
        "    kdf.derive(b'pw', b'saltsalt', Params(mem_cost=22))\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert result.stdout.splitlines() == [
        str(3 << 30),
        (
            "MemoryLimitError mem_cost=22 needs 4 GiB of work memory (4294967296 bytes), more "
            "than this machine's memory (3 GiB, 3221225472 bytes)"
        ),
    ]


# -- work: time_cost and tiny blocks in a stored hash ----------------------------------------------


@pytest.mark.usefixtures("no_allocation")
def test_stored_hash_asking_for_too_much_work() -> None:
    """time_cost 30 or 32-byte blocks within the memory limit are refused as HashLimitError."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_memory=1 << 20)
    repeated = phc.encode(Params(variant="2014", mem_cost=10, time_cost=30), SALT, bytes(32))
    with pytest.raises(HashLimitError) as caught:
        hasher.verify(repeated, PASSWORD)
    assert str(caught.value) == (
        "the stored hash is refused: its work is estimated at 54548 s of CPU (hash_type=blake2s, "
        "mem_cost=10, time_cost=30, multiplies=2, lanes=8, parallelism=2, block_size=16384, "
        "sub_block_size=64), more than max_work (0.00185 s, 2.5 times the work of a "
        "default-profile hash at max_memory)"
    )
    assert not isinstance(caught.value, MemoryLimitError)
    tiny_blocks = phc.encode(Params(mem_cost=10, block_size=32, sub_block_size=32), SALT, bytes(32))
    with pytest.raises(HashLimitError) as caught:
        hasher.check_hash(tiny_blocks)
    assert str(caught.value) == (
        "the stored hash is refused: its work is estimated at 0.00901 s of CPU "
        "(hash_type=blake2s, mem_cost=10, multiplies=2, lanes=8, parallelism=2, block_size=32, "
        "sub_block_size=32), more than max_work (0.00185 s, 2.5 times the work of a "
        "default-profile hash at max_memory)"
    )


def test_work_limit_admits_ordinary_hashes() -> None:
    """Every profile and small time costs at the memory limit stay within the work limit."""
    hasher = PasswordHasher.from_params(CHEAPEST, max_memory=1 << 30)
    for params in (
        Params(mem_cost=20, multiplies=3),
        Params(mem_cost=20, start_mem_cost=10, multiplies=3),
        Params(variant="2014", mem_cost=20, time_cost=3),
        Params(variant="2014-03", mem_cost=20, time_cost=1),
    ):
        assert hasher.check_hash(phc.encode(params, SALT, bytes(32))) == params
    own = Params(variant="2014", mem_cost=10, time_cost=12)
    own_hasher = PasswordHasher.from_params(own, max_memory=1 << 20)
    assert own_hasher.max_work == int(limits.WORK_RATIO * limits.estimated_work(own))


def test_estimated_work_follows_the_measured_costs() -> None:
    """The work model scales with memory, lanes, multiplies, block count and repetitions."""
    base = limits.estimated_work(Params(mem_cost=10))
    assert limits.estimated_work(Params(mem_cost=11)) > 1.9 * base
    large = limits.estimated_work(Params(mem_cost=16))
    assert limits.estimated_work(Params(mem_cost=16, lanes=1, sub_block_size=32)) > 7 * large
    assert limits.estimated_work(Params(mem_cost=10, multiplies=8)) > 2.5 * base
    assert limits.estimated_work(Params(mem_cost=10, block_size=32, sub_block_size=32)) > 20 * base
    assert limits.estimated_work(Params(variant="2014", mem_cost=10, time_cost=2)) > 1.7 * base
    # March 2014 repeats every block hash but hashes each block's state once.
    march = limits.estimated_work(Params(variant="2014-03", mem_cost=16, time_cost=0))
    assert limits.estimated_work(Params(variant="2014-03", mem_cost=16, time_cost=2)) > 3 * march


# -- oversized and large inputs --------------------------------------------------------------------


@pytest.mark.usefixtures("no_allocation")
@pytest.mark.parametrize("name", ["password", "salt", "data"])
def test_an_oversized_input_is_refused_without_copying(name: str) -> None:
    """A 4 GiB input (mapped, never touched) is refused before it is copied or memory taken."""
    # calloc maps the zero pages lazily: the 4 GiB array costs no physical memory.
    huge = memoryview(np.zeros(1 << 32, dtype=np.uint8))
    inputs: dict[str, Any] = {"password": PASSWORD, "salt": SALT, "data": b""}
    inputs[name] = huge
    with pytest.raises(InvalidParametersError) as caught:
        kdf.derive(inputs["password"], inputs["salt"], CHEAPEST, data=inputs["data"])
    assert str(caught.value) == (
        f"{name} is 4294967296 bytes long, more than the limit of 4294967295 bytes (4 GiB - 1, "
        "the largest length the algorithm's 32-bit length fields can hold)"
    )


def test_cli_refuses_an_oversized_data_file(tmp_path: Path) -> None:
    """A data file over the 1 MiB cap (a sparse 4 GiB here) is refused by its size, unread."""
    data_file = tmp_path / "data.bin"
    with data_file.open("wb") as handle:
        handle.truncate(1 << 32)
    result = run(
        "derive",
        "--profile",
        "cheapest",
        "--insecure",
        "--salt",
        "salty salt",
        "--data-file",
        str(data_file),
        "--password-stdin",
        stdin="pw\n",
    )
    assert result.exit_code == 2
    assert error_line(result) == (
        f"Error: cannot read the data file {data_file}: longer than the limit of 1 MiB"
    )


def test_100_megabyte_inputs_work() -> None:
    """Password, salt and data of 100 MB each are hashed where they lie, through every layer."""
    size = 100_000_000
    password = bytes([7]) * size
    key = kdf.derive(password, bytes([8]) * size, CHEAPEST, data=bytes([9]) * size)
    assert len(key) == CHEAPEST.output_size
    hasher = PasswordHasher.from_params(CHEAPEST)
    stored = hasher.hash(password)
    assert hasher.verify(stored, password)
    with pytest.raises(VerifyMismatchError, match=r"^The password does not match the supplied"):
        hasher.verify(stored, password[:1000])


# -- allocation failure ----------------------------------------------------------------------------


def _fail_allocation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The system refuses to map the work memory, as when it is out of memory."""

    def fail(*args: Any, **kwargs: Any) -> mmap.mmap:
        raise OSError(errno.ENOMEM, os.strerror(errno.ENOMEM))

    monkeypatch.setattr(mmap, "mmap", fail)


def test_allocation_failure_is_a_hashing_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused allocation is a HashingError, and the hasher works normally afterwards."""
    params = Params(mem_cost=10, parallelism=1, block_size=1024)
    hasher = PasswordHasher.from_params(params)
    expected = hasher.hash(PASSWORD, salt=SALT)
    hasher.release()
    with monkeypatch.context() as patch:
        _fail_allocation(patch)
        with pytest.raises(HashingError) as caught:
            hasher.verify(expected, PASSWORD)
        assert str(caught.value) == (
            "could not allocate 1 MiB of work memory (1048576 bytes) for mem_cost=10: the system "
            "is out of memory"
        )
        assert not hasher._pool._free
    assert hasher.verify(expected, PASSWORD)
    assert hasher.hash(PASSWORD, salt=SALT) == expected


def test_cli_allocation_failure_is_one_line_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the command line an allocation failure is one Error: line and exit status 1."""
    _fail_allocation(monkeypatch)
    result = run("hash", "--profile", "cheapest", "--insecure", "--password-stdin", stdin="pw\n")
    assert result.exit_code == 1
    assert error_line(result) == (
        "Error: could not allocate 1 KiB of work memory (1024 bytes) for mem_cost=0: the system "
        "is out of memory"
    )


def test_running_out_of_memory_mid_hash_leaves_no_half_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A MemoryError inside the fill is a HashingError; the engine drops the buffer it used."""
    engine = Engine()
    params = Params(mem_cost=10, parallelism=1, block_size=1024)
    expected = engine.derive(PASSWORD, SALT, params)
    real = engine.fill_slice()
    calls = []

    def failing(*args: Any) -> None:
        calls.append(1)
        if len(calls) == 3:
            raise MemoryError
        real(*args)

    monkeypatch.setattr(engine, "_fill", failing)
    with pytest.raises(HashingError) as caught:
        engine.derive(PASSWORD, SALT, params)
    assert str(caught.value) == "ran out of memory during the derivation (mem_cost=10)"
    assert engine.buffer_bytes == 0
    monkeypatch.setattr(engine, "_fill", real)
    assert engine.derive(PASSWORD, SALT, params) == expected


def test_a_real_allocation_failure_under_ulimit_is_a_hashing_error() -> None:
    """With the address space nearly used up, a request within the limit fails cleanly."""
    code = (
        "import resource\n"
        "from twocats import kdf\n"
        "from twocats.params import Params\n"
        "kdf.derive(b'pw', b'saltsalt', Params(mem_cost=10, parallelism=1, block_size=1024))\n"
        "with open('/proc/self/status') as status:\n"
        "    used = next(int(l.split()[1]) for l in status if l.startswith('VmSize')) * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (used + (256 << 20), resource.RLIM_INFINITY))\n"
        "params = Params(mem_cost=19, parallelism=1)\n"
        "try:\n"
        "    kdf.derive(b'pw', b'saltsalt', params)\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
        "print(kdf.derive(b'pw', b'saltsalt', Params(mem_cost=10, parallelism=1, block_size=1024))"
        ".hex())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    small = Params(mem_cost=10, parallelism=1, block_size=1024)
    assert result.stdout.splitlines() == [
        (
            "HashingError could not allocate 512 MiB of work memory (536870912 bytes) for "
            "mem_cost=19: the system is out of memory"
        ),
        kdf.derive(b"pw", b"saltsalt", small).hex(),
    ]


# -- Ctrl-C ----------------------------------------------------------------------------------------


#: Runs the CLI with one change: when the fill first hands work to its thread pool (the first
#: level large enough to share), it reports on the pipe ``argv[1]`` that the fill is under way and
#: waits there until SIGINT arrives.  The interrupt therefore always lands in the middle of the
#: fill, however busy the machine, and the test needs no polling.
INTERRUPTED_CHILD = """
import os, signal, sys, threading
from concurrent.futures import ThreadPoolExecutor

ready = int(sys.argv[1])
arrived = threading.Event()


def on_sigint(signum, frame):
    arrived.set()
    signal.default_int_handler(signum, frame)


def submit_after_sigint(self, fn, /, *args, **kwargs):
    os.write(ready, b"filling")
    arrived.wait(600)
    raise AssertionError("no SIGINT arrived")


signal.signal(signal.SIGINT, on_sigint)
ThreadPoolExecutor.submit = submit_after_sigint
from twocats.cli import main

main(sys.argv[2:])
"""


def test_ctrl_c_during_a_long_hash_prints_interrupted_and_exits_130() -> None:
    """SIGINT to a real twocats process while it fills 1 GiB: 'interrupted', exit status 130."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    env.pop("TWOCATS_THREADS", None)
    command = ["hash", "--mem-cost", "20", "--parallelism", "2", "--password-stdin"]
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_CHILD, str(write_end), *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        pass_fds=(write_end,),
    )
    os.close(write_end)
    try:
        assert process.stdin is not None
        process.stdin.write(b"pw\n")
        process.stdin.close()
        readable, _, _ = select.select([read_end], [], [], 120)
        assert readable, "the fill did not start within 120 s"
        assert os.read(read_end, 16) == b"filling", "the hash ended without a threaded fill"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 130
    finally:
        os.close(read_end)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stdout is not None
    assert process.stderr is not None
    assert process.stderr.read().decode() == "interrupted\n"
    assert process.stdout.read() == b""


# -- secrets ---------------------------------------------------------------------------------------


def test_unencodable_password_is_refused_without_echo() -> None:
    """A str password with a lone surrogate is an InvalidParametersError that quotes nothing."""
    hasher = PasswordHasher.from_params(CHEAPEST)
    stored = hasher.hash(PASSWORD)
    secret = "hunter2\ud800hunter2"
    for call in (lambda: hasher.hash(secret), lambda: hasher.verify(stored, secret)):
        with pytest.raises(InvalidParametersError) as caught:
            call()
        assert str(caught.value) == (
            "password is not valid Unicode text (it holds an unpaired surrogate); pass bytes to "
            "hash arbitrary byte strings"
        )
        assert caught.value.__context__ is None


def test_no_secret_in_reprs_messages_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Passwords, salts and peppers appear in no repr, no error message and no log record."""
    caplog.set_level(logging.DEBUG)
    pepper = b"pepper-Zq7SecretMarker"
    password = "password-Zq7SecretMarker"
    hasher = PasswordHasher.from_params(CHEAPEST, secret=pepper)
    stored = hasher.hash(password)
    decoded = phc.decode(stored)
    texts = [repr(hasher), repr(decoded), str(decoded), repr(Engine()), repr(decoded.params)]
    errors: list[BaseException] = []
    calls: list[tuple[Callable[[], object], type[Exception], str]] = [
        (
            lambda: hasher.verify(stored, password + "x"),
            VerifyMismatchError,
            r"^The password does not match the supplied hash$",
        ),
        (
            lambda: hasher.verify(password, password),
            InvalidHashError,
            r"^not a twocats hash \(it must start with \$twocats\$\)$",
        ),
        (
            lambda: hasher.verify(stored.replace("$twocats$", "$" + password + "$"), password),
            InvalidHashError,
            r"^not a twocats hash \(it must start with \$twocats\$\)$",
        ),
        (
            lambda: kdf.derive(password.encode(), SALT, Params(mem_cost=30)),
            MemoryLimitError,
            r"^mem_cost=30 needs 1 TiB of work memory \(1099511627776 bytes\), more than ",
        ),
        (
            lambda: kdf.derive(password, SALT, CHEAPEST),  # type: ignore[arg-type]
            InvalidParametersError,
            r"^password must be bytes; got str$",
        ),
    ]
    for call, error, message in calls:
        with pytest.raises(error, match=message) as caught:
            call()
        assert type(caught.value) is error
        errors.append(caught.value)
    texts += [str(error) for error in errors] + [repr(error) for error in errors]
    texts += [record.getMessage() for record in caplog.records]
    for text in texts:
        assert "Zq7SecretMarker" not in text
        assert decoded.salt.hex() not in text


@pytest.mark.parametrize("wipe", [True, False])
def test_hasher_wipe_zeroes_the_kept_work_memory(wipe: bool) -> None:
    """With wipe=True the work area a hasher keeps between calls is all zero after a hash."""
    hasher = PasswordHasher.from_params(
        dataclasses.replace(CHEAPEST, mem_cost=6, block_size=1024), wipe=wipe
    )
    hasher.hash(PASSWORD)
    (engine,) = hasher._pool._free
    buffer = engine._buffer
    assert buffer is not None
    assert (not any(buffer)) is wipe
