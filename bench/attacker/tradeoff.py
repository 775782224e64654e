"""The ranking trade-off attack on Argon2's and TwoCats' graphs, against the published tables.

``python -m bench tradeoff [--blocks 65536] [--seeds 4] [--out DIR]`` runs
:func:`twocats.perf.tradeoff.ranking.attack` on 1-pass Argon2d (beside the Argon2 specification's
table tab:generic3), Argon2id, 3-pass Argon2i, the generic power graphs for gamma 1, 2 and 3
(beside the specification's tab:comp-alpha and tab:depth-alpha) and TwoCats' moderate profile,
hybrid and side-channel-resistant, resized to ``--blocks``.  It writes ``tradeoff.json`` (every row
of every graph, the seeds and the commit), ``tradeoff.md`` (the figures read at the published
memory fractions by log-log interpolation, with their ratio to the published ones) and
``tradeoff.png`` (C and D against alpha for Argon2d, Argon2id and both TwoCats modes).  The
figures are counts of compression calls, so they do not depend on the machine or its load.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_DIR, commit, heading, machine, write_document
from twocats.perf.tradeoff import graphs
from twocats.perf.tradeoff.ranking import Attack, at_alpha, attack
from twocats.perf.tradeoff.spec import twocats_params

__all__ = ["main", "smoke"]

#: Memory fractions of the published tables.
ALPHAS = (1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7)

#: Published (C, D) per memory fraction: tab:generic3 for Argon2d, and tab:comp-alpha with
#: tab:depth-alpha for the power graphs (which stop at 1/6).
PUBLISHED: dict[str, list[tuple[float, float]]] = {
    "argon2d:t=1,lanes=1": [
        (1.5, 1.5),
        (4, 2.8),
        (20.2, 5.5),
        (344, 10.3),
        (4660, 17),
        (2**18, 27),
    ],
    "power:1": [(1.6, 1.6), (2.9, 2.5), (7.3, 4), (16.4, 5.8), (59, 8.7)],
    "power:2": [(1.5, 1.5), (4, 2.6), (20.2, 5.4), (344, 10.7), (4700, 17)],
    "power:3": [(1.4, 1.3), (4.3, 2.5), (28.1, 5.3), (1040, 10.1), (2**17, 18)],
}

#: The graphs the plot draws, with their line styles.
PLOTTED = (
    ("argon2d:t=1,lanes=1", "#c92a2a", "-"),
    ("argon2id:t=1,lanes=1", "#e8590c", "--"),
    ("twocats hybrid", "#2b8a3e", "-"),
    ("twocats side-channel-resistant", "#1971c2", "--"),
)


def _builders(blocks: int) -> dict[str, Callable[[int], graphs.Graph]]:
    hybrid = twocats_params("moderate", blocks)
    resistant = dataclasses.replace(hybrid, side_channel_resistant=True)
    return {
        "argon2d:t=1,lanes=1": functools.partial(graphs.argon2, "argon2d", blocks, 1, 1),
        "argon2id:t=1,lanes=1": functools.partial(graphs.argon2, "argon2id", blocks, 1, 1),
        "argon2i:t=3,lanes=1": functools.partial(graphs.argon2, "argon2i", blocks, 3, 1),
        "power:1": functools.partial(graphs.power, 1.0, blocks),
        "power:2": functools.partial(graphs.power, 2.0, blocks),
        "power:3": functools.partial(graphs.power, 3.0, blocks),
        "twocats hybrid": functools.partial(graphs.twocats, hybrid),
        "twocats side-channel-resistant": functools.partial(graphs.twocats, resistant),
    }


def _read(result: Attack, published: list[tuple[float, float]] | None) -> list[dict[str, Any]]:
    """The attack read at each published memory fraction, with the ratio to the published value."""
    readings = []
    for index, alpha in enumerate(ALPHAS):
        reading: dict[str, Any] = {
            "alpha": alpha,
            "C": at_alpha(result.rows, alpha, "C"),
            "D": at_alpha(result.rows, alpha, "D"),
        }
        if published is not None and index < len(published):
            reading["published_C"], reading["published_D"] = published[index]
        readings.append(reading)
    return readings


def _cell(value: float | None) -> str:
    return "not reached" if value is None else f"{value:.4g}"


def _ratio(value: float | None, published: float | None) -> str:
    return "" if value is None or published is None else f" ({value / published:.2f}x)"


def _markdown(document: dict[str, Any]) -> str:
    lines = [
        *heading(
            "The ranking trade-off attack on Argon2 and TwoCats",
            f"Written by `python -m bench tradeoff` at commit `{document['commit'][:12]}`: "
            f"graphs of {document['blocks']} blocks, seeds {document['seeds']} (every figure the "
            "mean over them).  C is compression calls per block and D sequential calls per block, "
            "both relative to the defender's one, when the fraction alpha of the blocks is kept; "
            "they are read at each alpha by log-log interpolation between the attack's rows.  "
            "In brackets: the ratio to the Argon2 specification's figure (tab:generic3 for "
            "Argon2d, tab:comp-alpha and tab:depth-alpha for the power graphs).",
        ),
        "",
        "| graph | E | best alpha*D at alpha | "
        + " | ".join(f"C, D at 1/{round(1 / a)}" for a in ALPHAS)
        + " |",
        "|---|---:|---:|" + "---:|" * len(ALPHAS),
    ]
    for name, entry in document["graphs"].items():
        cells = []
        for reading in entry["readings"]:
            c = _cell(reading["C"]) + _ratio(reading["C"], reading.get("published_C"))
            d = _cell(reading["D"]) + _ratio(reading["D"], reading.get("published_D"))
            cells.append(f"{c}; {d}")
        lines.append(
            f"| {name} | {entry['E']:.3f} | {entry['best_alpha_D']:.3f} at "
            f"{entry['best_alpha']:.3f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


def _plot(document: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6), dpi=110)
    for name, colour, style in PLOTTED:
        rows = [row for row in document["graphs"][name]["rows"] if row["alpha"] < 1]
        alphas = [row["alpha"] for row in rows]
        left.plot(alphas, [row["C"] for row in rows], style, color=colour, label=name)
        right.plot(alphas, [row["D"] for row in rows], style, color=colour, label=name)
    published = PUBLISHED["argon2d:t=1,lanes=1"]
    left.plot(ALPHAS, [c for c, _ in published], "kx", label="Argon2 spec, tab:generic3")
    right.plot(ALPHAS, [d for _, d in published], "kx", label="Argon2 spec, tab:generic3")
    for axis, what in ((left, "C: compression calls per block"), (right, "D: depth per block")):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlim(1.0, 0.06)
        ticks = (1, 2, 3, 4, 6, 8, 12, 16)
        axis.set_xticks([1 / n for n in ticks], ["1" if n == 1 else f"1/{n}" for n in ticks])
        axis.minorticks_off()
        axis.set_xlabel("alpha: fraction of the memory kept")
        axis.set_ylabel(what)
        axis.grid(True, which="both", alpha=0.3)
    left.set_ylim(1, 1e12)
    right.set_ylim(1, 300)
    right.legend(loc="upper left", fontsize=8)
    figure.suptitle("Ranking trade-off attack: penalties for keeping less memory")
    figure.text(
        0.5,
        0.01,
        f"{document['blocks']} blocks, mean of seeds {document['seeds']}, "
        f"commit {document['commit'][:12]} (python -m bench tradeoff)",
        ha="center",
        fontsize=8,
    )
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    figure.savefig(path)
    plt.close(figure)


def _run(blocks: int, seeds: int, out: Path, plot: bool) -> int:
    document: dict[str, Any] = {
        "suite": "tradeoff",
        "machine": machine(),
        "commit": commit(),
        "blocks": blocks,
        "seeds": list(range(seeds)),
        "graphs": {},
    }
    for name, build in _builders(blocks).items():
        result = attack(build, range(seeds))
        print(f"{name}: E = {result.E:.3f}", flush=True)
        best = result.best
        document["graphs"][name] = {
            "graph": result.graph,
            "nodes": result.nodes,
            "E": result.E,
            "best_alpha": best.alpha,
            "best_alpha_D": best.alpha_d,
            "rows": [row.document() for row in result.rows],
            "readings": _read(result, PUBLISHED.get(name)),
        }
    write_document("tradeoff", document, _markdown(document), out)
    if plot:
        _plot(document, out / "tradeoff.png")
    return 0


def main(argv: Sequence[str]) -> int:
    """Run the attack on every graph and write the report."""
    parser = argparse.ArgumentParser(prog="python -m bench tradeoff", description=__doc__)
    parser.add_argument("--blocks", type=int, default=1 << 16)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(list(argv))
    return _run(args.blocks, args.seeds, args.out, plot=True)


def smoke() -> int:
    """Every graph at 1024 blocks and one seed, plot included, into a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        return _run(1024, 1, Path(scratch), plot=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
