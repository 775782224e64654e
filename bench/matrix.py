"""The TwoCats trade-off matrix: ISA level x lanes x multiplies x memory x threads, with peers.

What each run measures (``python -m bench matrix --full`` regenerates ``bench/results/``):

* Every ISA level (AVX-512 as the CPU's tuning compiles it, AVX-512 forced to 512-bit vectors, AVX2,
  SSE4.2, SSE2 as the x86-64 baseline, and no vectorization at all) runs in a child process of its
  own, with its own kernel cache and the environment recipe of spec numba-simd.md §3.2; the child's
  kernels are disassembled and checked against the level (:mod:`twocats.simd.levels`).
* In each level: ``derive`` on a reused buffer for blake2s with 1, 2, 4 and 8 lanes, blake2b with 8
  and 16 and sha512 with 16, multiplies 0 and 2, 16 MiB (in cache) and 1 GiB, parallelism 1 (one
  thread) and 2 (two threads); the rate is GB/s of memory filled per derivation.
* In each level: the March 2014 mailing-list configuration at full size (variant 2014-03, blake2s,
  mem_cost 21 = 2 GiB, multiplies 0, parallelism 2, lanes 8 against lanes 1), checked against the
  published outputs.
* In the first level also the headline configuration with fresh memory on every call (allocation
  and page faults included, as argon2 pays them).
* The peers of :mod:`bench.peers`, and the breakdown of where the headline configuration's time
  goes.

Without ``--full`` a short matrix runs (the CLI's ``twocats bench`` levels, blake2s with 1 and 8
lanes, 16 MiB and 1 GiB, multiplies 2, one thread) and writes to ``bench/results/tmp/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from bench import peers as peer_bench
from bench.harness import load_average
from twocats.kdf.limits import format_size
from twocats.simd import isa
from twocats.simd.asm import describe_check
from twocats.simd.cache import cache_root
from twocats.simd.levels import MIN_CELL_SECONDS, Cell, check_outputs, format_table, run_levels

__all__ = [
    "FULL_CONFIGS",
    "HEADLINE",
    "MAILING_LIST",
    "breakdown",
    "find_cell",
    "machine_description",
    "main",
    "markdown_report",
    "matrix_cells",
    "performance_section",
    "run_matrix",
]

RESULTS_DIR: Final = Path(__file__).resolve().parent / "results"

#: (hash type, lanes) pairs of the full matrix: 16 lanes need a 64-byte hash.
FULL_CONFIGS: Final = (
    ("blake2s", 1),
    ("blake2s", 2),
    ("blake2s", 4),
    ("blake2s", 8),
    ("blake2b", 8),
    ("blake2b", 16),
    ("sha512", 16),
)
FULL_MULTIPLIES: Final = (0, 2)
FULL_MEM_COSTS: Final = (14, 20)
FULL_PARALLELISM: Final = (1, 2)

#: The configuration issue 3 sets its goals on: blake2s, 8 lanes, multiplies 2, 1 GiB, one thread.
HEADLINE: Final = Cell("blake2s", 8, 2, 20, 1)

#: The PHC mailing-list runs of March 2014 (``twocats -m21 -l8 -M0`` and ``-l1``) with their
#: published outputs, and the times the author reported for 2 GiB on his machine.
MAILING_LIST: Final = {
    8: "53dc33f3b4861efb961cc1935b7d792adf068640390827e7e6761b5ae42da02f",
    1: "c44bd0df16eddf100a4dff2731fa58075b98ca123e19fe1a16bd2c33545590b3",
}
MAILING_LIST_PUBLISHED: Final = {
    "lanes 8, SSE2": 0.32,
    "lanes 8, no SSE": 1.30,
    "lanes 1": 0.90,
}

#: The published C reference on the project machine (issue 3): GB/s at the headline configuration.
C_REFERENCE_GBPS: Final = {"multiplies 2": 4.3, "multiplies 0": 6.4}


def mailing_list_cells() -> list[Cell]:
    """Return the two March 2014 mailing-list cells (2 GiB, two regions on two threads)."""
    return [Cell("blake2s", lanes, 0, 21, 2, "2014-03") for lanes in (8, 1)]


def matrix_cells(full: bool) -> list[Cell]:
    """Return the cells every level measures (full matrix or the short one)."""
    if not full:
        return [Cell("blake2s", lanes, 2, mem, 1) for mem in (14, 20) for lanes in (1, 8)]
    return [
        Cell(hash_type, lanes, multiplies, mem_cost, parallelism)
        for mem_cost in FULL_MEM_COSTS
        for parallelism in FULL_PARALLELISM
        for multiplies in FULL_MULTIPLIES
        for hash_type, lanes in FULL_CONFIGS
    ]


#: Memory costs of the in-cache cells the breakdown needs (1 MiB and 16 MiB).
_TINY_MEM_COST: Final = 10
_SMALL_MEM_COST: Final = 14


def first_level_extras() -> list[Cell]:
    """Return the cells only the first (best) level measures.

    The headline with fresh memory on every call, and the headline and its multiplies-0 twin at
    1 MiB, which with the 16 MiB cells give the fixed cost of a derivation (see :func:`breakdown`).
    """
    return [
        dataclasses.replace(HEADLINE, fresh=True),
        dataclasses.replace(HEADLINE, multiplies=0, fresh=True),
        dataclasses.replace(HEADLINE, mem_cost=_TINY_MEM_COST),
        dataclasses.replace(HEADLINE, mem_cost=_TINY_MEM_COST, multiplies=0),
    ]


def shared_mem_costs(levels: Sequence[dict[str, Any]]) -> list[int]:
    """Return the memory costs of the 2015 cells every measured level has (not the extras)."""
    measured = [level for level in levels if level.get("cells")]
    common: set[int] | None = None
    for level in measured:
        costs = {c["mem_cost"] for c in level["cells"] if c["variant"] == "2015" and not c["fresh"]}
        common = costs if common is None else common & costs
    return sorted(common or ())


def find_cell(level: dict[str, Any], cell: Cell) -> dict[str, Any] | None:
    """Return ``level``'s result for ``cell``, or None if it was not measured."""
    wanted = dataclasses.asdict(cell)
    results: list[dict[str, Any]] = level.get("cells", [])
    for result in results:
        if all(result[name] == value for name, value in wanted.items()):
            return result
    return None


# -- the machine -----------------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _lscpu() -> dict[str, str]:
    try:
        text = subprocess.run(
            ["lscpu"], capture_output=True, text=True, check=False, env={"LC_ALL": "C"}
        ).stdout
    except OSError:
        return {}
    wanted = (
        "Model name",
        "Vendor ID",
        "CPU(s)",
        "Thread(s) per core",
        "L1d cache",
        "L2 cache",
        "L3 cache",
        "Hypervisor vendor",
    )
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in wanted:
            found[name.strip()] = value.strip()
    return found


def _version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return "not installed"


def _git_commit() -> str:
    try:
        completed = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            cwd=Path(__file__).resolve().parent,
        )
    except OSError:
        return "unknown"
    return completed.stdout.strip() or "unknown"


def machine_description() -> dict[str, Any]:
    """Describe the machine and software the run measured."""
    host_name, host_features = isa.host_target()
    memory_kib = 0
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            memory_kib = int(line.split()[1])
    return {
        "lscpu": _lscpu(),
        "llvm_host_cpu": host_name,
        "llvm_host_tier": isa.features_tier(host_name, host_features),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": round(memory_kib / (1 << 20), 1),
        "kernel": platform.release(),
        "transparent_hugepages": _read("/sys/kernel/mm/transparent_hugepage/enabled").strip(),
        "python": platform.python_version(),
        "versions": {
            name: _version(name)
            for name in ("numba", "llvmlite", "numpy", "argon2-cffi", "argon2-cffi-bindings")
        },
        "openssl": __import__("ssl").OPENSSL_VERSION,
        "git_commit": _git_commit(),
    }


# -- the run ---------------------------------------------------------------------------------------


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_matrix(
    *,
    full: bool,
    level_keys: Sequence[str] | None,
    repeats: int,
    cache_root: Path,
    with_peers: bool = True,
    mailing_list: bool | None = None,
    cells: Sequence[Cell] | None = None,
    per_level_cache: bool = True,
    peer_bytes: int = HEADLINE.memory_bytes,
    small_peer_bytes: int = 16 << 20,
) -> dict[str, Any]:
    """Run the matrix (and the peers) and return the whole result document.

    Each level's kernels are cached in ``cache_root/<level>`` (``per_level_cache``) or all in
    ``cache_root`` itself, which is safe too: the project's cache keys on ISA and vectorizer mode.
    """
    started = time.perf_counter()
    load_start = load_average()
    _host_name, host_features = isa.host_target()
    if level_keys:
        levels = [isa.get_level(key) for key in level_keys]
    elif full:
        levels = isa.available_levels(host_features)
    else:
        levels = isa.default_levels(host_features)
    chosen = list(cells) if cells is not None else matrix_cells(full)
    if mailing_list if mailing_list is not None else full:
        chosen += mailing_list_cells()
    results = run_levels(
        levels,
        chosen,
        host_features=host_features,
        cache_dir=lambda level: cache_root / level.key if per_level_cache else cache_root,
        repeats=repeats,
        first_level_cells=first_level_extras() if full else (),
    )
    document: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m bench matrix" + (" --full" if full else ""),
        "full": full,
        "repeats": repeats,
        "machine": machine_description(),
        "levels": results,
        "output_mismatches": check_outputs(results),
        "mailing_list_check": _mailing_list_check(results),
    }
    if with_peers:
        headline = _best_headline(results)
        document["peers"] = peer_bench.run_peers(
            memory_bytes=peer_bytes,
            small_bytes=small_peer_bytes,
            twocats_seconds=headline["median_s"] if headline else None,
            repeats=max(2, min(repeats, 3)),
            progress=_say,
        )
        document["breakdown"] = breakdown(document)
    document["wall_s"] = time.perf_counter() - started
    document["load_average"] = {"start": load_start, "end": load_average()}
    return document


def _best_headline(levels: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Return the headline result of the first level that measured it."""
    for level in levels:
        found = find_cell(level, HEADLINE)
        if found is not None:
            return found
    return None


def _mailing_list_check(levels: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for level in levels:
        for cell in mailing_list_cells():
            found = find_cell(level, cell)
            if found is not None:
                rows.append(
                    {
                        "level": level["level"],
                        "lanes": cell.lanes,
                        "median_s": found["median_s"],
                        "matches_published": found["output"] == MAILING_LIST[cell.lanes],
                    }
                )
    return rows


def _blocks_filled(cell: Cell) -> int:
    """Count the blocks (one state hash each) a derivation with ``cell`` fills."""
    from twocats.kdf import geometry

    return sum(
        plan.parallelism * plan.blocks_per_region
        for plan in geometry.plan(cell.params())
        if plan.fills
    )


def _numpy_fault_seconds(bandwidth: dict[str, Any]) -> float | None:
    """Return what first-touch page faults add to filling 1 GiB with numpy (seconds)."""
    if "fresh_fill_1t" not in bandwidth:
        return None
    nbytes = HEADLINE.memory_bytes
    fresh, touched = bandwidth["fresh_fill_1t"]["gbps"], bandwidth["fill_1t"]["gbps"]
    return float(nbytes / fresh / 1e9 - nbytes / touched / 1e9)


def _chain_path(level: dict[str, Any], blocks: int) -> dict[str, Any]:
    """Time one step of the serial multiply chain, and the headline's chain alone.

    With one lane a block runs ``multiplies * blocklen`` chain steps against ``blocklen`` lane
    steps, so the lanes-1 cell's time is (nearly) all chain: its time per step is the latency of
    one step.  The headline runs ``lanes`` times fewer steps.
    """
    one_lane = find_cell(level, dataclasses.replace(HEADLINE, lanes=1))
    if one_lane is None:
        return {}
    words = 16384 // 4
    steps_one = blocks * HEADLINE.multiplies * words
    step_s = float(one_lane["median_s"]) / steps_one
    steps = steps_one // HEADLINE.lanes
    return {"chain_step_ns": step_s * 1e9, "chain_steps": steps, "chain_alone_s": step_s * steps}


def breakdown(document: dict[str, Any]) -> dict[str, Any] | None:
    """Split the headline time of the first level into its parts (seconds per derivation).

    The first level measures the headline and its multiplies-0 twin at 1 MiB, 16 MiB and 1 GiB.
    A derivation costs a fixed part (orchestration in Python, the small overwrite levels, the
    hashing around the fill) plus a part proportional to the memory; the 1 MiB and 16 MiB times,
    both in cache, give the two (time = fixed + per-MiB cost x MiB).

    * hashing: one state hash per block, at hashlib's per-call cost;
    * fixed costs: the fixed part of a derivation, as above;
    * lane work: the in-cache cost of 1 GiB without the multiply chain, less the hashing;
    * memory stalls: what 1 GiB without the chain costs beyond that in-cache cost;
    * multiply chain: what multiplies 2 adds over multiplies 0 at 1 GiB (its exposed part);
    * page faults: what fresh memory on every call adds (not part of the reused-buffer total).
    """
    if not document["levels"] or "peers" not in document:
        return None
    level = document["levels"][0]
    found = {
        (mem_cost, multiplies): find_cell(
            level, dataclasses.replace(HEADLINE, mem_cost=mem_cost, multiplies=multiplies)
        )
        for mem_cost in (_TINY_MEM_COST, _SMALL_MEM_COST, HEADLINE.mem_cost)
        for multiplies in (0, HEADLINE.multiplies)
    }
    fresh = find_cell(level, dataclasses.replace(HEADLINE, fresh=True))
    if fresh is None or any(value is None for value in found.values()):
        return None
    seconds = {key: float(value["median_s"]) for key, value in found.items() if value}
    mib = HEADLINE.memory_bytes >> 20
    tiny, small = 1 << (_TINY_MEM_COST - 10), 1 << (_SMALL_MEM_COST - 10)

    def per_mib(multiplies: int) -> float:
        return (seconds[_SMALL_MEM_COST, multiplies] - seconds[_TINY_MEM_COST, multiplies]) / (
            small - tiny
        )

    fixed = seconds[_TINY_MEM_COST, 0] - per_mib(0) * tiny
    total = seconds[HEADLINE.mem_cost, HEADLINE.multiplies]
    total_m0 = seconds[HEADLINE.mem_cost, 0]
    blocks = _blocks_filled(HEADLINE)
    hashing = blocks * float(document["peers"]["hv_seconds"]["blake2s"])
    in_cache = per_mib(0) * mib
    shares = {
        "hashing": hashing,
        "fixed costs (orchestration, overwrite levels)": fixed,
        "lane work (in cache, no chain)": in_cache - hashing,
        "memory stalls": total_m0 - in_cache - fixed,
        "multiply chain (exposed)": total - total_m0,
    }
    chain = _chain_path(level, blocks)
    return {
        "level": level["level"],
        "total_s": total,
        "total_m0_s": total_m0,
        "parts_s": shares,
        **chain,
        "page_faults_extra_s": float(fresh["median_s"]) - total,
        "page_faults_numpy_s": _numpy_fault_seconds(document["peers"]["bandwidth"]),
        "fresh_minor_faults": fresh["minor_faults"],
        "fresh_sys_s": fresh["sys_s"],
        "chain_in_cache_s": (per_mib(HEADLINE.multiplies) - per_mib(0)) * mib,
        "blocks": blocks,
    }


# -- reports ---------------------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ceiling(document: dict[str, Any], threads: int) -> float | None:
    peers = document.get("peers")
    if not peers:
        return None
    return float(peers["bandwidth"]["copy_2t" if threads > 1 else "copy_1t"]["gbps"])


def _env_text(env: dict[str, str]) -> str:
    shown = []
    for name, value in env.items():
        if name in ("TWOCATS_CACHE_DIR", "NUMBA_CACHE_DIR"):
            continue
        if name == "NUMBA_CPU_FEATURES" and len(value) > 40:
            changed = [item for item in value.split(",") if item.startswith("-")]
            value = "host features with " + ",".join(
                item
                for item in changed
                if "avx" in item
                or item in ("-fma", "-f16c", "-vaes", "-vpclmulqdq", "-prefer-256-bit")
            )
        shown.append(f"`{name}={value}`")
    return " ".join(shown) or "(host default)"


def _verification_table(document: dict[str, Any]) -> list[str]:
    lines = [
        (
            "| level | recipe | compiler target | vector ops xmm/ymm/zmm | AVX-512-only ops | "
            "VEX ops | cold compile, s | check |"
        ),
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for level in document["levels"]:
        if "error" in level:
            lines.append(
                f"| {level['label']} | {_env_text(level['env'])} | - | - | - | - | - | "
                f"{level['error']} |"
            )
            continue
        asm = level["asm"]["combined"]
        ops = asm["vector_ops"]
        lines.append(
            f"| {level['label']} | {_env_text(level['env'])} | {level['cpu_name']} "
            f"({level['check']['features_tier']}), backend {level['backend']} | "
            f"{ops['xmm']}/{ops['ymm']}/{ops['zmm']} | {asm['evex_only']} | {asm['vex']} | "
            f"{sum(level['compile_s'].values()):.0f} | {describe_check(level['check'])} |"
        )
    return lines


def _matrix_tables(document: dict[str, Any]) -> list[str]:
    levels = [level for level in document["levels"] if "cells" in level]
    configs = sorted(
        {
            (c["hash_type"], c["lanes"], c["multiplies"])
            for level in levels
            for c in level["cells"]
            if c["variant"] == "2015" and not c["fresh"]
        },
        key=lambda item: (item[2], item[0] != "blake2s", item[0], item[1]),
    )
    groups = sorted(
        {
            (c["mem_cost"], c["parallelism"])
            for level in levels
            for c in level["cells"]
            if c["variant"] == "2015"
            and not c["fresh"]
            and c["mem_cost"] in shared_mem_costs(levels)
        },
    )
    lines: list[str] = []
    for mem_cost, parallelism in groups:
        ceiling = _ceiling(document, parallelism)
        threads = "one thread" if parallelism == 1 else f"{parallelism} regions on 2 threads"
        lines += [
            "",
            f"#### {format_size(1024 << mem_cost)}, parallelism {parallelism} ({threads})",
            "",
            "| hash | lanes | multiplies | "
            + " | ".join(level["label"] for level in levels)
            + (" | best / copy |" if ceiling else " |"),
            "|---|---:|---:|" + "---:|" * len(levels) + ("---:|" if ceiling else ""),
        ]
        for hash_type, lanes, multiplies in configs:
            rates = []
            for level in levels:
                found = find_cell(level, Cell(hash_type, lanes, multiplies, mem_cost, parallelism))
                rates.append(None if found is None else float(found["gbps"]))
            present = [rate for rate in rates if rate is not None]
            if not present:
                continue
            row = f"| {hash_type} | {lanes} | {multiplies} | " + " | ".join(map(_fmt, rates))
            if ceiling:
                row += f" | {max(present) / ceiling:.2f}"
            lines.append(row + " |")
    return lines


def _mailing_list_table(document: dict[str, Any]) -> list[str]:
    rows = document["mailing_list_check"]
    if not rows:
        return []
    lines = [
        "",
        "### The March 2014 mailing-list configuration (2 GiB, parallelism 2, multiplies 0)",
        "",
        (
            "Published on the PHC list for the author's 2014 machine: 8 lanes with SSE2 "
            f"{MAILING_LIST_PUBLISHED['lanes 8, SSE2']} s, without SSE "
            f"{MAILING_LIST_PUBLISHED['lanes 8, no SSE']} s, one lane "
            f"{MAILING_LIST_PUBLISHED['lanes 1']} s."
        ),
        "",
        (
            "| level | lanes 8, s | lanes 1, s | lanes 8 GB/s | lanes 1 GB/s | gain of 8 lanes | "
            "outputs match the published vectors |"
        ),
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    by_level: dict[str, dict[int, dict[str, Any]]] = {}
    for row in rows:
        by_level.setdefault(row["level"], {})[row["lanes"]] = row
    labels = {level["level"]: level["label"] for level in document["levels"]}
    size = 1024 << 21
    for key, entries in by_level.items():
        eight, one = entries.get(8), entries.get(1)
        if eight is None or one is None:
            continue
        ok = "yes" if eight["matches_published"] and one["matches_published"] else "**NO**"
        lines.append(
            f"| {labels[key]} | {eight['median_s']:.2f} | {one['median_s']:.2f} | "
            f"{size / eight['median_s'] / 1e9:.2f} | {size / one['median_s'] / 1e9:.2f} | "
            f"{one['median_s'] / eight['median_s']:.2f}x | {ok} |"
        )
    return lines


def peer_rows(document: dict[str, Any]) -> list[tuple[str, float, float, int]]:
    """Return (name, GB/s, fraction of the copy ceiling, threads) rows at 1 GiB, best first."""
    peers = document.get("peers")
    if not peers:
        return []
    level = document["levels"][0]
    rows: list[tuple[str, float, int]] = []
    bandwidth = peers["bandwidth"]
    rows += [
        ("numpy fill (write only), 1 thread", bandwidth["fill_1t"]["gbps"], 1),
        ("numpy copy, 1 thread", bandwidth["copy_1t"]["gbps"], 1),
        ("numpy copy, 2 threads", bandwidth["copy_2t"]["gbps"], 2),
    ]
    if "fresh_fill_1t" in bandwidth:
        rows.append(("numpy fill of fresh memory, 1 thread", bandwidth["fresh_fill_1t"]["gbps"], 1))
    tc = [
        (f"TwoCats {level['label']}, reused buffer, p=1", HEADLINE),
        (
            f"TwoCats {level['label']}, reused buffer, p=2",
            dataclasses.replace(HEADLINE, parallelism=2),
        ),
        (f"TwoCats {level['label']}, fresh memory, p=1", dataclasses.replace(HEADLINE, fresh=True)),
        (
            f"TwoCats {level['label']}, multiplies 0, p=1",
            dataclasses.replace(HEADLINE, multiplies=0),
        ),
    ]
    for name, cell in tc:
        found = find_cell(level, cell)
        if found is not None:
            rows.append((name, found["gbps"], cell.parallelism))
    argon = peers["argon2id"]
    rows += [
        ("argon2id t=1, p=1", argon["p1"]["gbps"], 1),
        ("argon2id t=1, p=2", argon["p2"]["gbps"], 2),
        ("scrypt r=8, p=1", peers["scrypt"]["large"]["gbps"], 1),
    ]
    ceilings = {1: _ceiling(document, 1) or 1.0, 2: _ceiling(document, 2) or 1.0}
    return [(name, rate, rate / ceilings[threads], threads) for name, rate, threads in rows]


def headline_ratios(document: dict[str, Any]) -> dict[str, float | None]:
    """Return the issue-3 ratios of the headline configuration (None where not measured)."""
    peers = document.get("peers")
    level = document["levels"][0] if document["levels"] else {}
    head = find_cell(level, HEADLINE)
    p2 = find_cell(level, dataclasses.replace(HEADLINE, parallelism=2))
    fresh = find_cell(level, dataclasses.replace(HEADLINE, fresh=True))
    ratios: dict[str, float | None] = {
        "headline_gbps": head["gbps"] if head else None,
        "vs_argon2id_p1": (head["gbps"] / peers["argon2id"]["p1"]["gbps"])
        if head and peers
        else None,
        "p2_over_p1": (p2["gbps"] / head["gbps"]) if head and p2 else None,
        "p2_cpu_per_wall": ((p2["user_s"] + p2["sys_s"]) / p2["median_s"]) if p2 else None,
        "fresh_gbps": fresh["gbps"] if fresh else None,
    }
    scalar = next(
        (lv for lv in document["levels"] if lv["level"] == "none" and "cells" in lv), None
    )
    for mem_cost in (14, 20):
        cell = Cell("blake2s", 8, 0, mem_cost, 1)
        simd, plain = find_cell(level, cell), find_cell(scalar, cell) if scalar else None
        ratios[f"simd_over_scalar_{format_size(cell.memory_bytes).replace(' ', '')}"] = (
            simd["gbps"] / plain["gbps"] if simd and plain else None
        )
    if peers and "equal_time" in peers["argon2id"] and head:
        ratios["equal_time_memory_ratio"] = (
            HEADLINE.memory_bytes / peers["argon2id"]["equal_time"]["memory_bytes"]
        )
    return ratios


def _machine_lines(document: dict[str, Any]) -> list[str]:
    machine = document["machine"]
    cpu = machine["lscpu"]
    versions = machine["versions"]
    return [
        f"- CPU: {cpu.get('Model name', '?')} ({machine['llvm_host_cpu']} to LLVM, "
        f"{machine['llvm_host_tier']}), {machine['cpus_usable']} usable CPUs, "
        f"L2 {cpu.get('L2 cache', '?')}, L3 {cpu.get('L3 cache', '?')}"
        + (f", under {cpu['Hypervisor vendor']}" if cpu.get("Hypervisor vendor") else ""),
        (
            f"- Memory: {machine['memory_gib']} GiB; Linux {machine['kernel']}; "
            "transparent huge pages "
            f"`{machine['transparent_hugepages']}`"
        ),
        (
            f"- Software: Python {machine['python']}, numba {versions['numba']}, llvmlite "
            f"{versions['llvmlite']}, numpy {versions['numpy']}, "
            f"argon2-cffi {versions['argon2-cffi']}, "
            f"{machine['openssl']}; twocats commit {machine['git_commit']}"
        ),
    ]


def _load_lines(document: dict[str, Any]) -> list[str]:
    load = document.get("load_average")
    if not load or not load["start"] or not load["end"]:
        return []
    start = "/".join(f"{value:.1f}" for value in load["start"])
    end = "/".join(f"{value:.1f}" for value in load["end"])
    return [f"- Load average (1/5/15 min): {start} at the start, {end} at the end"]


def _breakdown_lines(parts: dict[str, Any]) -> list[str]:
    total = parts["total_s"]
    faults = parts["page_faults_extra_s"]
    notes = []
    if "chain_step_ns" in parts:
        notes.append(
            f"The multiply chain is one serial dependency: a step (two dependent 32x32->64 "
            f"multiplies) takes {parts['chain_step_ns']:.2f} ns, measured on the lanes-1 cell "
            f"whose time is nearly all chain; the headline's {parts['chain_steps']:,} steps take "
            f"{parts['chain_alone_s']:.3f} s of its {total:.3f} s, against "
            f"{parts['total_m0_s']:.3f} s for everything else (multiplies 0). The chain is the "
            "critical path and the lane work runs under it, so the parts above overlap in time; "
            "the table attributes to the chain only what it adds."
        )
    notes += [
        (
            f"The multiply chain adds {parts['chain_in_cache_s']:.3f} s when the memory is in "
            f"cache and {parts['parts_s']['multiply chain (exposed)']:.3f} s at 1 GiB."
        ),
        (
            f"Hashing is {parts['blocks']} state hashes (one per 16 KiB block) at hashlib's "
            "per-call cost."
        ),
    ]
    if parts.get("page_faults_numpy_s") is not None:
        notes.append(
            f"For comparison, numpy pays {parts['page_faults_numpy_s']:.3f} s of page faults to "
            "write 1 GiB of fresh memory instead of touched memory."
        )
    if parts.get("fresh_minor_faults"):
        notes.append(f"A fresh-memory derivation takes {parts['fresh_minor_faults']} minor faults.")
    return [
        "",
        f"## Where the headline time goes ({parts['level']})",
        "",
        "| part | seconds | share |",
        "|---|---:|---:|",
        *[
            f"| {name} | {value:.4f} | {100 * value / total:.0f}% |"
            for name, value in parts["parts_s"].items()
        ],
        f"| **total, reused buffer** | {total:.4f} | 100% |",
        (
            f"| page faults (fresh memory on every call, extra) | {faults:.4f} | "
            f"+{100 * faults / total:.0f}% |"
        ),
        "",
        " ".join(notes),
    ]


def markdown_report(document: dict[str, Any]) -> str:
    """Return the full results as markdown (``bench/results/matrix.md``)."""
    lines = [
        "# TwoCats trade-off matrix and peers",
        "",
        (
            f"Regenerate with `{document['command']}`. Run {document['date']}, "
            f"{document['wall_s'] / 60:.0f} minutes. Every level runs in a child process of its "
            "own, and each cell is timed at all levels in rotation (one untimed call per level, "
            f"then {document['repeats']} rounds of one call per level, or of several calls when "
            f"one is shorter than {1000 * MIN_CELL_SECONDS / document['repeats']:.0f} ms), "
            "so that the load of a shared machine disturbs the levels alike. Figures are medians "
            "over the rounds; GB/s is 10^9 bytes of work memory per second of `derive`."
        ),
        "",
        *_machine_lines(document),
        *_load_lines(document),
        "",
        "## Each level's kernels, disassembled",
        "",
        (
            "Counts are instructions in the compiled fill kernels (all lane counts) of each child "
            "process. Vector ops are packed arithmetic, logic, shifts, rotates and shuffles by "
            "widest register; AVX-512-only ops are EVEX-only instructions, mask registers or "
            "registers 16-31."
        ),
        "",
        *_verification_table(document),
    ]
    if document["output_mismatches"]:
        lines += [
            "",
            "**Outputs differ between levels:**",
            "",
            *[f"- {m}" for m in document["output_mismatches"]],
        ]
    else:
        lines += [
            "",
            (
                "Every cell gave the same output on every level (the kernels are bit-exact "
                "across instruction sets)."
            ),
        ]
    lines += ["", "## The matrix (GB/s)", *_matrix_tables(document)]
    lines += _mailing_list_table(document)
    rows = peer_rows(document)
    if rows:
        peers = document["peers"]
        lines += [
            "",
            f"## Peers at {format_size(peers['memory_bytes'])}",
            "",
            (
                "TwoCats rows: the first level's derive. Fraction: of the numpy copy rate with "
                "the same number of threads (argon2id and scrypt allocate their memory on every "
                "call, like the fresh-memory TwoCats row)."
            ),
            "",
            "| what | GB/s | fraction of copy |",
            "|---|---:|---:|",
            *[f"| {name} | {rate:.2f} | {share:.2f} |" for name, rate, share, _ in rows],
            "",
        ]
        if "equal_time" in peers["argon2id"]:
            equal = peers["argon2id"]["equal_time"]
            lines.append(
                f"At equal time ({equal['target_s']:.3f} s, the TwoCats headline time) argon2id "
                f"t=1 p=1 fills {equal['memory_bytes'] / (1 << 20):.0f} MiB (measured "
                f"{equal['median_s']:.3f} s). "
            )
        small = peers["argon2id"]["p1_small"]
        lines.append(
            f"At {format_size(peers['small_bytes'])}: argon2id p=1 {small['gbps']:.2f} "
            f"GB/s, scrypt {peers['scrypt']['small']['gbps']:.2f} GB/s."
        )
    ratios = headline_ratios(document)
    lines += [
        "",
        "## Headline (blake2s, 8 lanes, multiplies 2, 16 KiB blocks, 1 GiB, one thread)",
        "",
        (
            f"- {_fmt(ratios['headline_gbps'])} GB/s on a reused buffer "
            f"(the published C reference: {C_REFERENCE_GBPS['multiplies 2']} GB/s on the project "
            "machine)"
        ),
        f"- {_fmt(ratios['vs_argon2id_p1'])}x argon2id t=1 p=1 at equal memory (goal 6.5x)",
        (
            f"- parallelism 2 on 2 threads: {_fmt(ratios['p2_over_p1'])}x one thread (goal 1.7x); "
            f"CPU seconds per wall second {_fmt(ratios['p2_cpu_per_wall'])} (2.00 would mean both "
            "vCPUs filled memory the whole time)"
        ),
        f"- fresh memory on every call: {_fmt(ratios['fresh_gbps'])} GB/s (goal 4.5)",
        (
            f"- simd over no-vector build, 8 lanes, multiplies 0: "
            f"{_fmt(ratios.get('simd_over_scalar_16MiB'))}x at 16 MiB (goal 2.5x), "
            f"{_fmt(ratios.get('simd_over_scalar_1GiB'))}x at 1 GiB (goal 1.5x)"
        ),
    ]
    parts = document.get("breakdown")
    if parts:
        lines += _breakdown_lines(parts)
    return "\n".join(lines) + "\n"


def _rate(level: dict[str, Any] | None, cell: Cell) -> float | None:
    found = find_cell(level, cell) if level else None
    return None if found is None else float(found["gbps"])


def _takeaways(document: dict[str, Any], levels: Sequence[dict[str, Any]]) -> list[str]:
    """Return the README bullets that compare the best SIMD level with no vectors."""
    best = levels[0] if levels else None
    plain = next((level for level in levels if level["level"] == "none"), None)
    if best is None or plain is None or best is plain:
        return []
    lines = []
    pairs = (
        ("8 lanes, multiplies 2", HEADLINE),
        ("8 lanes, multiplies 0", dataclasses.replace(HEADLINE, multiplies=0)),
        ("16 lanes (blake2b), multiplies 2", dataclasses.replace(HEADLINE, hash_type="blake2b",
                                                                  lanes=16)),
    )  # fmt: skip
    parts = []
    for name, cell in pairs:
        simd, scalar = _rate(best, cell), _rate(plain, cell)
        if simd and scalar:
            parts.append(f"{name} {simd:.2f} against {scalar:.2f} GB/s ({simd / scalar:.2f}x)")
    if parts:
        lines.append(
            f"- What SIMD buys at 1 GiB, one thread ({best['label']} against no vectors): "
            + "; ".join(parts)
            + "."
        )
    chain = document.get("breakdown") or {}
    if "chain_step_ns" in chain:
        lines.append(
            f"- With multiplies 2 the serial multiply chain is the critical path "
            f"({chain['chain_step_ns']:.2f} ns per step; {chain['chain_alone_s']:.3f} s of the "
            f"headline's {chain['total_s']:.3f} s), so the rate grows with the lane count (which "
            "shortens the chain) and hardly with the instruction set."
        )
    return lines


def performance_section(document: dict[str, Any], plot_name: str = "matrix.png") -> str:
    """Return the README "Performance" section (``bench/results/PERFORMANCE.md``)."""
    levels = [level for level in document["levels"] if "cells" in level]
    ratios = headline_ratios(document)
    header = "| hash, lanes | " + " | ".join(level["label"] for level in levels) + " |"
    lines = [
        "## Performance",
        "",
        (
            "TwoCats fill rate of `twocats.kdf.derive` in GB/s of memory filled (10^9 bytes/s), "
            "1 GiB (`mem_cost=20`), 16 KiB blocks, multiplies 2, one thread, on a reused buffer; "
            "each instruction-set level is a separate process whose kernels were disassembled "
            "and checked against the level."
        ),
        "",
        header,
        "|---|" + "---:|" * len(levels),
    ]
    for hash_type, lanes in FULL_CONFIGS:
        rates = [find_cell(level, Cell(hash_type, lanes, 2, 20, 1)) for level in levels]
        if any(rates):
            lines.append(
                f"| {hash_type}, {lanes} | "
                + " | ".join(_fmt(r["gbps"] if r else None) for r in rates)
                + " |"
            )
    lines += [
        "",
        f"![TwoCats fill rate by lanes and instruction set](bench/results/{plot_name})",
        "",
        (
            f"- Headline (blake2s, 8 lanes, multiplies 2, 1 GiB, one thread): "
            f"{_fmt(ratios['headline_gbps'])} GB/s, {_fmt(ratios['vs_argon2id_p1'])}x argon2id "
            f"(t=1, p=1, same memory); parallelism 2 on 2 threads "
            f"{_fmt(ratios['p2_over_p1'])}x; fresh memory on every call "
            f"{_fmt(ratios['fresh_gbps'])} "
            "GB/s."
        ),
    ]
    lines += _takeaways(document, levels)
    rows = peer_rows(document)
    copy = next((rate for name, rate, _, _ in rows if name == "numpy copy, 1 thread"), None)
    if copy:
        lines.append(f"- The memory ceiling: numpy copies {copy:.2f} GB/s on one thread.")
    lines += [
        "",
        f"Measured {document['date']} with `{document['command']}`:",
        "",
        *_machine_lines(document),
        "",
        (
            "Every table, the peers (argon2id, scrypt, memory bandwidth) and the breakdown of "
            "where the time goes are in [bench/results/matrix.md](bench/results/matrix.md)."
        ),
    ]
    return "\n".join(lines) + "\n"


def write_results(document: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write the JSON, markdown, PERFORMANCE.md and plots of ``document`` into ``out_dir``."""
    from bench import plots

    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "matrix.json", out_dir / "matrix.md", out_dir / "PERFORMANCE.md"]
    written[0].write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    written[1].write_text(markdown_report(document))
    written[2].write_text(performance_section(document))
    written += plots.plot_all(document, out_dir)
    return written


def _summary_levels(levels: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep, in each level, only the cells of the headline's memory, multiplies and threads."""
    keep = {
        "mem_cost": HEADLINE.mem_cost,
        "multiplies": HEADLINE.multiplies,
        "parallelism": HEADLINE.parallelism,
        "variant": "2015",
        "fresh": False,
    }
    summary = []
    for level in levels:
        cells = [c for c in level.get("cells", []) if all(c[k] == v for k, v in keep.items())]
        summary.append({**level, "cells": cells} if "cells" in level else level)
    return summary


def _failures(document: dict[str, Any]) -> list[str]:
    """Name every level that failed or did not verify, every wrong vector and every mismatch."""
    failed = [
        f"level {level['level']}"
        for level in document["levels"]
        if "error" in level or not level["check"]["verified"]
    ]
    failed += [
        f"mailing-list output, {row['level']} lanes {row['lanes']}"
        for row in document["mailing_list_check"]
        if not row["matches_published"]
    ]
    return failed + [str(message) for message in document["output_mismatches"]]


def smoke(out_dir: Path | None = None) -> int:
    """The CI run: the host level at the cheapest size, tiny peers, every report; no timing checks.

    The child shares the project's kernel cache, so after the test suite it compiles nothing.
    """
    document = run_matrix(
        full=False,
        level_keys=["native"],
        repeats=1,
        cache_root=cache_root(),
        cells=[Cell("blake2s", 8, 2, 10, 1)],
        per_level_cache=False,
        peer_bytes=1 << 20,
        small_peer_bytes=1 << 20,
    )
    with tempfile.TemporaryDirectory(prefix="twocats-smoke-") as temporary:
        for path in write_results(document, out_dir or Path(temporary)):
            _say(f"wrote {path}")
    print(format_table(document["levels"]))
    failures = _failures(document)
    for failure in failures:
        _say(f"failed: {failure}")
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench matrix [--full]``: run the matrix, write the results, print a summary."""
    parser = argparse.ArgumentParser(
        prog="python -m bench matrix", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--full", action="store_true", help="the full matrix, into bench/results/")
    parser.add_argument("--level", action="append", dest="levels", help="level (repeatable)")
    parser.add_argument("--repeats", type=int, default=None, help="timed calls per cell")
    parser.add_argument("--out", type=Path, default=None, help="results folder")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="kernel cache root (default: a fresh temporary one, so every level compiles cold)",
    )
    parser.add_argument("--no-peers", action="store_true", help="skip argon2id, scrypt, bandwidth")
    parser.add_argument(
        "--render", type=Path, default=None, metavar="JSON",
        help="measure nothing: redraw the reports and plots of a saved matrix.json",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.render is not None:
        document = json.loads(args.render.read_text())
        if "peers" in document:
            document["breakdown"] = breakdown(document)
        for path in write_results(document, args.out or args.render.parent):
            _say(f"wrote {path}")
        return 0
    repeats = args.repeats or (5 if args.full else 3)
    out_dir = args.out or (RESULTS_DIR if args.full else RESULTS_DIR / "tmp")
    with tempfile.TemporaryDirectory(prefix="twocats-matrix-") as temporary:
        document = run_matrix(
            full=args.full,
            level_keys=args.levels,
            repeats=repeats,
            cache_root=args.cache_dir or Path(temporary),
            with_peers=not args.no_peers,
        )
    for path in write_results(document, out_dir):
        _say(f"wrote {path}")
    print(format_table(_summary_levels(document["levels"])))
    failures = _failures(document)
    for failure in failures:
        _say(f"failed: {failure}")
    return 1 if failures else 0
