"""tune for a server: N verifications at once stay within the server's memory, and are measured."""

from __future__ import annotations

import json
import re
import time

from click.testing import CliRunner

from twocats import phc
from twocats._machine import usable_cpus
from twocats.cli import main
from twocats.perf.tune import FINAL_VERIFICATIONS, per_verification_memory, start_params


def _tune(*options: str) -> tuple[dict[str, object], float]:
    """Run tune --json with `options`; return its document and the run's wall-clock time."""
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["tune", "--lanes", "8", *options, "--json"])
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), elapsed


def test_eight_at_once_stay_within_the_server_memory_and_are_measured() -> None:
    """8 at once within 64 MiB: 8 x memory within it, and the final check measured 8 at once."""
    document, elapsed = _tune("--concurrent", "8", "--server-memory", "64MiB", "--time", "5s")
    params = phc.decode_params(str(document["phc_prefix"]))
    server = document["server"]
    assert isinstance(server, dict)
    assert server["concurrent"] == 8
    assert server["server_memory"] == 64 << 20
    assert server["max_memory_per_verification"] == 8 << 20
    assert server["memory_at_concurrent"] == 8 * params.memory_bytes <= 64 << 20
    load = document["under_load"]
    assert isinstance(load, dict)
    assert load["concurrent"] == 8
    assert load["verifications"] >= FINAL_VERIFICATIONS
    assert 0 < load["seconds"] < elapsed
    assert 0 < load["median_seconds"] <= load["p95_seconds"] == document["verify_seconds"]
    assert document["within_budget"] is True
    assert document["bounds"] == {
        "max_concurrency": 8,
        "max_total_memory": 64 << 20,
        "timeout": 5.0,
    }


def test_the_server_memory_caps_each_verification() -> None:
    """4 at once within 8 MiB: each hash gets at most 2 MiB, and memory is what limited it."""
    document, _ = _tune("--concurrent", "4", "--server-memory", "8MiB", "--time", "5s")
    params = phc.decode_params(str(document["phc_prefix"]))
    server = document["server"]
    assert isinstance(server, dict)
    assert server["max_memory_per_verification"] == 2 << 20
    assert params.memory_bytes == 2 << 20
    assert document["limited_by"] == "memory"
    reasons = document["reasons"]
    assert isinstance(reasons, list)
    assert reasons[-1].startswith(
        "memory 2 MiB: the most --server-memory 8 MiB shared by --concurrent 4 allows"
    )


def test_a_server_memory_too_small_for_its_share_says_what_would_do() -> None:
    """64 at once within 1 MiB leaves 16 KiB each: exit 2, naming the least memory that does."""
    result = CliRunner().invoke(
        main, ["tune", "--concurrent", "64", "--server-memory", "1MiB", "--time", "1ms"]
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --server-memory 1 MiB shared by --concurrent 64 leaves 16 KiB per verification, "
        "below the smallest useful memory (1 MiB) for these settings: it would need at least "
        "64 MiB\n"
    )


def test_a_server_memory_above_the_machines_is_a_usage_error() -> None:
    """A --server-memory larger than the machine is refused before anything is measured."""
    result = CliRunner().invoke(main, ["tune", "--server-memory", "4TiB", "--time", "1ms"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --server-memory 4 TiB is more than this machine's")


def test_the_human_output_names_the_memory_at_once_and_the_load() -> None:
    """Without --json tune prints the memory at N at once and what N at once measured."""
    options = ["--concurrent", "2", "--server-memory", "16MiB", "--time", "5s", "--lanes", "8"]
    result = CliRunner().invoke(main, ["tune", *options])
    assert result.exit_code == 0, result.output
    line = re.search(
        r"Server:       2 x (\d+) MiB = (\d+) MiB at once, within --server-memory 16 MiB",
        result.stdout,
    )
    assert line is not None, result.stdout
    each, total = int(line[1]), int(line[2])
    assert total == 2 * each <= 16
    assert f"m={(each << 10).bit_length() - 1}," in result.stdout
    assert re.search(r"Measured:     2 at once: 95th percentile [\d.]+ ms, median", result.stdout)
    assert "verifications per second" in result.stdout


def test_each_verification_gets_its_share_of_the_memory_and_the_cores() -> None:
    """The memory limit is the smaller of --max-memory and the share; threads share the cores."""
    assert per_verification_memory(1 << 30, 1 << 30, 8) == 128 << 20
    assert per_verification_memory(64 << 20, 1 << 30, 2) == 64 << 20
    assert start_params("AVX2", concurrent=1).parallelism == min(usable_cpus(), 255)
    assert start_params("AVX2", concurrent=usable_cpus()).parallelism == 1
    assert start_params("AVX2", concurrent=4 * usable_cpus()).parallelism == 1
