"""What a matrix run publishes: its result files and the Performance section.

The section is ``bench/results/PERFORMANCE.md`` and the matrix part of ``docs/performance.md``
(written by ``python -m bench docs``); it reads a result document and measures nothing.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.matrix.cells import FULL_CONFIGS, HEADLINE, find_cell, peer_rows
from bench.matrix.report import fmt, headline_ratios, machine_lines, markdown_report
from twocats.perf.levels import Cell

__all__ = ["performance_section", "write_results"]


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


def _results_link(name: str, root: str) -> str:
    """A link to a report beside the README; on a page elsewhere (`root` set), its path."""
    path = f"bench/results/{name}"
    return f"`{path}`" if root else f"[{path}]({path})"


def performance_section(
    document: dict[str, Any],
    plot_name: str = "matrix.png",
    *,
    root: str = "",
    heading: str = "## Performance",
) -> str:
    """Return the "Performance" section (``bench/results/PERFORMANCE.md``).

    `root` is the path from the page that shows the section to the repository's top (the plot's
    path starts with it; reports are then named, not linked), and `heading` its first line
    (empty for none).
    """
    levels = [level for level in document["levels"] if "cells" in level]
    ratios = headline_ratios(document)
    header = "| hash, lanes | " + " | ".join(level["label"] for level in levels) + " |"
    lines = [
        *([heading, ""] if heading else []),
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
                + " | ".join(fmt(r["gbps"] if r else None) for r in rates)
                + " |"
            )
    lines += [
        "",
        f"![TwoCats fill rate by lanes and instruction set]({root}bench/results/{plot_name})",
        "",
        (
            f"- Headline (blake2s, 8 lanes, multiplies 2, 1 GiB, one thread): "
            f"{fmt(ratios['headline_gbps'])} GB/s, {fmt(ratios['vs_argon2id_p1'])}x argon2id "
            f"(t=1, p=1, same memory); parallelism 2 on 2 threads "
            f"{fmt(ratios['p2_over_p1'])}x; fresh memory on every call "
            f"{fmt(ratios['fresh_gbps'])} "
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
        *machine_lines(document),
        "",
        (
            "Every table, the peers (argon2id, scrypt, memory bandwidth) and the breakdown of "
            f"where the time goes are in {_results_link('matrix.md', root)}."
        ),
    ]
    return "\n".join(lines) + "\n"


def write_results(document: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write the JSON, markdown, PERFORMANCE.md and plots of ``document`` into ``out_dir``."""
    from bench.matrix import plots

    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "matrix.json", out_dir / "matrix.md", out_dir / "PERFORMANCE.md"]
    written[0].write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    written[1].write_text(markdown_report(document))
    written[2].write_text(performance_section(document))
    written += plots.plot_all(document, out_dir)
    return written
