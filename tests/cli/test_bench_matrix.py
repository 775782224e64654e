"""``twocats bench``: the short trade-off matrix on the command line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from twocats.cli.bench import bench_command
from twocats.perf.levels import ChildError, LevelProcess
from twocats.simd.cache import cache_root
from twocats.simd.isa import get_level


def test_json_run_at_the_cheapest_size_verifies_each_level() -> None:
    """The host and no-vector levels run 1 MiB in child processes and pass their ISA checks."""
    result = CliRunner().invoke(
        bench_command,
        [
            "--level",
            "native",
            "--level",
            "none",
            "--lanes",
            "8",
            "--mem-cost",
            "10",
            "--repeats",
            "1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [level["level"] for level in document["levels"]] == ["native", "none"]
    for level in document["levels"]:
        assert level["check"]["verified"], level["check"]["problems"]
        assert [cell["lanes"] for cell in level["cells"]] == [8]
    assert document["output_mismatches"] == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--lanes", "3"], "lanes must be 1, 2, 4, 8 or 16"),
        (["--lanes", "16"], "lanes must be from 1 to 8 for blake2s"),
        (["--level", "avx3"], "'avx3' is not one of"),
    ],
)
def test_bad_options_exit_with_usage_errors(arguments: list[str], message: str) -> None:
    """Impossible lane counts and unknown levels are usage errors (exit 2) before any work."""
    result = CliRunner().invoke(bench_command, arguments)
    assert result.exit_code == 2
    assert message in result.output


def test_a_failing_request_raises_child_error_and_the_child_exits() -> None:
    """An unknown request comes back as ChildError; close() then ends the child cleanly."""
    process = LevelProcess(get_level("none"), "", cache_root())
    with pytest.raises(ChildError, match="unknown request 'bogus'"):
        process.request("bogus", cell={})
    process.close()
    assert process.returncode == 0
