"""The CLI as a newcomer meets it: no input that silently means something else, help that tells
the real ranges, JSON errors, tune that says why and how to use its answer, compare that checks
its options before measuring.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from twocats import phc
from twocats._extras import install_hint
from twocats.cli import main
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.perf import compare as perf_compare
from twocats.perf.tune import Trial, final_check, fitted_choice, search
from twocats.profiles import CHEAPEST

TINY = ["--profile", "cheapest", "--insecure"]


def run(*args: str, stdin: str | bytes | None = None) -> Result:
    """Invoke the CLI with separate stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=stdin)


def error_of(result: Result) -> str:
    """The one Error: line on stderr."""
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- input that silently meant something else -------------------------------------------------


def test_the_cheapest_profile_needs_insecure() -> None:
    """--profile cheapest is refused with the reason unless --insecure says it is meant."""
    refused = run("hash", "--profile", "cheapest", "--password-stdin", stdin="pw\n")
    assert refused.exit_code == 2
    assert error_of(refused) == (
        "Error: the cheapest profile offers no protection at all and is meant for tests; pass "
        "--insecure to use it anyway"
    )
    assert run("hash", *TINY, "--password-stdin", stdin="pw\n").exit_code == 0


@pytest.mark.parametrize("command", ["hash", "verify", "derive"])
def test_an_empty_password_needs_allow_empty(command: str) -> None:
    """A bare newline on standard input is refused unless --allow-empty is given."""
    args = {
        "hash": ["hash", *TINY],
        "verify": ["verify", PasswordHasher.from_params(CHEAPEST).hash(b"")],
        "derive": ["derive", *TINY, "--salt", "salty salt"],
    }[command]
    refused = run(*args, "--password-stdin", stdin="\n")
    assert refused.exit_code == 2
    assert error_of(refused) == (
        "Error: the password is empty (a bare newline on standard input?); pass --allow-empty "
        "if an empty password is really meant"
    )
    assert run(*args, "--password-stdin", "--allow-empty", stdin="\n").exit_code == 0


def test_more_input_after_the_first_line_is_named() -> None:
    """hunter2 then a second line verifies as hunter2, and stderr says the rest was ignored."""
    stored = PasswordHasher.from_params(CHEAPEST).hash("hunter2")
    result = run("verify", stored, "--password-stdin", stdin="hunter2\nsecond\n")
    assert result.exit_code == 0
    assert result.stderr == (
        "note: more input follows the first line of standard input; only the first line is the "
        "password\n"
    )
    alone = run("verify", stored, "--password-stdin", stdin="hunter2\n")
    assert alone.stderr == ""


def test_a_hash_with_a_trailing_newline_names_the_newline() -> None:
    """A stored hash pasted with its newline gets a hint about the newline."""
    stored = PasswordHasher.from_params(CHEAPEST).hash("pw")
    result = run("verify", stored + "\n", "--password-stdin", stdin="pw\n")
    assert result.exit_code == 2
    assert error_of(result).endswith(
        "; HASH starts or ends with a space or a line break (copied with the newline?)"
    )


def test_a_hash_mangled_by_double_quotes_names_the_quoting() -> None:
    """A hash whose $ fields the shell expanded gets a hint about single quotes."""
    stored = PasswordHasher.from_params(CHEAPEST).hash("pw")
    # What bash leaves of "$twocats$v=2015$m=0,..." inside double quotes: every $name is empty.
    mangled = "=" + "=".join(stored.split("=")[1:]).replace("$", "")
    for command in (
        ["verify", mangled, "--password-stdin"],
        ["upgrade", mangled, "--mem-cost", "3"],
    ):
        result = run(*command, stdin="pw\n")
        assert result.exit_code == 2
        assert error_of(result).endswith(
            "; HASH has no $ signs: inside double quotes the shell replaces $v, $m and the like "
            "by (empty) variables; put HASH in single quotes"
        )


@pytest.mark.parametrize(
    ("algorithm", "checked_with", "hint"),
    [
        # b2sum's default digest has the length of SHA-512's; both are named.
        ("blake2b", "sha256", "its digests have the length of -a sha512 or -a blake2b; pass "),
        (
            "sha256",
            "blake2b",
            "its digests have the length of -a sha256 or -a blake2b-256 or -a blake2s; pass ",
        ),
    ],
)
def test_a_checksum_file_of_another_algorithm_names_the_option(
    tmp_path: Path, algorithm: str, checked_with: str, hint: str
) -> None:
    """sum --check of a file written with another algorithm names the -a options that fit it."""
    data = tmp_path / "data.txt"
    data.write_bytes(b"abc")
    sums = tmp_path / "SUMS"
    sums.write_bytes(run("sum", "-a", algorithm, str(data)).stdout_bytes)
    result = run("sum", "-a", checked_with, "--check", str(sums))
    assert result.exit_code == 1
    assert result.stderr == (
        f"twocats sum: {sums}: no properly formatted checksum lines found\n"
        f"twocats sum: {sums}: {hint}the one that made the file\n"
    )
    assert run("sum", "-a", algorithm, "--check", str(sums)).stdout.endswith(": OK\n")


def test_a_checksum_file_of_no_known_algorithm_gets_no_hint(tmp_path: Path) -> None:
    """Lines that fit no algorithm get the plain message, with no -a suggestion."""
    sums = tmp_path / "SUMS"
    sums.write_bytes(b"not a checksum line\n")
    result = run("sum", "--check", str(sums))
    assert result.exit_code == 1
    assert result.stderr == f"twocats sum: {sums}: no properly formatted checksum lines found\n"


# -- small things -------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["hash", "derive", "needs-rehash"])
def test_help_shows_the_real_ranges(command: str) -> None:
    """Parameter options show the bounds table's ranges, not click's [x>=0]."""
    text = run(command, "--help").stdout
    assert "x>=0" not in text
    for option, shown in (("--lanes", "1-16"), ("--parallelism", "1-255"), ("--mem-cost", "0-30")):
        assert f"{option} {shown}" in text


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["hash", "--lanes", "3", "--json"], 2, "lanes must be a power of two"),
        (["hash", "--json", "--time-cost", "x"], 2, "is not a valid integer"),
        (["verify", "not-a-hash", "--json"], 2, "not a twocats hash"),
    ],
)
def test_json_failures_write_an_error_document(args: list[str], status: int, message: str) -> None:
    """A failing command asked for --json writes one JSON error document on stdout."""
    result = run(*args, "--password-stdin", stdin="pw\n")
    assert result.exit_code == status
    document = json.loads(result.stdout)
    assert document["exit_status"] == status
    assert message in document["error"]


def test_selftest_names_a_record_without_id_once(tmp_path: Path) -> None:
    """A record without an id is named by its file and line, not twice over."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"hash_type": "blake2s"}\n', encoding="utf-8")
    result = run("selftest", "--vectors", str(path))
    assert result.exit_code == 2
    assert error_of(result) == "Error: bad.jsonl, line 1: missing field 'output_hex'"


def test_hash_json_reports_start_up_apart() -> None:
    """hash --json gives the hash's own seconds and the start-up (kernel loading) apart."""
    result = run("hash", *TINY, "--password-stdin", "--json", stdin="pw\n")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["seconds"] > 0
    assert document["startup_seconds"] > 0


# -- tune ---------------------------------------------------------------------------------------


def test_tune_says_why_and_how_to_use_the_result() -> None:
    """tune explains its hash and lanes and prints the CLI flag and Python settings that work."""
    options = ["--time", "5s", "--max-memory", "2MiB", "--parallelism", "1", "--concurrent", "1"]
    result = run("tune", *options)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    why = [line for line in lines if line.startswith("Why:")]
    assert why
    assert "the default profile uses blake2s with 8 lanes" in result.stdout
    prefix = next(line for line in lines if line.startswith("PHC prefix:")).split()[-1]
    assert f"Use it:       twocats hash --params '{prefix}'" in lines
    # The settings stand alone between the Settings line and the Use it line, to be pasted.
    start = next(index for index, line in enumerate(lines) if line.startswith("Settings:"))
    end = lines.index(f"Use it:       twocats hash --params '{prefix}'")
    namespace: dict[str, object] = {}
    exec("\n".join(lines[start + 2 : end]), namespace)
    hasher = namespace["hasher"]
    assert isinstance(hasher, PasswordHasher)
    assert hasher.params == phc.decode_params(prefix)
    assert (hasher.max_concurrency, hasher.timeout) == (1, 5.0)


def _trial(multiplies: int, seconds: float) -> Trial:
    return Trial(Params(mem_cost=10, multiplies=multiplies, lanes=8, parallelism=1), seconds)


def test_one_noisy_timing_does_not_move_the_multiplies() -> None:
    """The multiplies follow a line fitted through every timing, not one lucky or unlucky run."""
    steady = [_trial(x, 0.1 + 0.02 * x) for x in range(2, 9)]
    # 0.1 + 0.02 x fits 0.2 up to x = 5 (0.2 itself).
    assert fitted_choice(steady, 0.2).params.multiplies == 5
    lucky = [*steady[:4], _trial(6, 0.15), *steady[5:]]
    assert fitted_choice(lucky, 0.2).params.multiplies == 5
    unlucky = [*steady[:3], _trial(5, 0.4), *steady[4:]]
    assert fitted_choice(unlucky, 0.2).params.multiplies == 5


def test_one_noisy_memory_timing_does_not_move_the_memory() -> None:
    """A candidate memory timed 40% slow once is still judged by the line through all timings."""
    base = Params(mem_cost=10, multiplies=2, lanes=8, parallelism=2)

    def measure(params: Params, spike: int | None) -> float:
        seconds = params.memory_bytes / 3e9 * (1 + 0.1 * params.multiplies)
        return seconds * 1.4 if params.mem_cost == spike and params.multiplies == 2 else seconds

    steady, _, _ = search(base, 0.25, 1 << 40, lambda p: measure(p, None), lambda _: None)
    noisy, _, _ = search(base, 0.25, 1 << 40, lambda p: measure(p, 19), lambda _: None)
    assert steady.params.mem_cost == noisy.params.mem_cost == 19


def test_the_final_check_steps_down_until_within_budget() -> None:
    """A choice that misses the budget twice in its final check is stepped down and timed."""
    timed: list[Params] = []

    def measure(params: Params) -> float:
        timed.append(params)
        return 0.05 * (1 + params.multiplies) * (params.memory_bytes / (1 << 20))

    start = Params(mem_cost=11, multiplies=3, lanes=8, parallelism=1)
    params, seconds, steps = final_check(start, 0.2, measure)
    assert (params.mem_cost, params.multiplies, steps) == (11, 1, 2)
    assert seconds <= 0.2
    assert [p.multiplies for p in timed] == [3, 3, 2, 2, 1]


def test_a_final_check_disturbed_once_is_taken_again_and_kept() -> None:
    """A miss that a second timing does not repeat keeps the parameters, judged by that timing."""
    timings = iter([0.3, 0.15])
    params = Params(mem_cost=11, multiplies=3, lanes=8, parallelism=1)
    assert final_check(params, 0.2, lambda _: next(timings)) == (params, 0.15, 0)


# -- compare ------------------------------------------------------------------------------------


def test_compare_plot_without_matplotlib_fails_before_measuring(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--plot without matplotlib is refused at once: nothing is measured and nothing is lost."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    measured: list[str] = []

    def measure(*args: object) -> None:
        measured.append("twocats")
        raise AssertionError("measured before checking --plot")

    monkeypatch.setattr(perf_compare, "run_comparison", measure)
    result = run("compare", "--mem-cost", "10", "--plot", str(tmp_path / "c.png"))
    assert result.exit_code == 2
    assert error_of(result) == f"Error: --plot needs matplotlib ({install_hint('bench')})"
    assert measured == []


def test_compare_plot_into_a_missing_folder_fails_before_measuring(tmp_path: Path) -> None:
    """A --plot path whose folder does not exist is refused before any measuring."""
    target = tmp_path / "missing" / "c.png"
    result = run("compare", "--mem-cost", "10", "--plot", str(target))
    assert result.exit_code == 2
    assert error_of(result) == f"Error: --plot: cannot write into the folder {target.parent}"
    assert "equal memory" not in result.stderr
