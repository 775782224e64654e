"""PNG plots of a matrix result document (see :mod:`bench.matrix`), drawn with matplotlib (Agg).

* ``matrix.png``: GB/s against lanes, one line per ISA level, in four panels (16 MiB / 1 GiB by
  multiplies 0 / 2), one thread; blake2s for 1-8 lanes (solid), blake2b for 8 and 16 (dotted); the
  1 GiB panels carry the one-thread numpy copy rate as the memory ceiling.
* ``matrix_p2.png``: the same with parallelism 2 on two threads.
* ``peers.png``: TwoCats, argon2id, scrypt and numpy copy/fill at 1 GiB, with each bar's fraction of
  the copy rate.
* ``breakdown.png``: where the headline configuration's time goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from bench.matrix_cells import find_cell, shared_mem_costs
from bench.matrix_report import peer_rows
from twocats.kdf.limits import format_size
from twocats.simd.levels import Cell

__all__ = ["plot_all", "plot_breakdown", "plot_matrix", "plot_peers"]

_DPI = 110


def _series(
    level: dict[str, Any],
    hash_type: str,
    lanes_list: tuple[int, ...],
    multiplies: int,
    mem_cost: int,
    parallelism: int,
) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for lanes in lanes_list:
        found = find_cell(level, Cell(hash_type, lanes, multiplies, mem_cost, parallelism))
        if found is not None:
            xs.append(lanes)
            ys.append(float(found["gbps"]))
    return xs, ys


def plot_matrix(document: dict[str, Any], path: Path, parallelism: int = 1) -> Path | None:
    """Draw GB/s against lanes per ISA level (four panels); return the path, or None if empty."""
    levels = [level for level in document["levels"] if "cells" in level]
    mem_costs = shared_mem_costs(levels)
    multiplies = sorted(
        {c["multiplies"] for lv in levels for c in lv["cells"] if c["variant"] == "2015"}
    )
    if not mem_costs or not multiplies:
        return None
    figure, axes = plt.subplots(
        len(mem_costs),
        len(multiplies),
        figsize=(5.2 * len(multiplies), 3.8 * len(mem_costs)),
        squeeze=False,
        sharex=True,
    )
    peers = document.get("peers")
    drawn = False
    for row, mem_cost in enumerate(mem_costs):
        for col, mult in enumerate(multiplies):
            axis = axes[row][col]
            for index, level in enumerate(levels):
                color = f"C{index}"
                xs, ys = _series(level, "blake2s", (1, 2, 4, 8), mult, mem_cost, parallelism)
                if xs:
                    drawn = True
                    axis.plot(xs, ys, marker="o", color=color, label=level["label"])
                xs, ys = _series(level, "blake2b", (8, 16), mult, mem_cost, parallelism)
                if xs:
                    axis.plot(xs, ys, marker="s", linestyle=":", color=color)
            if peers and mem_cost >= 20:
                key = "copy_2t" if parallelism > 1 else "copy_1t"
                ceiling = float(peers["bandwidth"][key]["gbps"])
                axis.axhline(ceiling, color="black", linewidth=0.8, linestyle="--")
                axis.annotate(
                    "numpy copy",
                    (1, ceiling),
                    textcoords="offset points",
                    xytext=(2, 3),
                    fontsize=8,
                )
            size = (
                f"{(1024 << mem_cost) >> 20} MiB"
                if mem_cost < 20
                else f"{(1024 << mem_cost) >> 30} GiB"
            )
            axis.set_title(f"{size}, multiplies {mult}, parallelism {parallelism}", fontsize=10)
            axis.set_xscale("log", base=2)
            axis.set_xticks([1, 2, 4, 8, 16])
            axis.set_xticklabels(["1", "2", "4", "8", "16"])
            axis.set_ylim(bottom=0)
            axis.grid(True, alpha=0.3)
            if col == 0:
                axis.set_ylabel("GB/s of memory filled")
            if row == len(mem_costs) - 1:
                axis.set_xlabel("lanes (blake2s solid, blake2b dotted)")
    if not drawn:
        plt.close(figure)
        return None
    labelled: dict[str, Any] = {}
    for axis in axes.flat:
        handles, labels = axis.get_legend_handles_labels()
        labelled.update(zip(labels, handles, strict=True))
    figure.legend(
        list(labelled.values()),
        list(labelled),
        fontsize=8,
        loc="lower center",
        ncol=min(len(labelled), 6),
    )
    figure.suptitle(f"TwoCats fill rate by lanes and ISA level\n{document['date']}", fontsize=10)
    figure.tight_layout(rect=(0, 0.05, 1, 1))
    figure.savefig(path, dpi=_DPI)
    plt.close(figure)
    return path


def plot_peers(document: dict[str, Any], path: Path) -> Path | None:
    """Draw the 1 GiB peer comparison as horizontal bars; return the path, or None if no peers."""
    rows = peer_rows(document)
    if not rows:
        return None
    rows = sorted(rows, key=lambda item: item[1])
    figure, axis = plt.subplots(figsize=(8.5, 0.45 * len(rows) + 1.2))
    colors = [
        "C2" if name.startswith("TwoCats") else "C7" if name.startswith("numpy") else "C3"
        for name, *_ in rows
    ]
    positions = range(len(rows))
    axis.barh(list(positions), [rate for _, rate, _, _ in rows], color=colors)
    axis.set_yticks(list(positions))
    axis.set_yticklabels([name for name, *_ in rows], fontsize=8)
    for position, (_, rate, share, _) in zip(positions, rows, strict=False):
        axis.annotate(
            f"{rate:.2f} ({share:.0%} of copy)",
            (rate, position),
            textcoords="offset points",
            xytext=(3, -3),
            fontsize=8,
        )
    size = format_size(int(document["peers"]["memory_bytes"]))
    axis.set_xlabel(f"GB/s of memory ({size})")
    axis.set_xlim(0, max(rate for _, rate, _, _ in rows) * 1.35)
    axis.set_title(f"TwoCats and its peers at {size}", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=_DPI)
    plt.close(figure)
    return path


def plot_breakdown(document: dict[str, Any], path: Path) -> Path | None:
    """Draw the headline time as one stacked bar (plus page faults); None without a breakdown."""
    parts = document.get("breakdown")
    if not parts:
        return None
    figure, axis = plt.subplots(figsize=(8.5, 3.4))
    left = 0.0
    items = [
        *parts["parts_s"].items(),
        ("page faults (fresh memory only)", parts["page_faults_extra_s"]),
    ]
    for index, (name, seconds) in enumerate(items):
        width = max(float(seconds), 0.0)
        hatch = "//" if index == len(items) - 1 else None
        axis.barh(
            [0],
            [width],
            left=left,
            color=f"C{index}",
            hatch=hatch,
            label=f"{name}: {seconds:.3f} s",
        )
        left += width
    axis.set_yticks([])
    axis.set_xlabel("seconds per derivation (blake2s, 8 lanes, multiplies 2, 1 GiB, one thread)")
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.9), ncol=2)
    axis.set_title(f"Where the headline time goes ({parts['level']})", fontsize=11)
    figure.subplots_adjust(left=0.03, right=0.97, top=0.88, bottom=0.62)
    figure.savefig(path, dpi=_DPI)
    plt.close(figure)
    return path


def plot_all(document: dict[str, Any], out_dir: Path) -> list[Path]:
    """Draw every plot the document has data for into ``out_dir``; return the files written."""
    drawn = [
        plot_matrix(document, out_dir / "matrix.png", parallelism=1),
        plot_matrix(document, out_dir / "matrix_p2.png", parallelism=2),
        plot_peers(document, out_dir / "peers.png"),
        plot_breakdown(document, out_dir / "breakdown.png"),
    ]
    return [path for path in drawn if path is not None]
