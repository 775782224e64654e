"""Smoke tests of the trade-off matrix: the child-process harness, the peers and the reports."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from bench.matrix import cells, peers, publish, report, runner
from bench.matrix.cells import HEADLINE, MAILING_LIST
from twocats.perf.levels import Cell, run_level
from twocats.simd.asm import profile_asm, verify_level
from twocats.simd.cache import cache_root
from twocats.simd.isa import get_level, host_target

ASM_YMM = "\tvpaddd\t%ymm1, %ymm2, %ymm3\n\tvprold\t$8, %ymm3, %ymm3\n"
ASM_SCALAR = "\troll\t$8, %eax\n\taddl\t%eax, %edx\n"


def _cell(cell: Cell, gbps: float, output: str = "00") -> dict[str, Any]:
    median = cell.memory_bytes / gbps / 1e9
    return {
        **dataclasses.asdict(cell),
        "memory_bytes": cell.memory_bytes,
        "median_s": median,
        "min_s": median,
        "max_s": median,
        "times_s": [median],
        "spread": 0.0,
        "gbps": gbps,
        "minor_faults": 262144 if cell.fresh else 0,
        "user_s": median * cell.parallelism,
        "sys_s": 0.1 if cell.fresh else 0.0,
        "output": output,
    }


def _level(
    key: str, asm: str, cpu: str, features: str, cells: list[dict[str, Any]]
) -> dict[str, Any]:
    level = get_level(key)
    profile = profile_asm(asm)
    return {
        "level": key,
        "label": level.label,
        "backend": level.backend,
        "env": {"NUMBA_CPU_NAME": "x86-64", "NUMBA_CPU_FEATURES": ""} if key == "sse2" else {},
        "cpu_name": cpu,
        "features": features,
        "compile_s": {"8": 1.5},
        "asm": {"method": "compiled", "combined": profile.to_dict(), "per_lanes": {}},
        "check": verify_level(level, profile, cpu, features),
        "cells": cells,
    }


def _document() -> dict[str, Any]:
    """A small but complete result document with made-up rates."""
    small = dataclasses.replace(HEADLINE, mem_cost=14)
    fast = [
        _cell(HEADLINE, 4.0),
        _cell(dataclasses.replace(HEADLINE, multiplies=0), 6.0),
        _cell(small, 8.0),
        _cell(dataclasses.replace(small, multiplies=0), 16.0),
        _cell(dataclasses.replace(HEADLINE, mem_cost=10), 6.0),
        _cell(dataclasses.replace(HEADLINE, mem_cost=10, multiplies=0), 12.0),
        _cell(dataclasses.replace(HEADLINE, fresh=True), 3.0),
        _cell(dataclasses.replace(HEADLINE, parallelism=2), 7.0),
        _cell(Cell("blake2s", 1, 2, 20, 1), 1.0),
        _cell(Cell("blake2b", 16, 2, 20, 1), 5.0),
        *[_cell(cell, 2.0, MAILING_LIST[cell.lanes]) for cell in cells.mailing_list_cells()],
    ]
    slow = [
        _cell(HEADLINE, 2.0),
        _cell(Cell("blake2s", 8, 0, 20, 1), 3.0),
        _cell(Cell("blake2s", 8, 0, 14, 1), 5.0),
        *[_cell(cell, 1.0, MAILING_LIST[cell.lanes]) for cell in cells.mailing_list_cells()],
    ]
    levels = [
        _level("avx512", ASM_YMM, "znver4", "+avx2,+avx512f,+avx512vl,+avx512bw", fast),
        _level("none", ASM_SCALAR, "znver4", "+avx2,+avx512f,+avx512vl,+avx512bw", slow),
    ]
    timing = {"median_s": 1.0, "min_s": 1.0, "max_s": 1.0, "spread": 0.0, "times_s": [1.0]}
    return {
        "date": "2026-01-01 00:00 UTC",
        "command": "python -m bench matrix --full",
        "full": True,
        "repeats": 5,
        "wall_s": 600.0,
        "machine": {
            "lscpu": {"Model name": "Test CPU", "L2 cache": "1 MiB", "L3 cache": "32 MiB"},
            "llvm_host_cpu": "znver4",
            "llvm_host_tier": "AVX-512",
            "cpus_usable": 2,
            "memory_gib": 8.0,
            "kernel": "6.0",
            "transparent_hugepages": "madvise",
            "python": "3.11",
            "versions": {"numba": "0.68", "llvmlite": "0.50", "numpy": "2", "argon2-cffi": "25"},
            "openssl": "OpenSSL 3",
            "git_commit": "abc1234",
        },
        "levels": levels,
        "output_mismatches": [],
        "mailing_list_check": runner._mailing_list_check(levels),
        "peers": {
            "memory_bytes": 1 << 30,
            "small_bytes": 16 << 20,
            "bandwidth": {
                name: {**timing, "gbps": rate}
                for name, rate in (
                    ("copy_1t", 10.0),
                    ("copy_2t", 16.0),
                    ("fill_1t", 20.0),
                    ("fill_2t", 25.0),
                    ("read_1t", 30.0),
                    ("fresh_fill_1t", 5.0),
                )
            },
            "argon2id": {
                "p1": {**timing, "gbps": 0.8, "memory_bytes": 1 << 30},
                "p2": {**timing, "gbps": 1.5, "memory_bytes": 1 << 30},
                "p1_small": {**timing, "gbps": 0.9, "memory_bytes": 16 << 20},
                "equal_time": {**timing, "gbps": 0.8, "memory_bytes": 200 << 20, "target_s": 0.27},
            },
            "scrypt": {"large": {**timing, "gbps": 0.3}, "small": {**timing, "gbps": 0.35}},
            "hv_seconds": {"blake2s": 2e-7, "blake2b": 3e-7},
        },
    }


def test_breakdown_parts_add_up_to_the_headline_time() -> None:
    """The four parts of the headline time sum to the measured total; faults come on top."""
    document = _document()
    parts = runner.breakdown(document)
    assert parts is not None
    assert abs(sum(parts["parts_s"].values()) - parts["total_s"]) < 1e-9
    # The fresh-memory headline fills at 3 GB/s, the reused one at 4 GB/s.
    gib = float(1 << 30)
    assert parts["page_faults_extra_s"] == pytest.approx(gib / 3e9 - gib / 4e9)
    assert parts["blocks"] >= (1 << 30) // 16384


def test_headline_ratios_compare_the_right_cells() -> None:
    """The issue-3 ratios divide the headline by argon2id, p=1 by p=2, simd by the no-vector row."""
    ratios = report.headline_ratios(_document())
    assert ratios["vs_argon2id_p1"] == 4.0 / 0.8
    assert ratios["p2_over_p1"] == 7.0 / 4.0
    assert ratios["simd_over_scalar_1GiB"] == 6.0 / 3.0
    assert ratios["simd_over_scalar_16MiB"] == 16.0 / 5.0
    assert ratios["p2_cpu_per_wall"] == 2.0


def test_reports_and_plots_are_written(tmp_path: Path) -> None:
    """write_results produces the JSON, the markdown report, PERFORMANCE.md and the PNG plots."""
    document = _document()
    document["breakdown"] = runner.breakdown(document)
    written = {path.name for path in publish.write_results(document, tmp_path)}
    assert written == {
        "matrix.json",
        "matrix.md",
        "PERFORMANCE.md",
        "matrix.png",
        "matrix_p2.png",
        "peers.png",
        "breakdown.png",
    }
    assert json.loads((tmp_path / "matrix.json").read_text())["levels"][0]["level"] == "avx512"
    markdown = (tmp_path / "matrix.md").read_text()
    assert "## The matrix" in markdown
    assert "| AVX-512 | no vectors |" in markdown.replace("| hash | lanes | multiplies ", "")
    assert "outputs match the published vectors" in markdown
    assert "## Where the headline time goes" in markdown
    section = (tmp_path / "PERFORMANCE.md").read_text()
    assert section.startswith("## Performance")
    assert "bench/results/matrix.png" in section
    assert "python -m bench matrix --full" in section
    assert (tmp_path / "matrix.png").read_bytes().startswith(b"\x89PNG")


def test_failures_name_unverified_levels_and_wrong_vectors() -> None:
    """A level that fails its ISA check and a wrong mailing-list output both fail the run."""
    document = _document()
    assert runner._failures(document) == []
    document["levels"][0]["check"]["verified"] = False
    document["mailing_list_check"][0]["matches_published"] = False
    failures = runner._failures(document)
    assert failures[0] == "level avx512"
    assert failures[1].startswith("mailing-list output")


def test_full_matrix_covers_every_axis() -> None:
    """The full matrix has every hash/lanes pair x multiplies x memory x parallelism."""
    full = cells.matrix_cells(full=True)
    assert len(full) == len(cells.FULL_CONFIGS) * 2 * 2 * 2
    assert HEADLINE in full
    assert {cell.lanes for cell in full} == {1, 2, 4, 8, 16}
    assert all(cell.lanes <= 8 or cell.hash_type in ("blake2b", "sha512") for cell in full)


def test_peers_run_at_the_cheapest_size() -> None:
    """run_peers measures bandwidth, argon2id, scrypt and the state-hash cost at 1 MiB."""
    result = peers.run_peers(
        memory_bytes=1 << 20, small_bytes=1 << 20, twocats_seconds=0.001, repeats=1
    )
    assert set(result["bandwidth"]) == {
        "copy_1t",
        "copy_2t",
        "fill_1t",
        "fill_2t",
        "read_1t",
        "fresh_fill_1t",
    }
    assert set(result["argon2id"]) == {"p1", "p2", "p1_small", "equal_time"}
    assert result["scrypt"]["large"]["n"] == 1024
    assert (
        peers.fraction(1.0, result["bandwidth"], 2) == 1.0 / result["bandwidth"]["copy_2t"]["gbps"]
    )


def test_child_processes_run_the_cheapest_cell_and_verify_their_level() -> None:
    """The host and no-vector children fill 1 MiB, agree on the output and pass their checks."""
    _name, features = host_target()
    cell = Cell("blake2s", 8, 2, 10, 1)
    cache = cache_root()
    results = [
        run_level(
            get_level(key),
            [cell],
            host_features=features,
            cache_dir=cache,
            repeats=1,
            min_seconds=0.0,
        )
        for key in ("native", "none")
    ]
    for result in results:
        assert "error" not in result
        assert result["check"]["verified"], result["check"]["problems"]
        assert len(result["cells"]) == 1
    assert results[0]["cells"][0]["output"] == results[1]["cells"][0]["output"]
    assert not results[1]["check"]["vectorized"]
