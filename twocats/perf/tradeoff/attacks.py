"""Every attack by name, which of them apply to a graph, and the best of them.

* ``ranking``: the ranking trade-off attack (:mod:`.ranking`), on every graph;
* ``low-storage``: keep every block until its last read (:mod:`.lowstorage`), where some
  references are data-independent;
* ``iterative``: the ranking attack's storage timed row by row through TwoCats' iterative block
  hash (:mod:`.iterative`), on TwoCats graphs;
* ``depth-reducing``: Alwen and Blocki's light and balloon schedule (:mod:`.depth`), where some
  references are data-independent;
* ``best``: every attack that applies, and the one with the largest gain E (cores priced).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff import depth, iterative, lowstorage, ranking
from twocats.perf.tradeoff.graphs import Graph
from twocats.perf.tradeoff.model import Result

__all__ = ["ATTACKS", "CHOICES", "Verdict", "applies", "best", "run"]

#: The attacks, in the order ``best`` runs them.
ATTACKS: Final = ("ranking", "low-storage", "iterative", "depth-reducing")

#: What ``twocats tradeoff --attack`` accepts.
CHOICES: Final = (*ATTACKS, "best")


def applies(name: str, graph: Graph) -> str | None:
    """None where attack ``name`` applies to ``graph``; otherwise why it does not."""
    if name in ("low-storage", "depth-reducing") and graph.addressing == "dependent":
        return "every reference is data-dependent: no block can be planned for in advance"
    if name == "iterative":
        if not graph.layouts:
            return "Argon2's G mixes whole blocks: its compression is not iterative"
        if any(layout.repeats > 1 for layout in graph.layouts):
            return "the March 2014 version's repeated block hash is not modelled"
    return None


@dataclasses.dataclass(frozen=True)
class Settings:
    """The attacks' knobs: seeds, the multiply chain's latency, the search budget, the pricing."""

    seeds: Sequence[int]
    multiply_latency: float = iterative.DEFAULT_MULTIPLY_LATENCY
    budget: int = depth.DEFAULT_BUDGET
    memory_bytes: int | None = None


def run(
    name: str,
    build: Callable[[int], Graph],
    settings: Settings,
    report: Callable[[int, int], None] = lambda done, total: None,
) -> Result:
    """Run attack ``name`` on the graphs ``build`` makes for ``settings.seeds``."""
    seeds, memory = settings.seeds, settings.memory_bytes
    if name == "ranking":
        return ranking.attack(build, seeds, report, memory)
    if name == "low-storage":
        return lowstorage.attack(build, seeds, report, memory)
    if name == "iterative":
        return iterative.attack(build, seeds, settings.multiply_latency, report, memory)
    if name == "depth-reducing":
        return depth.attack(build, seeds, report, memory, settings.budget)
    raise InvalidParametersError(f"--attack must be one of {', '.join(CHOICES)}; got {name!r}")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Every attack run on one graph family, those that do not apply, and the best."""

    results: tuple[Result, ...]
    skipped: tuple[tuple[str, str], ...]

    @property
    def best(self) -> Result:
        """The attack of the largest gain, cores priced."""
        return max(self.results, key=lambda result: result.gain)

    def document(self) -> dict[str, Any]:
        """The best attack's document, with every attack's gains and the attacks skipped."""
        return {
            **self.best.document(),
            "chosen_by": "best",
            "attacks": [
                {
                    "attack": result.attack,
                    "E": result.gain,
                    "E_free_cores": result.gain_free_cores,
                    "alpha_basis": result.basis,
                }
                for result in self.results
            ],
            "skipped": [{"attack": name, "why": why} for name, why in self.skipped],
        }


def best(
    build: Callable[[int], Graph],
    settings: Settings,
    report: Callable[[str, int, int], None] = lambda name, done, total: None,
) -> Verdict:
    """Run every attack that applies; ``report(name, done, total)`` follows each one's progress."""
    if not settings.seeds:
        raise InvalidParametersError("seeds must name at least one seed")
    first = build(settings.seeds[0])

    def cached(seed: int) -> Graph:
        return first if seed == settings.seeds[0] else build(seed)

    results, skipped = [], []
    for name in ATTACKS:
        why = applies(name, first)
        if why is not None:
            skipped.append((name, why))
            continue
        results.append(run(name, cached, settings, functools.partial(report, name)))
    return Verdict(tuple(results), tuple(skipped))
