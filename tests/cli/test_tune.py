"""tune and compare: the search logic on a model machine, option parsing, and real smoke runs."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from twocats import phc, profiles
from twocats.cli import main
from twocats.cli._options import DURATION, SIZE
from twocats.cli.tune import fit_notes
from twocats.params import Params
from twocats.perf.tune import Trial, lanes_for_isa, search


@pytest.mark.parametrize(
    ("isa", "lanes"),
    [
        ("AVX-512 (znver4)", 16),
        ("AVX-512 (skylake-avx512, 256-bit preferred)", 8),
        ("AVX2 (haswell)", 8),
        ("AVX (sandybridge)", 8),
        ("SSE4.2 (nehalem)", 4),
        ("SSE2 (x86-64)", 4),
        ("none (scalar backend)", 8),
        ("baseline of generic", 8),
    ],
)
def test_lanes_follow_vector_width(isa: str, lanes: int) -> None:
    """One 32-bit lane per vector element: 16 for 512-bit registers, 8 for 256, 4 for 128."""
    assert lanes_for_isa(isa) == lanes


def model(rate: float = 4e9) -> tuple[list[Params], Callable[[Params], float]]:
    """Return a record of measured parameters and a deterministic timing model of a machine."""
    measured: list[Params] = []

    def measure(params: Params) -> float:
        measured.append(params)
        repeats = 1 + 0.25 * ((1 << (params.time_cost or 0)) - 1)
        return params.memory_bytes / rate * (1 + 0.1 * params.multiplies) * repeats

    return measured, measure


BASE = Params(mem_cost=10, multiplies=2, lanes=8, parallelism=2)


def quiet(_: Trial) -> None:
    """Discard the progress report."""


def test_search_fills_time_budget() -> None:
    """The largest memory within the budget is chosen, then the multiplies fill the rest."""
    measured, measure = model(rate=3e9)
    best, limit, trials = search(BASE, 0.25, 1 << 40, measure, quiet)
    # 512 MiB at 3 GB/s is 0.179 s times 1 + 0.1 per multiply: 3 multiplies fit, 4 do not, and
    # 1 GiB (0.43 s with 2 multiplies) is not even tried.
    assert (best.params.mem_cost, best.params.multiplies) == (19, 3)
    assert max(params.mem_cost for params in measured) == 19
    assert limit == "time"
    assert [trial.params for trial in trials] == measured


def test_search_respects_memory_limit() -> None:
    """With a small --max-memory the memory stops at the limit and compute fills the time."""
    _, measure = model()
    best, limit, _ = search(BASE, 0.25, 64 << 20, measure, quiet)
    assert best.params.memory_bytes == 64 << 20
    assert limit == "memory"
    assert best.params.multiplies == 8


def test_search_tunes_time_cost() -> None:
    """The 2014 variant spends the time left after the multiplies on time_cost."""
    _, measure = model()
    base = Params(variant="2014", mem_cost=10, lanes=8)
    best, _, _ = search(base, 0.25, 16 << 20, measure, quiet)
    assert best.params.multiplies == 8
    # 16 MiB with 8 multiplies takes 7.5 ms; 2**7 repeats of the last quarter make 0.247 s.
    assert best.params.time_cost == 7


def test_search_sheds_multiplies_when_too_slow() -> None:
    """When even the smallest memory is over budget the multiply chain is shortened."""
    _, measure = model(rate=1e6)
    best, _, _ = search(BASE, 1.1, 1 << 30, measure, quiet)
    assert best.params.mem_cost == 10
    assert best.params.multiplies == 0


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1GiB", 1 << 30),
        ("512MiB", 512 << 20),
        ("64M", 64 << 20),
        ("2GB", 2 * 10**9),
        ("4096", 4096),
    ],
)
def test_size_option(text: str, value: int) -> None:
    """Sizes accept binary and decimal units."""
    assert SIZE.convert(text, None, None) == value


@pytest.mark.parametrize(("text", "value"), [("250ms", 0.25), ("0.5s", 0.5), ("800us", 0.0008)])
def test_duration_option(text: str, value: float) -> None:
    """Durations need a unit."""
    assert DURATION.convert(text, None, None) == pytest.approx(value)


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        (DURATION, "250", "expected a duration with a unit, such as 250ms or 0.5s"),
        (DURATION, "1 hour", "expected a duration with a unit, such as 250ms or 0.5s"),
        (DURATION, "-5ms", "a duration must be positive"),
        (DURATION, "9" * 400 + "s", "the duration is too long"),
        (DURATION, "0s", "a duration must be positive"),
        (SIZE, "1 parsec", "expected a size such as 1GiB, 512MiB or 2GB"),
        (SIZE, "GiB", "expected a size such as 1GiB, 512MiB or 2GB"),
        (SIZE, "0", "a size must be positive"),
        (SIZE, "-1GiB", "a size must be positive"),
        (SIZE, "9" * 400 + "GiB", "the size is too large"),
    ],
)
def test_size_and_duration_options_reject(kind: click.ParamType, text: str, message: str) -> None:
    """Durations without a unit, unknown size units and values not positive are usage errors."""
    with pytest.raises(click.BadParameter) as caught:
        kind.convert(text, None, None)
    assert caught.value.message == message


def test_tune_smoke() -> None:
    """A real tune run with a roomy budget reports consistent parameters and a PHC prefix."""
    started = time.perf_counter()
    options = ["--time", "5s", "--max-memory", "2MiB", "--parallelism", "1", "--lanes", "8"]
    result = CliRunner().invoke(main, ["tune", *options, "--concurrent", "1", "--json"])
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    params = phc.decode_params(document["phc_prefix"])
    assert params.memory_bytes <= 2 << 20
    assert params.parallelism == 1
    assert document["params"]["mem_cost"] == params.mem_cost
    assert document["params"]["memory_bytes"] == params.memory_bytes
    # Durations measured inside the run lie within the run (a consistency check, not a speed one).
    assert 0 < document["verify_seconds"] < elapsed
    trials = document["trials"]
    assert {tuple(sorted(trial)) for trial in trials} == {
        ("mem_cost", "multiplies", "seconds", "time_cost")
    }
    assert all(0 < trial["seconds"] < elapsed for trial in trials)
    assert document["fits"][0].startswith("Django: fits its 128-character password column")
    assert document["fits"][1] == "twocats verify: within its default limits"
    assert "below 64 MiB, the least memory the docs recommend" in document["warnings"][0]
    assert "core" in document["warnings"][0]
    assert document["settings"]["for"] is None
    assert [item["where"] for item in document["settings"]["files"]] == ["Python"]


def test_tune_human_output() -> None:
    """Without --json tune prints the parameters, the prefix, the measurement and the settings."""
    options = ["--time", "5s", "--max-memory", "1MiB", "--lanes", "8", "--concurrent", "1"]
    result = CliRunner().invoke(main, ["tune", *options])
    assert result.exit_code == 0, result.output
    assert "PHC prefix:   $twocats$v=2015$" in result.stdout
    assert "Measured:     1 at once: 95th percentile " in result.stdout
    assert "Fits:         Django: fits its 128-character password column" in result.stdout
    assert "Warning:      1 MiB is below 64 MiB" in result.stdout
    assert "Settings:     paste into the code that makes the hasher:" in result.stdout
    assert "hasher = PasswordHasher.from_params(" in result.stdout
    # Singular where one is meant.
    assert "Question:     1 verification at once within " in result.stdout
    # Without a terminal, progress comes as lines on standard error, the first one at once.
    assert "tuning: tried mem_cost" in result.stderr


@pytest.mark.parametrize(
    ("params", "fits", "warned"),
    [
        (
            Params(mem_cost=21, hash_type="blake2b", lanes=16),
            [
                "Django: does not fit its 128-character password column",
                "twocats verify (and a server with the default profile) needs --max-memory 2048MiB",
            ],
            False,
        ),
        (profiles.INTERACTIVE, ["Django: fits", "twocats verify: within its default"], False),
        (
            dataclasses.replace(profiles.INTERACTIVE, mem_cost=12, start_mem_cost=12),
            ["Django: fits"],
            True,
        ),
    ],
)
def test_fit_notes_say_where_a_recommendation_fits(
    params: Params, fits: list[str], warned: bool
) -> None:
    """tune's notes name Django's column, verify's limits and the options that raise them."""
    notes, warnings = fit_notes(params)
    for note, start in zip(notes, fits, strict=False):
        assert note.startswith(start), note
    assert bool(warnings) == warned


def test_tune_bad_options() -> None:
    """Bad tune options are usage errors naming the option."""
    runner = CliRunner()
    fast = runner.invoke(main, ["tune", "--time", "fast"])
    assert fast.exit_code == 2
    assert "Invalid value for '--time'" in fast.stderr
    zero = runner.invoke(main, ["tune", "--parallelism", "0"])
    assert zero.exit_code == 2
    assert zero.stderr == "Error: --parallelism must be auto or a number from 1 to 255\n"
    tiny = runner.invoke(main, ["tune", "--max-memory", "64KiB"])
    assert tiny.exit_code == 2
    assert "smallest useful memory" in tiny.stderr


#: The rows of compare: both comparisons, with the algorithms each one measures.
COMPARE_ROWS = [
    ("equal memory", "twocats"),
    ("equal memory", "twocats-fresh-memory"),
    ("equal memory", "argon2id"),
    ("equal memory", "scrypt"),
    ("equal time", "twocats"),
    ("equal time", "argon2id"),
    ("equal time", "scrypt"),
]

#: TwoCats at 1 MiB on one thread, and a comparison of two rounds at most.
COMPARE_CHEAP = ["--mem-cost", "10", "--parallelism", "1", "--min-rounds", "2"]


def test_compare_smoke(tmp_path: Path) -> None:
    """A real compare run at 1 MiB gives both comparisons of all three algorithms and a PNG."""
    plot = tmp_path / "compare.png"
    started, cpu_started = time.perf_counter(), time.process_time()
    result = CliRunner().invoke(
        main, ["compare", *COMPARE_CHEAP, "--time-limit", "1ms", "--json", "--plot", str(plot)]
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    rows = document["rows"]
    assert [(row["comparison"], row["algorithm"]) for row in rows] == COMPARE_ROWS
    assert all(row["memory_bytes"] == 1 << 20 for row in rows[:4])
    assert rows[0]["parameters"] == "blake2s,m=10,l=8,p=1,x=3"
    assert document["phc_prefix"] == "$twocats$v=2015$m=10,x=3,p=1"
    # Each measured time lies within the whole run, wall clock and CPU alike.
    assert all(0 < row["seconds"] < elapsed for row in rows)
    assert all(0 <= row["cpu_seconds"] <= cpu for row in rows)
    # The time limit passed during the calibration: two rounds, the fewest there are.
    assert document["runs"] == 2
    equal_time = document["equal_time"]
    assert equal_time["rounds"] == 2
    assert equal_time["low"] <= equal_time["ratio"] <= equal_time["high"]
    assert equal_time["argon2id_memory_bytes"] % 1024 == 0
    assert equal_time["reached"] == (equal_time["half_width"] <= 0.1)
    assert (document["busy"] is None) == equal_time["reached"]
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_compare_human_output() -> None:
    """Without --json compare prints one aligned table and the equal-time ratio's interval."""
    result = CliRunner().invoke(main, ["compare", *COMPARE_CHEAP, "--time-limit", "1ms"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert lines[0].split() == [
        "comparison", "algorithm", "parameters", "time", "ms", "range", "of", "2", "ms", "CPU",
        "ms", "memory", "MiB", "filled", "GiB/s",
    ]  # fmt: skip
    rows = [line.split() for line in lines[1:8]]
    assert [(" ".join(row[:2]), row[2]) for row in rows] == COMPARE_ROWS
    assert [row[-2] for row in rows[:4]] == ["1.0"] * 4
    assert rows[2][3] == "t=1,m=1024,p=1"
    assert rows[3][3] == "N=2^10,r=8,p=1"
    for row in rows:
        low, high = (float(value) for value in row[5].split("-"))
        assert low <= float(row[4]) <= high, row
        assert all(float(value) >= 0 for value in row[6:]), row
    start = lines[0].index("algorithm")
    assert all(line[start:].startswith(row[2]) for line, row in zip(lines[1:8], rows, strict=True))
    assert lines[8].startswith("Equal time: TwoCats fills ")
    assert "x the memory argon2id fills in the same CPU time (95% interval " in lines[8]
    assert "2 interleaved rounds in " in lines[8]
    assert lines[9].lstrip().startswith("by the wall clock ")
    assert "{" not in result.stdout
    assert result.stderr.startswith("comparing $twocats$v=2015$m=10,x=3,p=1 with argon2id")


def test_the_reasons_say_what_was_given_and_what_was_chosen() -> None:
    """Lanes and threads given are named as given; chosen ones say why."""
    from twocats.cli.tune import choice_reasons

    params = Params(mem_cost=10, lanes=8, parallelism=1)
    chosen = choice_reasons("AVX-512 (znver4)", params, 8)
    assert chosen[0].startswith("lanes 8: Django's 128-character password column holds 32-byte")
    assert chosen[2].endswith("shared by 8 verifications at once")
    given = choice_reasons("AVX2 (haswell)", params, 1, lanes_given=True, parallelism_given=True)
    assert given[0] == "lanes 8: as given by --lanes"
    assert given[2] == "parallelism 1: as given by --parallelism"
