"""The TwoCats trade-off matrix: ISA level x lanes x multiplies x memory x threads, with peers.

What each run measures (``python -m bench matrix --full`` regenerates ``bench/results/``):

* Every ISA level (AVX-512 as the CPU's tuning compiles it, AVX-512 forced to 512-bit vectors, AVX2,
  SSE4.2, SSE2 as the x86-64 baseline, and no vectorization at all) runs in a child process of its
  own, with its own kernel cache and the environment recipe of spec numba-simd.md §3.2; the child's
  kernels are disassembled and checked against the level (:mod:`twocats.perf.levels`).
* In each level: ``derive`` on a reused buffer for blake2s with 1, 2, 4 and 8 lanes, blake2b with 8
  and 16 and sha512 with 16, multiplies 0 and 2, 16 MiB (in cache) and 1 GiB, parallelism 1 (one
  thread) and 2 (two threads); the rate is GB/s of memory filled per derivation.
* In each level: the March 2014 mailing-list configuration at full size (variant 2014-03, blake2s,
  mem_cost 21 = 2 GiB, multiplies 0, parallelism 2, lanes 8 against lanes 1), checked against the
  published outputs.
* In the first level also the headline configuration with fresh memory on every call (allocation
  and page faults included, as argon2 pays them).
* The peers of :mod:`bench.matrix.peers`, and the breakdown of where the headline configuration's
  time goes.

Without ``--full`` a short matrix runs (the CLI's ``twocats bench`` levels, blake2s with 1 and 8
lanes, 16 MiB and 1 GiB, multiplies 2, one thread) and writes to ``bench/results/tmp/``.  This
module runs the measurements; the cells are in :mod:`bench.matrix.cells` and the reports are
written by :mod:`bench.matrix.report`.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_DIR, commit, load_average
from bench.matrix import peers as peer_bench
from bench.matrix.cells import (
    HEADLINE,
    MAILING_LIST,
    SMALL_MEM_COST,
    TINY_MEM_COST,
    find_cell,
    first_level_extras,
    mailing_list_cells,
    matrix_cells,
)
from bench.matrix.publish import write_results
from bench.matrix.report import summary_levels
from twocats._machine import machine_memory, usable_cpus
from twocats.perf.levels import Cell, check_outputs, format_table, level_caches, run_levels
from twocats.simd import isa
from twocats.simd.cache import cache_root

__all__ = ["breakdown", "machine_description", "main", "run_matrix", "smoke"]


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


def machine_description() -> dict[str, Any]:
    """Describe the machine and software the run measured."""
    host_name, host_features = isa.host_target()
    memory = machine_memory() or 0
    return {
        "lscpu": _lscpu(),
        "llvm_host_cpu": host_name,
        "llvm_host_tier": isa.features_tier(host_name, host_features),
        "emulation": isa.emulation(),
        "cpus_usable": usable_cpus(),
        "memory_gib": round(memory / (1 << 30), 1),
        "kernel": platform.release(),
        "transparent_hugepages": _read("/sys/kernel/mm/transparent_hugepage/enabled").strip(),
        "python": platform.python_version(),
        "versions": {
            name: _version(name)
            for name in ("numba", "llvmlite", "numpy", "argon2-cffi", "argon2-cffi-bindings")
        },
        "openssl": __import__("ssl").OPENSSL_VERSION,
        "git_commit": commit(short=True),
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
        cache_dir=level_caches(cache_root, separate=per_level_cache),
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
        for mem_cost in (TINY_MEM_COST, SMALL_MEM_COST, HEADLINE.mem_cost)
        for multiplies in (0, HEADLINE.multiplies)
    }
    fresh = find_cell(level, dataclasses.replace(HEADLINE, fresh=True))
    if fresh is None or any(value is None for value in found.values()):
        return None
    seconds = {key: float(value["median_s"]) for key, value in found.items() if value}
    mib = HEADLINE.memory_bytes >> 20
    tiny, small = 1 << (TINY_MEM_COST - 10), 1 << (SMALL_MEM_COST - 10)

    def per_mib(multiplies: int) -> float:
        return (seconds[SMALL_MEM_COST, multiplies] - seconds[TINY_MEM_COST, multiplies]) / (
            small - tiny
        )

    fixed = seconds[TINY_MEM_COST, 0] - per_mib(0) * tiny
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
    print(format_table(summary_levels(document["levels"])))
    failures = _failures(document)
    for failure in failures:
        _say(f"failed: {failure}")
    return 1 if failures else 0
