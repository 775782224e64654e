"""Commands that run stored or file-supplied parameters keep verify's memory and work limits.

``upgrade``, ``needs-rehash`` and ``selftest --vectors`` refuse what ``verify`` refuses, with the
same defaults and messages; ``hash`` and ``upgrade`` make only hashes that ``verify`` accepts with
the same ``--max-memory``; the hidden prompt copes with a non-UTF-8 locale; an empty pepper file is
refused.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pty
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench import fuzz
from twocats import hasher as hasher_module
from twocats.cli import main
from twocats.hasher import PasswordHasher
from twocats.params import Params
from twocats.profiles import CHEAPEST, DEFAULT

TINY = ["--profile", "cheapest", "--insecure"]

#: Planted hashes that verify refuses by their work (the issue's time_cost=30 shapes of 2014 and
#: March 2014) and by their memory (4 GiB).
PLANTED_WORK = [planted.decode() for planted in fuzz.planted_hashes()[:2]]
PLANTED_MEMORY = fuzz.planted_hashes()[2].decode()


def run(*args: str, stdin: str | bytes | None = None) -> Result:
    """Invoke the CLI with separate stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=stdin)


def error_of(result: Result) -> str:
    """The one Error: line on stderr."""
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize("planted", [*PLANTED_WORK, PLANTED_MEMORY])
def test_upgrade_and_needs_rehash_refuse_what_verify_refuses(planted: str) -> None:
    """A planted hash gets verify's own message from upgrade and needs-rehash, before any work."""
    refused = error_of(run("verify", planted, "--password-stdin", stdin="pw\n"))
    assert refused.startswith("Error: the stored hash is refused: ")
    upgrade = run("upgrade", planted, "--mem-cost", "23")
    assert upgrade.exit_code == 2
    assert error_of(upgrade) == refused
    rehash = run("needs-rehash", planted, "--mem-cost", "23")
    assert rehash.exit_code == 2
    assert error_of(rehash) == error_of(upgrade)


def test_upgrade_limits_match_verify_for_work() -> None:
    """The 2014 planted hash of the issue is refused by its estimated work, naming max_work."""
    result = run("upgrade", PLANTED_WORK[0], "--mem-cost", "1")
    assert result.exit_code == 2
    message = error_of(result)
    assert message.startswith("Error: the stored hash is refused: its work is estimated at ")
    assert message.endswith(
        "of standard fill (mem_cost=0, time_cost=30, block_size=32, lanes=8, multiplies=0), more "
        "than max_work (8 GiB, 8 times max_memory)"
    )


def test_max_memory_raises_the_limits_of_upgrade() -> None:
    """An upgrade over a small --max-memory is refused, and runs under a larger one."""
    stored = PasswordHasher.from_params(CHEAPEST).hash("pw")
    small = run("upgrade", stored, "--mem-cost", "3", "--max-memory", "4KiB")
    assert small.exit_code == 2
    assert "more than max_memory (4 KiB, 4096 bytes)" in error_of(small)
    assert run("upgrade", stored, "--mem-cost", "3", "--max-memory", "64KiB").exit_code == 0


def test_hash_refuses_what_verify_would_refuse() -> None:
    """hash --mem-cost 21 names the --max-memory that hashing and verifying need."""
    result = run("hash", "--mem-cost", "21", "--password-stdin", stdin="pw\n")
    assert result.exit_code == 2
    assert error_of(result) == (
        "Error: a hash with these parameters is refused: mem_cost=21 needs 2 GiB of work memory "
        "(2147483648 bytes), more than max_memory (1 GiB, 1073741824 bytes); 'twocats verify' "
        "would refuse it too: pass --max-memory 2048MiB here and to 'twocats verify'"
    )


def test_upgrade_refuses_a_result_verify_would_refuse() -> None:
    """upgrade --mem-cost 21 of an ordinary hash says which --max-memory verify will need."""
    stored = PasswordHasher.from_params(Params(mem_cost=10)).hash("pw")
    result = run("upgrade", stored, "--mem-cost", "21")
    assert result.exit_code == 2
    assert error_of(result).startswith(
        "Error: the upgraded hash is refused: mem_cost=21 needs 2 GiB of work memory"
    )
    assert error_of(result).endswith("pass --max-memory 2048MiB here and to 'twocats verify'")


def test_a_hash_made_with_a_raised_limit_says_how_to_verify_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With --max-memory above the default, hash notes the --max-memory verify needs."""
    # A default limit of 1 MiB makes the test cheap; hash and verify both read it.
    monkeypatch.setattr(hasher_module, "DEFAULT_MAX_MEMORY", 1 << 20)
    params = ["--mem-cost", "11", "--parallelism", "1"]
    refused = run("hash", *params, "--password-stdin", stdin="pw\n")
    assert refused.exit_code == 2
    assert error_of(refused).endswith("pass --max-memory 2MiB here and to 'twocats verify'")
    made = run("hash", *params, "--max-memory", "2MiB", "--password-stdin", stdin="pw\n")
    assert made.exit_code == 0, made.output
    assert "note: verify this hash with 'twocats verify --max-memory 2MiB'" in made.stderr
    encoded = made.stdout.strip()
    assert run("verify", encoded, "--password-stdin", stdin="pw\n").exit_code == 2
    verified = run("verify", encoded, "--max-memory", "2MiB", "--password-stdin", stdin="pw\n")
    assert verified.exit_code == 0, verified.output


def _vector(**changes: object) -> str:
    """The fuzzer's planted 2014 vector record, changed (its output need not match)."""
    record = json.loads(fuzz.planted_vectors()[0])
    record.update(changes)
    return json.dumps(record) + "\n"


def test_selftest_refuses_an_over_limit_vector(tmp_path: Path) -> None:
    """A planted vector gets a REFUSED line and a count instead of running for hours."""
    path = tmp_path / "planted.jsonl"
    path.write_text(_vector() + _vector(id="huge", timeCost=0, memCost=22), encoding="utf-8")
    result = run("selftest", "--vectors", str(path), "--backend", "reference")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("REFUSED planted (2014 extended blake2s): its work is estimated at ")
    assert lines[0].endswith("more than max_work (8 GiB, 8 times max_memory)")
    assert lines[1:] == [
        (
            "REFUSED huge (2014 extended blake2s): mem_cost=22 needs 4 GiB of work memory "
            "(4294967296 bytes), more than max_memory (1 GiB, 1073741824 bytes)"
        ),
        "0 passed, 0 failed, 2 refused (over the limits: raise --max-memory or --max-work)",
    ]
    document = json.loads(
        run("selftest", "--vectors", str(path), "--backend", "reference", "--json").stdout
    )
    assert (document["refused"], len(document["refusals"])) == (2, 2)


def test_selftest_max_work_raises_the_work_limit(tmp_path: Path) -> None:
    """--max-work lets a vector with more work than the default run (and fail on its output)."""
    path = tmp_path / "costly.jsonl"
    path.write_text(_vector(timeCost=8, memCost=4), encoding="utf-8")
    refused = run("selftest", "--vectors", str(path), "--max-memory", "16KiB")
    assert refused.stdout.splitlines()[-1].endswith(
        "1 refused (over the limits: raise --max-memory or --max-work)"
    )
    ran = run("selftest", "--vectors", str(path), "--max-memory", "16KiB", "--max-work", "1GiB")
    assert ran.exit_code == 1
    assert ran.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_an_empty_pepper_file_is_refused(tmp_path: Path) -> None:
    """An empty --pepper-file is an error, not a silent 'no pepper'."""
    pepper = tmp_path / "pepper"
    pepper.write_bytes(b"")
    for args in (["hash", *TINY], ["verify", PasswordHasher.from_params(CHEAPEST).hash("pw")]):
        result = run(*args, "--pepper-file", str(pepper), "--password-stdin", stdin="pw\n")
        assert result.exit_code == 2
        assert error_of(result) == (
            f"Error: the pepper file {pepper} is empty; a failed deployment of the secret must not "
            "pass unnoticed (leave out --pepper-file for none)"
        )


def _prompt_run(args: list[str], typed: bytes, env: dict[str, str]) -> tuple[int, bytes]:
    """Run twocats on a new pseudo-terminal, answering each password prompt with `typed`."""
    program = shutil.which("twocats")
    assert program is not None
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child process
        os.execve(program, [program, *args], {**os.environ, **env})
    output, answered = b"", 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if output.count(b"Password") + output.count(b"Repeat") > answered:
            os.write(fd, typed + b"\n")
            answered += 1
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), output


C_LOCALE = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def test_hidden_prompt_works_under_a_c_locale() -> None:
    """Under LC_ALL=C an ASCII password typed at the hidden prompt hashes as its bytes."""
    status, output = _prompt_run(["hash", *TINY], b"plain password", C_LOCALE)
    assert status == 0, output
    encoded = output.decode("ascii").split()[-1]
    assert PasswordHasher.from_params(CHEAPEST).verify(encoded, b"plain password")


def test_hidden_prompt_refuses_undecodable_input_clearly() -> None:
    """Under LC_ALL=C a non-ASCII password is refused with one line that says what to do."""
    status, output = _prompt_run(["hash", *TINY], "pässword".encode(), C_LOCALE)
    assert status == 2
    assert output.decode("ascii").splitlines()[-1] == (
        "Error: the password typed is not valid text in the terminal's encoding (ascii); use a "
        "UTF-8 locale (e.g. LC_ALL=C.UTF-8) or --password-stdin"
    )
    assert "pässword".encode() not in output.split(b"\n", 1)[-1]


#: The memory tune may use beyond --max-memory: the interpreter, numpy, numba and the kernels.
TUNE_OVERHEAD = 200 << 20


def test_tune_stays_within_max_memory_plus_its_overhead() -> None:
    """tune's peak resident memory is its --max-memory plus the documented 200 MiB at most."""
    program = shutil.which("twocats")
    assert program is not None
    limit = 256 << 20
    child = subprocess.Popen(
        [program, "tune", "--time", "2s", "--max-memory", "256MiB", "--parallelism", "1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.returncode == 0
    assert json.loads(output)["params"]["memory_bytes"] == limit
    # ru_maxrss is in KiB on Linux.
    assert usage.ru_maxrss * 1024 <= limit + TUNE_OVERHEAD


def test_needs_rehash_names_the_limit_an_upgrade_needs() -> None:
    """needs-rehash suggests the upgrade with the --max-memory its result will need."""
    small = dataclasses.replace(DEFAULT, mem_cost=10, start_mem_cost=10)
    stored = PasswordHasher.from_params(small).hash("pw")
    plain = run("needs-rehash", stored, "--mem-cost", "12")
    assert (plain.stdout, plain.stderr) == (
        "yes\n",
        "it can be upgraded without the password: twocats upgrade HASH --mem-cost 12\n",
    )
    large = run("needs-rehash", stored, "--mem-cost", "21")
    assert large.stderr == (
        "it can be upgraded without the password: twocats upgrade HASH --mem-cost 21 "
        "--max-memory 2048MiB\n"
    )
