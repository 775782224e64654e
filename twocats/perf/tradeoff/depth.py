"""A depth-reducing attack (Alwen and Blocki) on the data-independent parts of a graph.

Alwen and Blocki ("Efficiently computing data-independent memory-hard functions", CRYPTO 2016;
"Towards practical attacks on Argon2i and Balloon hashing", EuroS&P 2017) attack a graph whose
addresses are known in advance by holding a set S of nodes for good, chosen so that the graph
without S has small depth d, and pebbling it in two alternating phases:

* the *light* phase computes the nodes in order, one a step, in intervals of ``g`` nodes, holding
  only S, the recent nodes and the inputs the current interval needs;
* before each interval a *balloon* phase recomputes, in parallel, every input of the interval that
  is no longer held, with all its ancestors outside S: at most d rounds, since every path between
  nodes of S is short.

Run for many guesses at once, staggered so that their balloon phases do not coincide, the
attacker's memory is the sum of the guesses' mean memory, not of their peaks; its cost per guess
is the cumulative memory (blocks held, summed over steps) plus the cores' area times the calls.

The schedule computed here, exactly, on the real graph (``_depth.schedule_cost``; the explicit
pebbling in the tests equals it):

* S is layered: with layers of ``layer`` nodes cut into runs of ``gap`` nodes, every node with an
  input in its own layer but not in its own run is held for good (so inside a layer a path stays
  in one run, and the depth left is at most ``gap`` per layer), and so is every node that a
  data-dependent reference might read (it cannot be recomputed on demand);
* a node of S is held from its step to its last read; any other node computed in the light phase
  is held until its last read by the ``keep`` intervals that follow, and recomputed in a balloon
  phase for a later read;
* a balloon phase computes each node as late as its children in the phase allow (one round before
  the first of them), and holds it until its last read; the light phase waits for it.

alpha is the cumulative memory over the defender's (which holds every node until its slot is
overwritten: a defender's guesses run staggered too), C the calls over the defender's, D = 1 (the
time the light phase waits is in the cumulative memory); so the gain is the data-independent
``1 / (alpha + C * beta)`` (:mod:`.model`), beta taken against the defender's mean memory.  The
parameters (layer, gap, g and keep) are searched over, starting from a fixed point and moving each
by factors of 2 while the gain grows (a setting is abandoned as soon as what it has held and
computed so far costs more than the best so far); every setting run to its end is a row, and so is
holding every node until its last read (the low-storage attack, amortised).

Corollary 5.6 of the 2016 paper bounds this attack on Argon2i at ``AT = 2 T^(7/4) (5 + t +
ln(T) / 8)`` for T = t M blocks computed; :func:`corollary_bound` gives it beside the computed
cost, which must not be larger where the corollary applies.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff import liveness
from twocats.perf.tradeoff.graphs import Graph
from twocats.perf.tradeoff.model import Result, Row, beta, mean_rows

__all__ = ["DEFAULT_BUDGET", "Setting", "attack", "corollary_bound", "evaluate", "search"]

#: The most settings one search tries.
DEFAULT_BUDGET: Final = 24

#: The values ``keep`` takes (intervals a light node is held for).
_KEEPS: Final = (1, 2, 4, 8, 16)


@dataclasses.dataclass(frozen=True)
class Setting:
    """The attacker's parameters: S's layers and runs, the interval g and the light horizon."""

    layer: int
    gap: int
    interval: int
    keep: int


def corollary_bound(nodes: int, passes: int) -> dict[str, float]:
    """Corollary 5.6's time-area cost for T = ``nodes`` and its gain over ``T^2 / t``."""
    bound = 2 * nodes**1.75 * (5 + passes + math.log(nodes) / 8)
    return {"AT": bound, "E": nodes * nodes / passes / bound}


@dataclasses.dataclass(frozen=True)
class Target:
    """What the schedules on one graph are measured against.

    ``defender`` is the defender's cumulative memory (every node held until its slot is
    overwritten, in block-ticks), ``call_cost`` the block-ticks one call's core costs (beta at the
    defender's peak memory, times that memory), and ``horizon`` the pinned nodes' last reads.
    """

    horizon: npt.NDArray[np.int32]
    defender: float
    call_cost: float
    nodes: int

    @property
    def core_fraction(self) -> float:
        """beta against the defender's mean memory: the cores' share in the gain's formula."""
        return self.call_cost * self.nodes / self.defender


def target(graph: Graph, memory_bytes: int) -> Target:
    """The defender's cumulative memory and the core's price on ``graph``."""
    horizon = liveness.pinned(graph)
    defender = liveness.defender_memory(graph).mean * graph.nodes
    call_cost = beta(graph.core, memory_bytes) * graph.memory_blocks
    return Target(horizon, defender, call_cost, graph.nodes)


def evaluate(
    graph: Graph, aim: Target, setting: Setting | None, beat: float | None = None
) -> Row | None:
    """The schedule with ``setting`` on ``graph`` (None: hold every node until its last read).

    alpha is the schedule's cumulative memory over the defender's, C its calls over the nodes.
    With ``beat`` (a gain), the run is abandoned, returning None, as soon as it cannot beat it.
    """
    from twocats.perf.tradeoff._depth import layered_set, remaining_depth, schedule_cost

    n = graph.nodes
    if setting is None:
        removed = np.ones(n, dtype=np.bool_)
        layer, gap, interval, keep = n, n, n, 1
    else:
        layer, gap, interval, keep = (
            setting.layer,
            setting.gap,
            setting.interval,
            setting.keep,
        )
        removed = layered_set(
            graph.prev, graph.ref, graph.old, aim.horizon, np.int64(layer), np.int64(gap)
        )
    left = int(remaining_depth(graph.prev, graph.ref, graph.old, removed))
    held, calls, waits, deepest = schedule_cost(
        graph.prev,
        graph.ref,
        graph.old,
        graph.prev_held,
        removed,
        aim.horizon,
        graph.outputs,
        np.int64(interval),
        np.int64(keep),
        np.float64(aim.call_cost),
        np.float64(np.inf if beat is None else aim.defender / beat),
    )
    if calls < 0:
        return None
    extra = {
        "layer": layer,
        "gap": gap,
        "g": interval,
        "keep": keep,
        "held_for_good": float(np.count_nonzero(removed)) / n,
        "depth_left": left,
        "balloon_calls": (int(calls) - n) / n,
        "balloon_steps": int(waits) / n,
        "deepest_balloon": int(deepest),
    }
    return Row(float(held) / aim.defender, int(calls) / n, 1.0, extra)


def _log2(value: int) -> int:
    return max(0, value.bit_length() - 1)


def _neighbours(setting: Setting, nodes: int, first: tuple[str, int] | None) -> list[Setting]:
    """The settings one factor of 2 away in each parameter, the last successful move first."""
    top = _log2(nodes)
    moves: list[tuple[tuple[str, int], Setting]] = []
    layer, gap, interval = _log2(setting.layer), _log2(setting.gap), _log2(setting.interval)
    for step in (1, -1):
        if 1 <= gap < layer + step <= top:
            moves.append((("layer", step), dataclasses.replace(setting, layer=1 << (layer + step))))
        if 1 <= gap + step < layer:
            moves.append((("gap", step), dataclasses.replace(setting, gap=1 << (gap + step))))
        if 4 <= interval + step < top:
            changed = dataclasses.replace(setting, interval=1 << (interval + step))
            moves.append((("interval", step), changed))
        index = _KEEPS.index(setting.keep) + step
        if 0 <= index < len(_KEEPS):
            moves.append((("keep", step), dataclasses.replace(setting, keep=_KEEPS[index])))
    moves.sort(key=lambda move: move[0] != first)
    return [candidate for _, candidate in moves]


def _start(graph: Graph) -> Setting:
    """The first setting tried: layers of 256 nodes in runs of 32, g of M / 16."""
    top = _log2(graph.nodes)
    layer = 1 << max(2, min(8, top - 2))
    gap = min(32, layer // 2)
    interval = 1 << max(4, min(top - 1, _log2(graph.memory_blocks) - 4))
    return Setting(layer, gap, interval, 1)


def _move(before: Setting, after: Setting) -> tuple[str, int]:
    """Which parameter changed from ``before`` to ``after``, and in which direction."""
    for name in ("layer", "gap", "interval", "keep"):
        old, new = getattr(before, name), getattr(after, name)
        if old != new:
            return name, 1 if new > old else -1
    return "layer", 0


def search(
    graph: Graph,
    aim: Target,
    budget: int = DEFAULT_BUDGET,
    report: Callable[[int, int], None] = lambda done, total: None,
) -> tuple[list[tuple[Setting | None, Row]], int]:
    """Climb from the start while E grows; return every setting run to its end, and how many
    were abandoned once they could no longer beat the best so far."""
    if budget < 1:
        raise InvalidParametersError(f"the search budget must be at least 1; got {budget}")
    core_fraction = aim.core_fraction
    tried: dict[Setting | None, Row] = {}
    abandoned: set[Setting] = set()

    def run(setting: Setting | None, beat: float | None) -> Row | None:
        row = evaluate(graph, aim, setting, beat)
        if row is None:
            assert setting is not None
            abandoned.add(setting)
        else:
            tried[setting] = row
        report(len(tried) + len(abandoned), budget)
        return row

    run(None, None)
    current = _start(graph)
    best = run(current, None)
    assert best is not None
    last: tuple[str, int] | None = None
    improved = True
    while improved and len(tried) + len(abandoned) < budget:
        improved = False
        for candidate in _neighbours(current, graph.nodes, last):
            if candidate in tried or candidate in abandoned:
                continue
            if len(tried) + len(abandoned) >= budget:
                break
            row = run(candidate, best.gain(core_fraction))
            if row is not None and row.gain(core_fraction) > best.gain(core_fraction):
                last, current, best, improved = _move(current, candidate), candidate, row, True
                break
    return list(tried.items()), len(abandoned)


def attack(
    build: Callable[[int], Graph],
    seeds: Sequence[int],
    report: Callable[[int, int], None] = lambda done, total: None,
    memory_bytes: int | None = None,
    budget: int = DEFAULT_BUDGET,
) -> Result:
    """Search the settings on the first seed's graph, then run them on the other seeds' graphs.

    A graph addressed data-independently throughout is the same for every seed and is attacked
    once.
    """
    if not seeds:
        raise InvalidParametersError("seeds must name at least one seed")
    graph = build(seeds[0])
    memory = graph.memory_bytes if memory_bytes is None else memory_bytes
    aim = target(graph, memory)
    core_fraction = aim.core_fraction
    tried, abandoned = search(graph, aim, budget, report)
    runs = [[row for _, row in tried]]
    used = 1
    if graph.addressing != "independent":
        for seed in seeds[1:]:
            other = build(seed)
            again = [evaluate(other, target(other, memory), setting) for setting, _ in tried]
            runs.append([row for row in again if row is not None])
            used += 1
    rows = sorted(mean_rows(runs), key=lambda row: row.alpha)
    passes = max(1, graph.nodes // graph.memory_blocks)
    figures: dict[str, Any] = {
        "corollary_5_6": corollary_bound(graph.nodes, passes),
        "settings_abandoned": abandoned,
    }
    best = max(rows, key=lambda row: row.gain(core_fraction))
    least = min(row.alpha for row in rows)
    bound = figures["corollary_5_6"]["AT"]
    priced = (best.alpha + best.C * core_fraction) * aim.defender
    figures["AT_over_corollary"] = {
        "free_cores": least * aim.defender / bound,
        "priced_cores": priced / bound,
    }
    # The corollary's gain is over the defender's peak memory for the whole run (T^2 / t).
    figures["E_over_peak_memory_time"] = graph.memory_blocks * graph.nodes / priced
    return Result(
        "depth-reducing",
        graph.name,
        graph.memory_blocks,
        graph.nodes,
        used,
        "mean",
        memory,
        graph.core,
        core_fraction,
        tuple(rows),
        figures=figures,
        notes=(
            "alpha is cumulative memory over the defender's: guesses of both run staggered",
            "the row with layer = gap = g = the node count holds every node until its last read",
        ),
    )
