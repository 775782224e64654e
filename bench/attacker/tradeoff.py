"""Every trade-off attack on Argon2's and TwoCats' graphs, against every published figure.

``python -m bench tradeoff [--blocks 65536] [--large 1048576] [--seeds 4] [--passes 1,2,3,6]
[--out DIR]`` recomputes, from this tree and in one run:

* the ranking attack's tables: 1-pass Argon2d against the Argon2 specification's tab:generic3,
  the generic power graphs against tab:comp-alpha and tab:depth-alpha, their best time-area
  products and memory reductions against the specification's AT_gamma table, and 3-pass Argon2i
  against the "penalty of about 2^14 at a memory reduction of 3" (``--blocks`` blocks);
* the low-storage attack on Argon2i, versions 1.3 and 1.2.1, against the specification's
  "Memory optimization attack" figures (``--large`` blocks);
* the depth-reducing attack on ``--large``-block Argon2i for each of ``--passes`` against
  Corollary 5.6 of Alwen and Blocki (2016) as the specification quotes it;
* the best attack on each algorithm (``--blocks`` blocks; TwoCats' moderate profile resized to
  them, both modes) against the specification's summary (Argon2d 1.33, 1- and 2-pass Argon2i 5,
  Argon2i with more passes 3).

It writes ``tradeoff.json`` (every figure, with the commit, the seeds and the sizes),
``tradeoff.md`` (each published figure beside the computed one, their ratio, and whether it lies
within a factor of 1.5) and ``tradeoff.png`` (the ranking attack's C and D against alpha).  The
figures are counts of calls and blocks, so they do not depend on the machine or its load; the
seconds each part took are recorded too.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import math
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from bench.harness import RESULTS_DIR, commit, heading, machine, write_document
from twocats.perf.tradeoff import attacks, depth, graphs, iterative, lowstorage, ranking
from twocats.perf.tradeoff.model import Result
from twocats.perf.tradeoff.spec import twocats_params

__all__ = ["main", "smoke"]

#: Memory fractions of the published ranking tables.
ALPHAS: Final = (1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7)

#: Published (C, D) per memory fraction: tab:generic3 for Argon2d, and tab:comp-alpha with
#: tab:depth-alpha for the power graphs (which stop at 1/6).
PUBLISHED: Final[dict[str, list[tuple[float, float]]]] = {
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

#: The specification's AT_gamma table: (least alpha * D, largest memory reduction with alpha * D
#: below 1) per gamma.
AT_GAMMA: Final = {"power:1": (0.78, 3.95), "power:2": (0.72, 3.2), "power:3": (0.67, 3.48)}

#: The factor within which a computed figure counts as reproducing a published one.
FACTOR: Final = 1.5

#: The graphs the plot draws, with their line styles.
PLOTTED: Final = (
    ("argon2d:t=1,lanes=1", "#c92a2a", "-"),
    ("argon2id:t=1,lanes=1", "#e8590c", "--"),
    ("twocats hybrid", "#2b8a3e", "-"),
    ("twocats side-channel-resistant", "#1971c2", "--"),
)


@dataclasses.dataclass
class Checks:
    """Published figures beside the computed ones, in the order they are made."""

    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def add(
        self,
        what: str,
        source: str,
        published: float,
        computed: float | None,
        note: str = "",
        *,
        at_most: bool = False,
    ) -> None:
        """Record one figure; ``at_most``: the computed one must not exceed the published one."""
        ratio = None if computed is None else computed / published
        if ratio is None:
            holds = False
        elif at_most:
            holds = ratio <= 1
        else:
            holds = 1 / FACTOR <= ratio <= FACTOR
        self.rows.append(
            {
                "what": what,
                "source": source,
                "published": published,
                "computed": computed,
                "ratio": ratio,
                "test": "at most" if at_most else f"within {FACTOR}x",
                "holds": holds,
                "note": note,
            }
        )


def _timed(parts: dict[str, float], name: str, run: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    value = run()
    parts[name] = time.perf_counter() - start
    print(f"{name}: {parts[name]:.1f} s", flush=True)
    return value


def _ranking_section(
    blocks: int, seeds: Sequence[int], checks: Checks, parts: dict[str, float]
) -> dict[str, Any]:
    """The ranking attack on the published tables' graphs and on 3-pass Argon2i."""
    builders: dict[str, Callable[[int], graphs.Graph]] = {
        "argon2d:t=1,lanes=1": functools.partial(graphs.argon2, "argon2d", blocks, 1, 1),
        "argon2id:t=1,lanes=1": functools.partial(graphs.argon2, "argon2id", blocks, 1, 1),
        "power:1": functools.partial(graphs.power, 1.0, blocks),
        "power:2": functools.partial(graphs.power, 2.0, blocks),
        "power:3": functools.partial(graphs.power, 3.0, blocks),
    }
    hybrid = twocats_params("moderate", blocks)
    resistant = dataclasses.replace(hybrid, side_channel_resistant=True)
    builders["twocats hybrid"] = functools.partial(graphs.twocats, hybrid)
    builders["twocats side-channel-resistant"] = functools.partial(graphs.twocats, resistant)
    section: dict[str, Any] = {}
    for name, build in builders.items():
        result: Result = _timed(parts, f"ranking {name}", lambda b=build: ranking.attack(b, seeds))
        readings = []
        published = PUBLISHED.get(name, [])
        for index, alpha in enumerate(ALPHAS):
            c = ranking.at_alpha(result.rows, alpha, "C")
            d = ranking.at_alpha(result.rows, alpha, "D")
            readings.append({"alpha": alpha, "C": c, "D": d})
            if index < len(published):
                where = f"{name}, alpha = 1/{round(1 / alpha)}"
                table = "tab:generic3" if name.startswith("argon2d") else "tab:comp-alpha"
                checks.add(f"C, {where}", table, published[index][0], c)
                table = "tab:generic3" if name.startswith("argon2d") else "tab:depth-alpha"
                checks.add(f"D, {where}", table, published[index][1], d)
        least = min(row.alpha * row.D for row in result.rows)
        below = [1 / row.alpha for row in result.rows if row.alpha * row.D < 1]
        if name in AT_GAMMA:
            checks.add(f"least alpha*D, {name}", "AT_gamma table", AT_GAMMA[name][0], least)
            reduction = max(below) if below else None
            checks.add(
                f"memory reduction with alpha*D < 1, {name}",
                "AT_gamma table",
                AT_GAMMA[name][1],
                reduction,
                "the table's runs used a sliding window it does not define",
            )
        section[name] = {**result.document(), "readings": readings, "least_alpha_D": least}
    for version in ("1.2.1", "1.3"):
        name = f"argon2i:t=3,lanes=1,v={version}"
        build = functools.partial(graphs.argon2, "argon2i", blocks, 3, 1, version=version)
        result = _timed(parts, f"ranking {name}", lambda b=build: ranking.attack(b, seeds))
        by_memory = ranking.at_alpha(result.rows, 1 / 3, "C")
        by_nodes = _at_stored(result, 1 / 3)
        checks.add(
            f"C at a memory reduction of 3 (alpha = peak memory), {name}",
            "specification, ranking attack on 3-pass Argon2i",
            2.0**14,
            by_memory,
            "rows are not monotone in alpha once kept blocks are held to their last read",
        )
        checks.add(
            f"C with a third of the blocks stored (alpha = stored / nodes), {name}",
            "specification, ranking attack on 3-pass Argon2i",
            2.0**14,
            by_nodes,
            "the earlier reading of alpha: stored blocks over every pass's blocks",
        )
        section[name] = {**result.document(), "C_at_third_of_memory": by_memory}
    return section


def _at_stored(result: Result, share: float) -> float | None:
    """C where the share of nodes stored crosses ``share``, by log-log interpolation."""
    ordered = sorted(result.rows, key=lambda row: row.extra["stored"])
    for low, high in itertools.pairwise(ordered):
        a, b = low.extra["stored"], high.extra["stored"]
        if a <= share <= b and a < b:
            t = (math.log(share) - math.log(a)) / (math.log(b) - math.log(a))
            return math.exp(math.log(low.C) + t * (math.log(high.C) - math.log(low.C)))
    return None


def _low_storage_section(large: int, checks: Checks, parts: dict[str, float]) -> dict[str, Any]:
    """The low-storage attack on Argon2i, both versions, against the specification's figures."""
    section: dict[str, Any] = {}
    cases = [(1, "1.3"), (2, "1.3"), (3, "1.3"), (2, "1.2.1"), (3, "1.2.1")]
    for passes, version in cases:
        name = f"argon2i:t={passes},lanes=1,v={version}"
        build = functools.partial(graphs.argon2, "argon2i", large, passes, 1, version=version)
        result: Result = _timed(
            parts, f"low-storage {name}", lambda b=build: lowstorage.attack(b, [0])
        )
        figures = result.figures
        source = "specification, memory optimization attack"
        if passes == 1:
            checks.add(f"mean memory L, {name}", source, 0.15, figures["alpha_mean"])
            checks.add(f"advantage on mean memory, {name}", source, 3.5, figures["advantage_mean"])
            checks.add(f"advantage on peak memory, {name}", source, 5.0, figures["advantage_peak"])
        elif version == "1.2.1":
            checks.add(f"mean memory, {name}", source, 0.25, figures["alpha_mean"])
            checks.add(f"advantage on mean memory, {name}", source, 4.0, figures["advantage_mean"])
            checks.add(f"advantage on peak memory, {name}", source, 2.7, figures["advantage_peak"])
        else:
            checks.add(
                f"advantage on peak memory, {name}",
                "specification, summary of tradeoff attacks (1- and 2-pass Argon2i 1.3: 5)",
                5.0,
                figures["advantage_peak"],
                "1.3 XORs every earlier-pass block into its overwrite: the whole memory is held",
            )
        section[name] = result.document()
    return section


def _depth_section(
    large: int, passes: Sequence[int], budget: int, checks: Checks, parts: dict[str, float]
) -> dict[str, Any]:
    """The depth-reducing attack on Argon2i 1.3 at ``large`` blocks, against Corollary 5.6."""
    section: dict[str, Any] = {}
    for t in passes:
        name = f"argon2i:t={t},lanes=1"
        build = functools.partial(graphs.argon2, "argon2i", large, t, 1)
        result: Result = _timed(
            parts, f"depth-reducing {name}", lambda b=build: depth.attack(b, [0], budget=budget)
        )
        ratio = result.figures["AT_over_corollary"]
        bound = result.figures["corollary_5_6"]
        checks.add(
            f"time-area cost over Corollary 5.6's, cores priced, {name}",
            "Alwen and Blocki 2016, Corollary 5.6",
            1.0,
            ratio["priced_cores"],
            f"the corollary's gain over T^2/t is {bound['E']:.3g}, the schedule's "
            f"{result.figures['E_over_peak_memory_time']:.3g} (E = {result.gain:.3g} over the "
            "defender's mean memory)",
            at_most=True,
        )
        checks.add(
            f"time-area cost over Corollary 5.6's, free cores, {name}",
            "Alwen and Blocki 2016, Corollary 5.6",
            1.0,
            ratio["free_cores"],
            at_most=True,
        )
        section[name] = result.document()
    return section


def _summary_section(
    blocks: int, seeds: Sequence[int], budget: int, checks: Checks, parts: dict[str, float]
) -> dict[str, Any]:
    """The best attack on each algorithm, against the specification's summary."""
    hybrid = twocats_params("moderate", blocks)
    resistant = dataclasses.replace(hybrid, side_channel_resistant=True)

    def argon2(kind: str, passes: int) -> Callable[[int], graphs.Graph]:
        return functools.partial(graphs.argon2, kind, blocks, passes, 1)

    cases: list[tuple[str, Callable[[int], graphs.Graph], float | None, str]] = [
        ("argon2d t=1", argon2("argon2d", 1), 1.33, "ranking"),
        ("argon2i t=1", argon2("argon2i", 1), 5.0, "low-storage"),
        ("argon2i t=2", argon2("argon2i", 2), 5.0, "low-storage"),
        ("argon2i t=3", argon2("argon2i", 3), 3.0, "ranking"),
        ("argon2id t=1", argon2("argon2id", 1), None, ""),
        ("twocats hybrid", functools.partial(graphs.twocats, hybrid), None, ""),
        ("twocats side-channel-resistant", functools.partial(graphs.twocats, resistant), None, ""),
    ]
    section: dict[str, Any] = {}
    for name, build, published, attack in cases:
        settings = attacks.Settings(seeds, budget=budget)
        verdict = _timed(parts, f"best {name}", lambda b=build, s=settings: attacks.best(b, s))
        section[name] = verdict.document()
        if name.startswith("twocats"):
            # The iterative attack once more with the multiply chain left out.
            left_out = _timed(
                parts,
                f"iterative {name}, multiply chain left out",
                lambda b=build: iterative.attack(b, seeds, 0.0),
            )
            section[name]["iterative_without_chain"] = {
                "E": left_out.gain,
                "E_free_cores": left_out.gain_free_cores,
                "best": left_out.best.document(left_out.beta),
            }
        if published is None:
            continue
        source = "specification, summary of tradeoff attacks"
        named = next(r for r in verdict.results if r.attack == attack)
        gain = named.figures["advantage_peak"] if attack == "low-storage" else named.gain
        checks.add(f"{attack} gain, {name}", source, published, gain)
        checks.add(
            f"best gain ({verdict.best.attack}), {name}",
            source,
            published,
            verdict.best.gain,
            "amortised over staggered guesses" if verdict.best.basis == "mean" else "",
        )
    return section


def _markdown(document: dict[str, Any]) -> str:
    lines = heading(
        "Trade-off attacks on Argon2 and TwoCats, against the published figures",
        f"Written by `python -m bench tradeoff` at commit `{document['commit'][:12]}`: graphs of "
        f"{document['blocks']} blocks (ranking tables, summary) and {document['large_blocks']} "
        f"blocks (low-storage, depth-reducing), seeds {document['seeds']} (every figure the mean "
        "over them), depth-reducing passes "
        f"{document['passes']}.  Every published figure is beside the one computed in this run; "
        f'"holds" means within a factor of {FACTOR} (or, for a bound, not above it).',
    )
    lines += [
        "",
        "| figure | source | published | computed | ratio | test | holds | note |",
        "|---|---|---:|---:|---:|---|---|---|",
    ]
    for row in document["checks"]:
        computed = "not reached" if row["computed"] is None else f"{row['computed']:.4g}"
        ratio = "" if row["ratio"] is None else f"{row['ratio']:.3g}"
        lines.append(
            f"| {row['what']} | {row['source']} | {row['published']:.4g} | {computed} | {ratio} "
            f"| {row['test']} | {'yes' if row['holds'] else 'no'} | {row['note']} |"
        )
    lines += [
        "",
        "## The best attack on each algorithm",
        "",
        "| graph | best attack | E (cores priced) | E (free cores) | every attack: E |",
        "|---|---|---:|---:|---|",
    ]
    for name, entry in document["summary"].items():
        every = ", ".join(f"{a['attack']} {a['E']:.3g}" for a in entry["attacks"])
        if "iterative_without_chain" in entry:
            every += f"; iterative without the chain {entry['iterative_without_chain']['E']:.3g}"
        lines.append(
            f"| {name} | {entry['attack']} | {entry['E']:.3f} | {entry['E_free_cores']:.3f} "
            f"| {every} |"
        )
    return "\n".join(lines) + "\n"


def _plot(document: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6), dpi=110)
    for name, colour, style in PLOTTED:
        rows = sorted(document["ranking"][name]["rows"], key=lambda row: row["alpha"])
        rows = [row for row in rows if row["alpha"] < 1]
        alphas = [row["alpha"] for row in rows]
        left.plot(alphas, [row["C"] for row in rows], style, color=colour, label=name)
        right.plot(alphas, [row["D"] for row in rows], style, color=colour, label=name)
    published = PUBLISHED["argon2d:t=1,lanes=1"]
    left.plot(ALPHAS, [c for c, _ in published], "kx", label="Argon2 spec, tab:generic3")
    right.plot(ALPHAS, [d for _, d in published], "kx", label="Argon2 spec, tab:generic3")
    labels = ("C: compression calls per block", "D: depth per block (1: addresses known)")
    for axis, what in zip((left, right), labels, strict=True):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlim(1.0, 0.06)
        ticks = (1, 2, 3, 4, 6, 8, 12, 16)
        axis.set_xticks([1 / n for n in ticks], ["1" if n == 1 else f"1/{n}" for n in ticks])
        axis.minorticks_off()
        axis.set_xlabel("alpha: peak memory kept, over the defender's")
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


def _run(
    blocks: int,
    large: int,
    seeds: int,
    passes: Sequence[int],
    budget: int,
    out: Path,
    plot: bool,
) -> int:
    checks = Checks()
    parts: dict[str, float] = {}
    seed_list = list(range(seeds))
    document: dict[str, Any] = {
        "suite": "tradeoff",
        "machine": machine(),
        "commit": commit(),
        "blocks": blocks,
        "large_blocks": large,
        "seeds": seed_list,
        "passes": list(passes),
        "depth_budget": budget,
    }
    document["ranking"] = _ranking_section(blocks, seed_list, checks, parts)
    document["low_storage"] = _low_storage_section(large, checks, parts)
    document["depth_reducing"] = _depth_section(large, passes, budget, checks, parts)
    document["summary"] = _summary_section(blocks, seed_list, budget, checks, parts)
    document["checks"] = checks.rows
    document["seconds"] = parts
    write_document("tradeoff", document, _markdown(document), out)
    if plot:
        _plot(document, out / "tradeoff.png")
    return 0


def main(argv: Sequence[str]) -> int:
    """Run every attack and write the report."""
    parser = argparse.ArgumentParser(prog="python -m bench tradeoff", description=__doc__)
    parser.add_argument("--blocks", type=int, default=1 << 16)
    parser.add_argument("--large", type=int, default=1 << 20)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--passes", default="1,2,3,6", help="depth-reducing: Argon2i's passes")
    parser.add_argument("--budget", type=int, default=depth.DEFAULT_BUDGET)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(list(argv))
    passes = [int(value) for value in args.passes.split(",")]
    return _run(args.blocks, args.large, args.seeds, passes, args.budget, args.out, plot=True)


def smoke() -> int:
    """Every part at 1024 and 4096 blocks, one seed, plot included, into a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        return _run(1024, 4096, 1, (1, 3), 4, Path(scratch), plot=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
