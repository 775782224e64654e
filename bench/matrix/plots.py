"""PNG plots of a matrix result document (see :mod:`bench.matrix.runner`), drawn with matplotlib.

* ``matrix.png``: GB/s against lanes, one line per ISA level, in four panels (16 MiB / 1 GiB by
  multiplies 0 / 2), one thread; blake2s for 1-8 lanes (solid), blake2b for 8 and 16 (dotted); the
  1 GiB panels carry the one-thread numpy copy rate as the memory ceiling.
* ``matrix_p2.png``: the same with parallelism 2 on two threads.
* ``peers.png``: TwoCats, argon2id, scrypt and numpy copy/fill at 1 GiB, with each bar's fraction of
  the copy rate.
* ``breakdown.png``: where the headline configuration's time goes.

Every figure carries a caption naming what was measured, the machine and its load average.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from bench.matrix.cells import HEADLINE, find_cell, peer_rows, shared_mem_costs
from twocats._units import format_size
from twocats.perf.levels import Cell

__all__ = ["plot_all", "plot_breakdown", "plot_matrix", "plot_peers"]

_DPI = 110

#: One marker per ISA level, so that levels whose lines overlap stay apart.
_MARKERS = ("o", "s", "^", "v", "D", "X", "P", "*")

#: Bar colours of the peer plot: TwoCats, other password hashes, numpy memory baselines.
_TWOCATS, _PEER, _BASELINE = "#2b8a3e", "#c92a2a", "#868e96"


def _machine_text(document: dict[str, Any]) -> str:
    """Name the machine and its load average in one sentence."""
    machine = document.get("machine", {})
    cpu = machine.get("lscpu", {}).get("Model name", "unknown CPU")
    host = machine.get("llvm_host_cpu")
    text = f"Measured {document.get('date', '')} on {cpu}" + (f" ({host})" if host else "")
    if machine.get("cpus_usable"):
        text += f", {machine['cpus_usable']} usable CPUs"
    load = document.get("load_average") or {}
    if load.get("start") and load.get("end"):
        start, end = load["start"][0], load["end"][0]
        text += f"; load average {start:.1f} at the start, {end:.1f} at the end"
    return text + "."


def _caption(figure: Any, document: dict[str, Any], what: str, width: int = 150) -> None:
    """Write ``what`` and the machine sentence along the bottom of ``figure``."""
    text = textwrap.fill(f"{what} {_machine_text(document)}", width)
    figure.text(0.5, 0.01, text, ha="center", va="bottom", fontsize=8, color="#333333")


def _series(
    level: dict[str, Any], cell: Cell, hash_type: str, lanes_list: tuple[int, ...]
) -> tuple[list[int], list[float]]:
    """Return the lanes and GB/s of ``level``'s cells like ``cell`` with each of ``lanes_list``."""
    xs, ys = [], []
    for lanes in lanes_list:
        found = find_cell(level, dataclasses.replace(cell, hash_type=hash_type, lanes=lanes))
        if found is not None:
            xs.append(lanes)
            ys.append(float(found["gbps"]))
    return xs, ys


def _matrix_panel(
    axis: Any,
    levels: list[dict[str, Any]],
    document: dict[str, Any],
    cell: Cell,
) -> bool:
    """Draw one panel of :func:`plot_matrix`; return whether any TwoCats line was drawn."""
    drawn = False
    for index, level in enumerate(levels):
        style = {"color": f"C{index}", "marker": _MARKERS[index % len(_MARKERS)], "markersize": 6}
        xs, ys = _series(level, cell, "blake2s", (1, 2, 4, 8))
        if xs:
            drawn = True
            axis.plot(xs, ys, label=level["label"], **style)
        xs, ys = _series(level, cell, "blake2b", (8, 16))
        if xs:
            axis.plot(xs, ys, linestyle=":", **style)
    peers = document.get("peers")
    if peers and cell.mem_cost >= 20:
        key = "copy_2t" if cell.parallelism > 1 else "copy_1t"
        ceiling = float(peers["bandwidth"][key]["gbps"])
        axis.axhline(ceiling, color="black", linewidth=0.8, linestyle="--")
        threads = "2 threads" if cell.parallelism > 1 else "1 thread"
        axis.text(
            16, ceiling * 0.97, f"numpy copy, {threads}: {ceiling:.1f} GB/s",
            ha="right", va="top", fontsize=8,
        )  # fmt: skip
    size = format_size(cell.memory_bytes)
    axis.set_title(f"{size}, multiplies {cell.multiplies}", fontsize=10)
    axis.set_xscale("log", base=2)
    axis.set_xticks([1, 2, 4, 8, 16])
    axis.set_xticklabels(["1", "2", "4", "8", "16"])
    axis.tick_params(labelbottom=True)
    axis.set_ylim(bottom=0)
    axis.grid(True, alpha=0.3)
    return drawn


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
        figsize=(5.4 * len(multiplies), 3.6 * len(mem_costs) + 1.6),
        squeeze=False,
        sharex=True,
    )
    drawn = False
    for row, mem_cost in enumerate(mem_costs):
        for col, mult in enumerate(multiplies):
            axis = axes[row][col]
            cell = Cell("blake2s", 8, mult, mem_cost, parallelism)
            drawn = _matrix_panel(axis, levels, document, cell) or drawn
            if col == 0:
                axis.set_ylabel("GB/s of memory filled")
            if row == len(mem_costs) - 1:
                axis.set_xlabel("lanes")
    if not drawn:
        plt.close(figure)
        return None
    labelled: dict[str, Any] = {}
    for axis in axes.flat:
        handles, labels = axis.get_legend_handles_labels()
        labelled.update(zip(labels, handles, strict=True))
    labelled["blake2s (1-8 lanes)"] = Line2D([], [], color="black")
    labelled["blake2b (8, 16 lanes)"] = Line2D([], [], color="black", linestyle=":")
    figure.legend(
        list(labelled.values()),
        list(labelled),
        fontsize=8,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.07),
        ncol=min(len(labelled), 8),
    )
    threads = "two threads" if parallelism > 1 else "one thread"
    figure.suptitle(
        f"TwoCats fill rate by lanes and ISA level: parallelism {parallelism}, {threads}",
        fontsize=11,
    )
    _caption(
        figure,
        document,
        "Each point: the memory one derivation fills (16 MiB or 1 GiB, 10^9 bytes per GB) divided "
        f"by its median time over {document.get('repeats', '?')} runs, with the memory reused "
        "between calls. Levels whose lines overlap measure alike; the numbers are in matrix.md.",
    )
    figure.tight_layout(rect=(0, 0.13, 1, 1))
    figure.savefig(path, dpi=_DPI)
    plt.close(figure)
    return path


def plot_peers(document: dict[str, Any], path: Path) -> Path | None:
    """Draw the 1 GiB peer comparison as horizontal bars; return the path, or None if no peers."""
    rows = peer_rows(document)
    if not rows:
        return None
    rows = sorted(rows, key=lambda item: item[1])
    figure, axis = plt.subplots(figsize=(9.5, 0.42 * len(rows) + 2.4))
    colors = [
        _TWOCATS if name.startswith("TwoCats") else _BASELINE if name.startswith("numpy") else _PEER
        for name, *_ in rows
    ]
    positions = list(range(len(rows)))
    axis.barh(positions, [rate for _, rate, _, _ in rows], color=colors)
    axis.set_yticks(positions)
    axis.set_yticklabels([name for name, *_ in rows], fontsize=8)
    for position, (_, rate, share, threads) in zip(positions, rows, strict=True):
        copy = "2-thread" if threads > 1 else "1-thread"
        axis.annotate(
            f"{rate:.2f} GB/s, {share:.0%} of {copy} copy",
            (rate, position),
            textcoords="offset points",
            xytext=(3, 0),
            va="center",
            fontsize=8,
        )
    size = format_size(int(document["peers"]["memory_bytes"]))
    axis.set_xlabel(f"GB/s: {size} divided by the median time of one call (longer is faster)")
    axis.set_xlim(0, max(rate for _, rate, _, _ in rows) * 1.45)
    axis.set_title(f"TwoCats and its peers, each filling {size}", fontsize=11)
    axis.legend(
        handles=[
            Patch(color=_TWOCATS, label="TwoCats"),
            Patch(color=_PEER, label="other password hashes"),
            Patch(color=_BASELINE, label="numpy memory baselines"),
        ],
        fontsize=8,
        loc="lower right",
    )
    level = document["levels"][0]["label"] if document["levels"] else "?"
    _caption(
        figure,
        document,
        f"TwoCats: {HEADLINE.hash_type}, {HEADLINE.lanes} lanes, multiplies "
        f"{HEADLINE.multiplies} unless named, {level} kernels; p is the number of threads. "
        "The share compares each bar with the numpy copy on as many threads.",
        width=130,
    )
    figure.tight_layout(rect=(0, 0.07, 1, 1))
    figure.savefig(path, dpi=_DPI)
    plt.close(figure)
    return path


def plot_breakdown(document: dict[str, Any], path: Path) -> Path | None:
    """Draw the headline time as one stacked bar (plus page faults); None without a breakdown."""
    parts = document.get("breakdown")
    if not parts:
        return None
    figure, axis = plt.subplots(figsize=(10.5, 3.1))
    items = [
        *parts["parts_s"].items(),
        ("page faults (fresh memory only)", parts["page_faults_extra_s"]),
    ]
    reused = float(parts["total_s"])
    left = 0.0
    for index, (name, seconds) in enumerate(items):
        width = max(float(seconds), 0.0)
        share = f"{width / reused:.0%}" if width >= 0.005 * reused else "<1%"
        share = "extra" if index == len(items) - 1 else share
        shown = f"{width * 1000:.1f}" if width < 0.01 else f"{width * 1000:.0f}"
        axis.barh(
            [0],
            [width],
            left=left,
            color=f"C{index}",
            hatch="//" if index == len(items) - 1 else None,
            label=f"{name}: {shown} ms ({share})",
        )
        if width > 0.06 * (reused + items[-1][1]):
            axis.text(
                left + width / 2, 0, f"{shown} ms", ha="center", va="center",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 2},
            )  # fmt: skip
        left += width
    for seconds, label in ((reused, "reused buffer"), (left, "fresh memory")):
        axis.axvline(seconds, color="black", linewidth=0.8)
        axis.text(seconds, 0.47, f"{label}: {seconds * 1000:.0f} ms", ha="right", fontsize=8)
    axis.set_ylim(-0.45, 0.62)
    axis.set_yticks([])
    axis.set_xlim(0, left * 1.02)
    axis.set_xlabel("milliseconds per derivation")
    axis.xaxis.set_major_formatter(lambda value, _: f"{value * 1000:.0f}")
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    labels = {level["level"]: level["label"] for level in document["levels"]}
    axis.set_title(
        f"Where one derivation's time goes: {HEADLINE.hash_type}, {HEADLINE.lanes} lanes, "
        f"multiplies {HEADLINE.multiplies}, {format_size(HEADLINE.memory_bytes)}, one thread, "
        f"{labels.get(parts['level'], parts['level'])}",
        fontsize=10,
        loc="left",
    )
    _caption(
        figure,
        document,
        "Parts are differences between median times of matrix cells (1 MiB, 16 MiB, 1 GiB; "
        "multiplies 0 and 2) and hashlib's per-call cost; page faults are what fresh memory on "
        "every call adds. Percentages are shares of the reused-buffer time; the method is in "
        "matrix.md.",
        width=150,
    )
    figure.subplots_adjust(left=0.02, right=0.58, top=0.88, bottom=0.33)
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
