"""Commands that run stored or file-supplied parameters keep verify's memory and work limits.

``verify`` accepts exactly what ``PasswordHasher()`` (the default profile) accepts with the same
limits; ``upgrade``, ``needs-rehash`` and ``selftest --vectors`` refuse what ``verify`` refuses,
with the same defaults and messages, and ``upgrade`` refuses an upgrade whose work is over the
limit before it runs; ``hash`` and ``upgrade`` make the user's own parameters and name the options
``verify`` will need; the hidden prompt copes with a non-UTF-8 locale; an empty pepper file is
refused.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import fuzz
from tests.support.terminal import prompt_run
from twocats import phc
from twocats.cli import main
from twocats.cli._limits import verify_limits, verify_options
from twocats.exceptions import HashLimitError
from twocats.kdf.limits import (
    MEMORY_RATIO,
    WORK_RATIO,
    StoredLimits,
    format_size,
    format_work,
)
from twocats.kdf.vectors import load_vectors
from twocats.params import Params
from twocats.password import PasswordHasher, verify_limits_for
from twocats.profiles import CHEAPEST, DEFAULT, SENSITIVE

TINY = ["--profile", "cheapest", "--insecure"]

#: Planted hashes that verify refuses by their work (the issue's time_cost=30 shapes of 2014 and
#: March 2014) and by their memory (4 GiB).
PLANTED_WORK = [planted.decode() for planted in fuzz.planted_hashes()[:2]]
PLANTED_MEMORY = fuzz.planted_hashes()[2].decode()


def run(*args: str, stdin: str | bytes | None = None) -> Result:
    """Invoke the CLI with separate stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=stdin)


def run_program(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """Run the installed twocats program: a gibibyte hashed there is not held by this process."""
    program = shutil.which("twocats")
    assert program is not None
    return subprocess.run(
        [program, *args], input=stdin, capture_output=True, text=True, check=False, timeout=300
    )


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


#: The work limit of 'twocats verify' by default: that of the costliest built-in profile.
DEFAULT_MAX_WORK = int(WORK_RATIO * StoredLimits.relative_to(DEFAULT).work_of(SENSITIVE))

#: The settings a work refusal names, for the planted 2014 shape.
PLANTED_SETTINGS = (
    "hash_type=blake2s, mem_cost=0, time_cost=30, multiplies=0, lanes=8, parallelism=1, "
    "block_size=32, sub_block_size=32"
)


@pytest.mark.parametrize("planted", PLANTED_WORK)
def test_upgrade_of_a_planted_shape_is_refused_at_once(planted: str) -> None:
    """A time_cost=30 shape (2014 and March 2014) upgraded to --mem-cost 1 is one clear line."""
    result = run("upgrade", planted, "--mem-cost", "1")
    assert result.exit_code == 2
    message = error_of(result)
    assert message.startswith("Error: the stored hash is refused: its work is estimated at ")
    assert message.endswith(
        f"more than max_work ({format_work(DEFAULT_MAX_WORK)}, 2.5 times the work of the "
        "sensitive profile)"
    )


def test_upgrade_work_names_the_estimate_and_the_limit() -> None:
    """The 2014 planted hash of the issue is refused with its estimate, settings and limit."""
    params = phc.decode(PLANTED_WORK[0]).params
    work = StoredLimits.relative_to(DEFAULT).work_of(params)
    result = run("upgrade", PLANTED_WORK[0], "--mem-cost", "1")
    assert error_of(result) == (
        f"Error: the stored hash is refused: its work is estimated at {format_work(work)} of CPU "
        f"({PLANTED_SETTINGS}), more than max_work ({format_work(DEFAULT_MAX_WORK)}, "
        f"{WORK_RATIO:g} times the work of the sensitive profile)"
    )


#: A 2014 hash with time_cost=9 at 1 KiB: cheap to verify, costly to upgrade to 1 MiB.
COSTLY_TO_UPGRADE = Params(
    variant="2014",
    mem_cost=0,
    time_cost=9,
    multiplies=0,
    parallelism=1,
    block_size=32,
    sub_block_size=32,
)


def test_an_upgrade_over_the_work_limit_is_refused_before_it_runs() -> None:
    """A stored hash verify accepts, whose upgrade would cost too much, is refused at once."""
    stored = phc.encode(COSTLY_TO_UPGRADE, bytes(16), bytes(32))
    verify_limits(None).check(COSTLY_TO_UPGRADE)
    target = dataclasses.replace(COSTLY_TO_UPGRADE, mem_cost=10)
    limits = verify_limits(None)
    work = limits.work_of(target, old_mem_cost=0)
    assert work > limits.max_work
    result = run("upgrade", stored, "--mem-cost", "10")
    assert result.exit_code == 2
    assert error_of(result) == (
        f"Error: the upgrade is refused: its work is estimated at {format_work(work)} of CPU "
        f"({PLANTED_SETTINGS.replace('mem_cost=0, time_cost=30', 'mem_cost=10, time_cost=9')}), "
        f"more than max_work ({format_work(limits.max_work)}, {limits.work_basis})"
    )
    raised = run("upgrade", stored, "--mem-cost", "10", "--max-work", "1ms")
    assert error_of(raised).endswith("more than max_work (0.001 s, set by the caller)")


def test_the_upgrade_target_is_not_held_to_verify_memory_limit() -> None:
    """An upgrade to more memory than --max-memory runs: the target is the user's own choice."""
    stored = PasswordHasher.from_params(CHEAPEST).hash("pw")
    result = run("upgrade", stored, "--mem-cost", "3", "--max-memory", "4KiB", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["mem_cost"], document["verify_options"]) == (3, [])
    assert PasswordHasher.from_params(dataclasses.replace(CHEAPEST, mem_cost=3)).verify(
        document["hash"], "pw"
    )
    assert result.stderr == ""


def test_hash_of_the_sensitive_profile_verifies_without_options() -> None:
    """hash --profile sensitive works, and verify accepts it as it is (a built-in profile)."""
    memory, _ = verify_limits_for(SENSITIVE)
    assert memory == verify_limits(None).max_memory
    made = run_program("hash", "--profile", "sensitive", "--password-stdin", "--json", stdin="pw\n")
    assert made.returncode == 0, made.stderr
    document = json.loads(made.stdout)
    assert (document["verify_options"], made.stderr) == ([], "")
    verified = run_program("verify", document["hash"], "--password-stdin", stdin="pw\n")
    assert (verified.returncode, verified.stdout) == (0, "OK\n"), verified.stderr
    larger = phc.encode(dataclasses.replace(SENSITIVE, mem_cost=21), bytes(16), bytes(32))
    refused = run("verify", larger, "--password-stdin", stdin="pw\n")
    assert refused.exit_code == 2
    assert error_of(refused) == (
        f"Error: the stored hash is refused: mem_cost=21 needs 2 GiB of work memory ({2 * memory} "
        f"bytes), more than max_memory (1 GiB, {memory} bytes)"
    )


def test_verify_options_name_max_work_where_memory_is_not_enough() -> None:
    """A shape costlier per byte than the default profile (small blocks) needs --max-work too."""
    params = Params(mem_cost=21, lanes=4, block_size=256, parallelism=1)
    memory, work = verify_limits_for(params)
    options = verify_options(params)
    assert options == ["--max-memory", f"{memory >> 20}MiB", "--max-work", f"{-(-work // 10**6)}ms"]
    verify_limits(memory, -(-work // 10**6) * 10**6).check(params)
    with pytest.raises(HashLimitError):
        verify_limits(memory).check(params)


def test_verify_accepts_exactly_what_the_default_hasher_accepts() -> None:
    """verify's limits are those of PasswordHasher() with the same max_memory and max_work."""
    for max_memory, max_work in ((None, None), (1 << 30, None), (None, 10**9), (1 << 30, 10**9)):
        hasher = PasswordHasher.from_params(DEFAULT, max_memory=max_memory, max_work=max_work)
        assert verify_limits(max_memory, max_work) == hasher.limits


def test_verify_limits_below_the_default_profile_are_a_usage_error() -> None:
    """verify --max-memory below the default profile's own memory says why it is refused."""
    stored = PasswordHasher.from_params(CHEAPEST).hash("pw")
    result = run("verify", stored, "--max-memory", "4MiB", "--password-stdin", stdin="pw\n")
    assert result.exit_code == 2
    assert error_of(result) == (
        f"Error: mem_cost=18 needs 256 MiB of work memory ({DEFAULT.memory_bytes} bytes), more "
        "than max_memory (4 MiB, 4194304 bytes); the limits of 'twocats verify' cannot be below "
        "the default profile's own memory and work"
    )


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
    assert lines[0].startswith(
        "REFUSED planted (2014 extended blake2s): the vector is refused: its work is estimated at "
    )
    assert lines[0].endswith(
        f"more than max_work ({format_work(DEFAULT_MAX_WORK)}, 2.5 times the work of the "
        "sensitive profile)"
    )
    assert lines[1:] == [
        (
            "REFUSED huge (2014 extended blake2s): the vector is refused: mem_cost=22 needs 4 GiB "
            "of work memory (4294967296 bytes), more than max_memory (1 GiB, 1073741824 bytes)"
        ),
        "0 passed, 0 failed, 2 refused (over the limits: raise --max-memory or --max-work)",
    ]
    document = json.loads(
        run("selftest", "--vectors", str(path), "--backend", "reference", "--json").stdout
    )
    assert (document["refused"], len(document["refusals"])) == (2, 2)


def test_selftest_max_work_sets_the_work_limit(tmp_path: Path) -> None:
    """--max-work refuses a vector over it, and a larger one lets it run (and fail its output)."""
    path = tmp_path / "costly.jsonl"
    path.write_text(_vector(timeCost=8, memCost=4), encoding="utf-8")
    ((params, old_mem_cost),) = load_vectors(path)[0].derivations()
    work = verify_limits(None).work_of(params, old_mem_cost=old_mem_cost)
    below = f"{work // 1000 - 1}us"
    refused = run("selftest", "--vectors", str(path), "--max-work", below)
    assert refused.stdout.splitlines()[-1].endswith(
        "1 refused (over the limits: raise --max-memory or --max-work)"
    )
    ran = run("selftest", "--vectors", str(path), "--max-work", f"{work // 1000 + 1}us")
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


C_LOCALE = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def test_hidden_prompt_works_under_a_c_locale() -> None:
    """Under LC_ALL=C an ASCII password typed at the hidden prompt hashes as its bytes."""
    status, output = prompt_run(["hash", *TINY], b"plain password\n", C_LOCALE)
    assert status == 0, output
    encoded = output.decode("ascii").split()[-1]
    assert PasswordHasher.from_params(CHEAPEST).verify(encoded, b"plain password")


def test_hidden_prompt_refuses_undecodable_input_clearly() -> None:
    """Under LC_ALL=C a non-ASCII password is refused with one line that says what to do."""
    status, output = prompt_run(["hash", *TINY], "pässword\n".encode(), C_LOCALE)
    assert status == 2
    assert output.decode("ascii").splitlines()[-1] == (
        "Error: the password typed is not valid text in the terminal's encoding (ascii); use a "
        "UTF-8 locale (e.g. LC_ALL=C.UTF-8) or --password-stdin"
    )
    assert "pässword".encode() not in output.split(b"\n", 1)[-1]


#: The memory tune may use beyond --max-memory: the interpreter, numpy, numba and the kernels.
TUNE_OVERHEAD = 200 << 20


#: Runs the CLI, then writes the process's own peak resident memory (VmHWM, KiB) to ``argv[1]``.
#: A child's ``ru_maxrss`` would not do: Linux starts it at the forking test process's own peak.
PEAK_REPORTING_CHILD = """
import sys
from pathlib import Path

from twocats.cli import main

try:
    main(sys.argv[2:])
finally:
    status = Path("/proc/self/status").read_text().splitlines()
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    Path(sys.argv[1]).write_text(peak)
"""


def test_tune_stays_within_max_memory_plus_its_overhead(tmp_path: Path) -> None:
    """tune's peak resident memory is --concurrent work areas plus the documented 200 MiB."""
    limit = 256 << 20
    concurrent = 2
    peak_file = tmp_path / "peak"
    args = ["tune", "--time", "2s", "--max-memory", "256MiB", "--parallelism", "1"]
    args += ["--concurrent", str(concurrent), "--json"]
    result = subprocess.run(
        [sys.executable, "-c", PEAK_REPORTING_CHILD, str(peak_file), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["params"]["memory_bytes"] == limit
    assert int(peak_file.read_text()) * 1024 <= concurrent * limit + TUNE_OVERHEAD


def test_needs_rehash_names_the_limits_an_upgrade_needs() -> None:
    """needs-rehash suggests the upgrade with the limit options it needs, and only those."""
    small = dataclasses.replace(DEFAULT, mem_cost=10, start_mem_cost=10)
    stored = PasswordHasher.from_params(small).hash("pw")
    plain = run("needs-rehash", stored, "--mem-cost", "12")
    assert (plain.stdout, plain.stderr) == (
        "yes\n",
        "it can be upgraded without the password: twocats upgrade HASH --mem-cost 12\n",
    )
    # The upgrade's memory is the target's own: an ordinary hash needs no option for it.
    large = run("needs-rehash", stored, "--mem-cost", "21")
    assert large.stderr == (
        "it can be upgraded without the password: twocats upgrade HASH --mem-cost 21\n"
    )
    given = run("needs-rehash", stored, "--mem-cost", "12", "--max-memory", "1GiB")
    assert given.stderr == (
        "it can be upgraded without the password: twocats upgrade HASH --mem-cost 12 "
        "--max-memory 1024MiB\n"
    )


def test_needs_rehash_names_the_max_work_a_costly_upgrade_needs() -> None:
    """An upgrade over the work limit is suggested with the --max-work that lets it run."""
    stored = phc.encode(COSTLY_TO_UPGRADE, bytes(16), bytes(32))
    current = ["--variant", "2014", "--time-cost", "9", "--multiplies", "0", "--parallelism", "1"]
    shape = ["--block-size", "32", "--sub-block-size", "32", "--mem-cost", "10"]
    target = dataclasses.replace(COSTLY_TO_UPGRADE, mem_cost=10)
    limits = StoredLimits.relative_to(DEFAULT, max_memory=2 * DEFAULT.memory_bytes)
    work = limits.work_of(target, old_mem_cost=0)
    result = run("needs-rehash", stored, *current, *shape, "--salt-len", "16")
    assert result.stdout == "yes\n", result.output
    assert result.stderr == (
        "it can be upgraded without the password: twocats upgrade HASH --mem-cost 10 "
        f"--max-work {-(-work // 10**6)}ms\n"
    )


def test_an_ordinary_hash_upgrades_to_a_large_memory_cost() -> None:
    """upgrade --mem-cost 20 of an ordinary hash runs, and verify then accepts it as it is."""
    small = dataclasses.replace(DEFAULT, mem_cost=10, start_mem_cost=10)
    stored = PasswordHasher.from_params(small).hash("pw")
    result = run_program("upgrade", stored, "--mem-cost", "20", "--json", stdin="")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert (document["mem_cost"], document["verify_options"]) == (20, [])
    verified = run_program("verify", document["hash"], "--password-stdin", stdin="pw\n")
    assert (verified.returncode, verified.stdout) == (0, "OK\n"), verified.stderr


@pytest.mark.parametrize("command", ["verify", "upgrade", "needs-rehash", "selftest"])
def test_limit_options_show_the_real_defaults(command: str) -> None:
    """--max-memory and --max-work help give the defaults computed from the library's ratios."""
    default = verify_limits(None)
    # Help text is wrapped to the terminal, at spaces and after hyphens.
    text = " ".join(run(command, "--help").stdout.split()).replace(
        "default- profile", "default-profile"
    )
    assert (
        f"(default: {format_size(SENSITIVE.memory_bytes)}, the memory of the largest built-in "
        f"profile, or {MEMORY_RATIO:g} times that of the default profile where that is more)"
    ) in text
    assert (
        f"(default: {format_work(default.max_work)}, {WORK_RATIO:g} times the work of the "
        "costliest built-in profile, or of a default-profile hash at --max-memory where that is "
        "more)"
    ) in text


def test_needs_rehash_checks_a_target_larger_than_this_machine() -> None:
    """needs-rehash only compares, so a production target beyond this machine's memory works."""
    stored = PasswordHasher.from_params(CHEAPEST).hash("pw")
    for target in (["--mem-cost", "28"], [*TINY, "--mem-cost", "28"]):
        result = run("needs-rehash", stored, *target, "--json")
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        assert (document["needs_rehash"], document["can_upgrade"]) == (True, True)
