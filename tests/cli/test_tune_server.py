"""tune for a server: N verifications at once stay within the server's memory, and are measured."""

from __future__ import annotations

import json
import re
import time

from click.testing import CliRunner

from twocats import phc
from twocats._machine import usable_cpus
from twocats.cli import main
from twocats.params import Params
from twocats.perf.tune import measure_throughput, per_verification_memory, start_params


def _tune(*options: str) -> tuple[dict[str, object], float]:
    """Run tune --json with `options`; return its document and the run's wall-clock time."""
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["tune", "--lanes", "8", *options, "--json"])
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), elapsed


def test_eight_at_once_stay_within_the_server_memory_and_are_measured() -> None:
    """--concurrent 8 --server-memory 1GiB: 8 x memory within 1 GiB, verifications/s measured."""
    document, elapsed = _tune("--concurrent", "8", "--server-memory", "1GiB", "--time", "1ms")
    params = phc.decode_params(str(document["phc_prefix"]))
    server = document["server"]
    assert isinstance(server, dict)
    assert server["concurrent"] == 8
    assert server["server_memory"] == 1 << 30
    assert server["max_memory_per_verification"] == 128 << 20
    assert server["memory_at_concurrent"] == 8 * params.memory_bytes <= 1 << 30
    # Every thread verified at least once in a window of about a second, within the run.
    assert server["verifications"] >= 8
    assert 1.0 <= server["seconds"] < elapsed
    assert server["verifications_per_second"] == server["verifications"] / server["seconds"]
    assert 0 < server["median_wall_seconds"] < server["seconds"]


def test_the_server_memory_caps_each_verification() -> None:
    """4 at once within 8 MiB: each hash gets at most 2 MiB, and memory is what limited it."""
    document, _ = _tune("--concurrent", "4", "--server-memory", "8MiB", "--time", "40ms")
    params = phc.decode_params(str(document["phc_prefix"]))
    server = document["server"]
    assert isinstance(server, dict)
    assert server["max_memory_per_verification"] == 2 << 20
    assert params.memory_bytes <= 2 << 20
    assert server["memory_at_concurrent"] == 4 * params.memory_bytes <= 8 << 20


def test_a_server_memory_too_small_for_its_share_is_a_usage_error() -> None:
    """64 at once within 1 MiB leaves 16 KiB each: exit 2, naming both options."""
    result = CliRunner().invoke(
        main, ["tune", "--concurrent", "64", "--server-memory", "1MiB", "--time", "1ms"]
    )
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --server-memory 1 MiB shared by --concurrent 64 leaves 16 KiB per verification, "
        "below the smallest useful memory (1 MiB) for these settings\n"
    )


def test_a_server_memory_above_the_machines_is_a_usage_error() -> None:
    """A --server-memory larger than the machine is refused before anything is measured."""
    result = CliRunner().invoke(main, ["tune", "--server-memory", "4TiB", "--time", "1ms"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --server-memory 4 TiB is more than this machine's")


def test_the_human_output_names_the_memory_at_once_and_the_throughput() -> None:
    """Without --json tune prints the memory at N at once and the verifications per second."""
    options = ["--concurrent", "2", "--server-memory", "64MiB", "--time", "1ms", "--lanes", "8"]
    result = CliRunner().invoke(main, ["tune", *options])
    assert result.exit_code == 0, result.output
    # The memory chosen depends on this machine's speed within the 1 ms budget: the line must
    # name N x the chosen size and its total, within the server's memory.
    line = re.search(
        r"Server:       2 at once: 2 x (\d+) MiB = (\d+) MiB, within --server-memory 64 MiB",
        result.stdout,
    )
    assert line is not None, result.stdout
    each, total = int(line[1]), int(line[2])
    assert total == 2 * each <= 64
    assert f"m={(each << 10).bit_length() - 1}," in result.stdout
    assert "verifications per second with 2 at once" in result.stdout


def test_each_verification_gets_its_share_of_the_memory_and_the_cores() -> None:
    """The memory limit is the smaller of --max-memory and the share; threads share the cores."""
    assert per_verification_memory(1 << 30, 1 << 30, 8) == 128 << 20
    assert per_verification_memory(64 << 20, 1 << 30, 2) == 64 << 20
    assert start_params("AVX2", concurrent=1).parallelism == min(usable_cpus(), 255)
    assert start_params("AVX2", concurrent=usable_cpus()).parallelism == 1
    assert start_params("AVX2", concurrent=4 * usable_cpus()).parallelism == 1


def test_throughput_counts_every_verification_of_the_window() -> None:
    """Two threads verifying for 0.2 s: each verified, and the window ends after the last one."""
    params = Params(mem_cost=10, multiplies=0, lanes=8, parallelism=1)
    started = time.perf_counter()
    result = measure_throughput(params, None, 2, seconds=0.2)
    elapsed = time.perf_counter() - started
    assert result.concurrent == 2
    assert result.verifications >= 2
    assert 0.2 <= result.seconds < elapsed
    assert 0 < result.median_wall_seconds < result.seconds
