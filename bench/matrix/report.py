"""The markdown report of the TwoCats trade-off matrix, and the figures other pages read from it.

It reads a result document of :func:`bench.matrix.runner.run_matrix` (or a saved ``matrix.json``)
and measures nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from bench.harness import heading
from bench.matrix.cells import (
    C_REFERENCE_GBPS,
    HEADLINE,
    MAILING_LIST_PUBLISHED,
    copy_ceiling,
    find_cell,
    peer_rows,
    shared_mem_costs,
)
from twocats._units import format_size
from twocats.perf.levels import MIN_CELL_SECONDS, Cell
from twocats.simd.asm import describe_check

__all__ = ["fmt", "headline_ratios", "machine_lines", "markdown_report", "summary_levels"]


def fmt(value: float | None, digits: int = 2) -> str:
    """A rate or ratio with `digits` decimals, ``-`` where it was not measured."""
    return "-" if value is None else f"{value:.{digits}f}"


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
        ceiling = copy_ceiling(document, parallelism)
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
            row = f"| {hash_type} | {lanes} | {multiplies} | " + " | ".join(map(fmt, rates))
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


def machine_lines(document: dict[str, Any]) -> list[str]:
    """The bullets naming the machine and the software of a matrix run."""
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
        *heading(
            "TwoCats trade-off matrix and peers",
            f"Regenerate with `{document['command']}`. Run {document['date']}, "
            f"{document['wall_s'] / 60:.0f} minutes. Every level runs in a child process of its "
            "own, and each cell is timed at all levels in rotation (one untimed call per level, "
            f"then {document['repeats']} rounds of one call per level, or of several calls when "
            f"one is shorter than {1000 * MIN_CELL_SECONDS / document['repeats']:.0f} ms), "
            "so that the load of a shared machine disturbs the levels alike. Figures are medians "
            "over the rounds; GB/s is 10^9 bytes of work memory per second of `derive`.",
        ),
        "",
        *machine_lines(document),
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
            f"- {fmt(ratios['headline_gbps'])} GB/s on a reused buffer "
            f"(the published C reference: {C_REFERENCE_GBPS['multiplies 2']} GB/s on the project "
            "machine)"
        ),
        f"- {fmt(ratios['vs_argon2id_p1'])}x argon2id t=1 p=1 at equal memory (goal 6.5x)",
        (
            f"- parallelism 2 on 2 threads: {fmt(ratios['p2_over_p1'])}x one thread (goal 1.7x); "
            f"CPU seconds per wall second {fmt(ratios['p2_cpu_per_wall'])} (2.00 would mean both "
            "vCPUs filled memory the whole time)"
        ),
        f"- fresh memory on every call: {fmt(ratios['fresh_gbps'])} GB/s (goal 4.5)",
        (
            f"- simd over no-vector build, 8 lanes, multiplies 0: "
            f"{fmt(ratios.get('simd_over_scalar_16MiB'))}x at 16 MiB (goal 2.5x), "
            f"{fmt(ratios.get('simd_over_scalar_1GiB'))}x at 1 GiB (goal 1.5x)"
        ),
    ]
    parts = document.get("breakdown")
    if parts:
        lines += _breakdown_lines(parts)
    return "\n".join(lines) + "\n"


def summary_levels(levels: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
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
