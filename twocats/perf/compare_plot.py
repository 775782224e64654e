"""The drawing of a comparison (:mod:`twocats.perf.compare`): bars of time and memory per algorithm.

The bars are drawn with matplotlib (the ``bench`` extra) on the file-only Agg backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from twocats._extras import missing_extra
from twocats._machine import usable_cpus
from twocats.perf.compare import Row

__all__ = ["plot_rows", "pyplot"]


def pyplot() -> Any:
    """Return matplotlib's pyplot on the file-only Agg backend.

    Without matplotlib this raises an ImportError that names the ``bench`` extra.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise missing_extra(__name__, error, "bench") from None

    return plt


#: Bar labels of the plot: the algorithm names on two lines where they are long.
_PLOT_LABELS: Final = {
    "twocats": "TwoCats",
    "twocats-fresh-memory": "TwoCats\n(fresh memory\neach call)",
    "argon2id": "argon2id\n(t=1)",
    "scrypt": "scrypt\n(r=8, p=1)",
}

_PLOT_COLOURS: Final = {
    "twocats": "#1f77b4",
    "twocats-fresh-memory": "#9ecae1",
    "argon2id": "#ff7f0e",
    "scrypt": "#2ca02c",
}


def _bars(
    axis: Any, rows: Sequence[Row], values: list[float], labels: list[str], ranges: bool
) -> None:
    """Draw one horizontal bar per row with its value written past its end.

    With `ranges`, a black line across each bar spans the row's fastest to slowest round.
    """
    names = [_PLOT_LABELS.get(row.algorithm, row.algorithm) for row in rows]
    positions = list(range(len(rows)))[::-1]
    colours = [_PLOT_COLOURS.get(row.algorithm, "#7f7f7f") for row in rows]
    axis.barh(positions, values, color=colours, height=0.6)
    axis.set_yticks(positions, names)
    ends = list(values)
    if ranges:
        for index, (position, row) in enumerate(zip(positions, rows, strict=True)):
            low, high = row.timing.wall.fastest * 1000, row.timing.wall.slowest * 1000
            axis.plot([low, high], [position, position], color="black", linewidth=1.5)
            ends[index] = max(values[index], high)
    top = max(ends)
    for position, end, label in zip(positions, ends, labels, strict=True):
        axis.text(end + top * 0.02, position, label, va="center", fontsize=9)
    axis.set_xlim(0, top * 1.45)
    axis.spines[["top", "right"]].set_visible(False)


def plot_rows(rows: Sequence[Row], path: str, rounds: int, load: float | None) -> None:
    """Draw both comparisons of ``rows`` (``rounds`` calls a row, at ``load``) into ``path``.

    The equal-memory panel shows wall-clock times, the equal-time panel the memory each fills in
    the CPU time TwoCats takes, the time ``compare`` judges equal time by.
    """
    plt = pyplot()
    equal_memory = [row for row in rows if row.comparison == "equal memory"]
    equal_time = [row for row in rows if row.comparison == "equal time"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5.2))
    memory_mib = equal_memory[0].memory_bytes / (1 << 20)
    times = [row.seconds * 1000 for row in equal_memory]
    _bars(
        left,
        equal_memory,
        times,
        [
            f"{row.seconds * 1000:.0f} ms\n(rounds {row.timing.wall.fastest * 1000:.0f}-"
            f"{row.timing.wall.slowest * 1000:.0f} ms)"
            for row in equal_memory
        ],
        ranges=True,
    )
    left.set_title(f"Equal memory: each hashes {memory_mib:g} MiB", fontsize=12)
    left.set_xlabel("milliseconds per hash, median and range (shorter is cheaper for the server)")
    target = equal_time[0].timing.cpu.median * 1000
    _bars(
        right,
        equal_time,
        [row.memory_bytes / (1 << 20) for row in equal_time],
        [
            f"{row.memory_bytes / (1 << 20):.0f} MiB\nin {row.timing.cpu.median * 1000:.0f} ms "
            "of CPU"
            for row in equal_time
        ],
        ranges=False,
    )
    right.set_title(f"Equal time: as much memory as fits in {target:.0f} ms of CPU", fontsize=12)
    right.set_xlabel("MiB per hash (longer costs an attacker more per guess)")
    figure.text(
        0.5,
        0.015,
        "Equal memory: every algorithm hashes the same amount of memory; the bar is its median "
        f"wall-clock time over {rounds} interleaved rounds, the black line the fastest to slowest "
        "round.\nEqual time: every algorithm gets the CPU time (all threads) TwoCats took "
        f"({target:.0f} ms) and the largest memory that fits in it (scrypt in powers of two, so "
        "it may use less time)."
        + ("" if load is None else f"  Load average {load:.1f} on {usable_cpus()} usable CPUs."),
        ha="center",
        va="bottom",
        fontsize=9,
        wrap=True,
    )
    figure.tight_layout(rect=(0, 0.09, 1, 1))
    figure.savefig(path, dpi=120)
    plt.close(figure)
