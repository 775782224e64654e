"""``twocats bench`` options: --hash, --cache-dir and --cold reach the level processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from twocats.cli.bench import bench_command
from twocats.perf import levels
from twocats.simd.cache import cache_root

CHEAP = ["--level", "none", "--lanes", "8", "--mem-cost", "10", "--repeats", "1", "--json"]


def test_hash_and_cache_dir_reach_the_child(tmp_path: Path) -> None:
    """A real run with --hash blake2b and --cache-dir measures blake2b cells in that cache."""
    # A fresh folder (a link as the cache root would be refused): its kernels compile there.
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    result = CliRunner().invoke(
        bench_command, [*CHEAP, "--hash", "blake2b", "--cache-dir", str(cache)]
    )
    assert result.exit_code == 0, result.output
    (level,) = json.loads(result.stdout)["levels"]
    assert level["env"]["TWOCATS_CACHE_DIR"] == str(cache)
    assert [(cell["hash_type"], cell["lanes"]) for cell in level["cells"]] == [("blake2b", 8)]
    assert level["check"]["verified"], level["check"]["problems"]


def test_cold_gives_each_level_a_fresh_cache_that_is_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--cold hands every level its own folder in a new temporary cache, deleted afterwards."""
    seen: dict[str, Path] = {}

    def record(levels: Any, cells: Any, *, cache_dir: Any, **_: Any) -> list[dict[str, Any]]:
        for level in levels:
            folder = cache_dir(level)
            assert folder.parent.is_dir()
            assert not folder.exists()
            seen[level.key] = folder
        return []

    # Compiling every kernel afresh takes minutes; the folders are what --cold decides.
    monkeypatch.setattr(levels, "run_levels", record)
    args = ["--level", "none", "--level", "sse2", "--lanes", "8", "--cold", "--json"]
    result = CliRunner().invoke(bench_command, args)
    assert result.exit_code == 0, result.output
    assert set(seen) == {"none", "sse2"}
    assert seen["none"].parent == seen["sse2"].parent
    assert seen["none"].parent.name.startswith("twocats-bench-")
    assert [folder.name for folder in seen.values()] == ["none", "sse2"]
    assert cache_root() not in seen["none"].parents
    assert not seen["none"].parent.exists()
