"""``twocats bench`` without options: the short run, its progress lines and its kernel notes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from twocats.cli.bench import bench_command
from twocats.perf.levels import kernel_note


def test_kernel_note_says_loaded_or_compiled_and_never_prints_a_dict() -> None:
    """A cache hit reads "loaded from the cache"; a compile names the lanes it compiled."""
    loaded = kernel_note({"compile_s": {"8": 0.04, "1": 0.06}, "compiled_lanes": []})
    assert loaded == "kernels loaded from the cache (0.1 s)"
    compiled = kernel_note({"compile_s": {"8": 2.5}, "compiled_lanes": [8]})
    assert compiled == "kernels compiled for lanes 8 (2.5 s)"
    assert "{" not in loaded + compiled


def test_default_run_is_short_and_numbers_its_steps() -> None:
    """One 64 MiB cell at two levels (no SSE2), numbered steps, a cache hit the second time."""
    runner = CliRunner()
    runner.invoke(bench_command, ["--repeats", "1"])
    result = runner.invoke(bench_command, ["--repeats", "1", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    levels = document["levels"]
    assert len(levels) == 2
    assert levels[-1]["level"] == "none"
    assert all(level["level"] != "sse2" for level in levels)
    for level in levels:
        assert [(cell["lanes"], cell["mem_cost"]) for cell in level["cells"]] == [(8, 16)]
    progress = result.stderr.splitlines()
    assert [line.split("]")[0] for line in progress[1:]] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert "loaded from the cache" in progress[1]
    assert "compil" not in progress[1]
