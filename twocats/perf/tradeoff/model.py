"""The Argon2 specification's model of an attacker's gain, and the figures that price it.

The specification ("Model for memory-hard functions", ``latex/argon2-specs.tex`` in
P-H-C/phc-winner-argon2) measures an attack that keeps the fraction alpha of the defender's
memory by its computational penalty C(alpha) (compression calls per block, relative to the
defender's one) and its depth penalty D(alpha) (sequential calls per block).  With beta the area of
one compression core as a fraction of the memory's area, the attacker's gain in time-area product
is

* ``E = 1 / (alpha + C * beta)`` where the addresses are data-independent: the attacker knows
  which blocks it will miss and recomputes them ahead of time, in parallel, losing no time;
* ``E = 1 / ((alpha + C * beta) * D)`` where they are data-dependent: a missing block is found
  only when it is needed, and the step waits for its recomputation.

In a graph that mixes both (Argon2id, TwoCats' hybrid mode) each block counts as its own
reference does: the attacks average a depth of 1 for a block whose reference is data-independent
into D, so that one formula, the second, covers every graph.  ``beta = 0`` (free cores) is an
upper bound on the attacker's gain.

The specification's cost section prices beta: 550 mm² of 50-nm DRAM per GB (read here as 2^30
bytes) and about 0.1 mm² for a BLAKE2b core in 65 nm.  Argon2's G is built on BLAKE2b's round,
so an Argon2 core is that core.  A TwoCats core is its hash (the specification's BLAKE2b figure,
for every hash type: no separate figure is published) and one 32x32-bit multiplier for the
multiply chain, assumed at a tenth of the hash core (:data:`MULTIPLIER_MM2`, an assumption, not a
published figure).  A core that only recomputes TwoCats blocks from kept start states needs
neither, only the lanes' adders, so the priced figure understates the attacker there; the
free-core figure bounds it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

__all__ = [
    "BLAKE2B_CORE_MM2",
    "DRAM_MM2_PER_GIB",
    "MULTIPLIER_MM2",
    "Core",
    "Result",
    "Row",
    "argon2_core",
    "beta",
    "gain",
    "mean_rows",
    "result_of",
    "twocats_core",
]

#: Area of 1 GB of 50-nm DRAM, in mm² (the Argon2 specification's cost section).
DRAM_MM2_PER_GIB: Final = 550.0

#: Area of a BLAKE2b core in 65 nm, in mm² (the same section, after Gürkaynak et al. 2012).
BLAKE2B_CORE_MM2: Final = 0.1

#: Area assumed for a 32x32-bit multiplier, in mm²: a tenth of the BLAKE2b core (an assumption).
MULTIPLIER_MM2: Final = 0.01


@dataclasses.dataclass(frozen=True)
class Core:
    """The compression core an attacker replicates to pay a computational penalty."""

    name: str
    mm2: float


def argon2_core() -> Core:
    """Argon2's G: a BLAKE2b-round core."""
    return Core("BLAKE2b core (Argon2's G)", BLAKE2B_CORE_MM2)


def twocats_core(hash_type: str) -> Core:
    """TwoCats' block hash: its hash type's core and one multiplier for the multiply chain."""
    return Core(f"{hash_type} core and a 32x32-bit multiplier", BLAKE2B_CORE_MM2 + MULTIPLIER_MM2)


def beta(core: Core, memory_bytes: int) -> float:
    """The core's area as a fraction of the area of ``memory_bytes`` of DRAM."""
    return core.mm2 / (memory_bytes / (1 << 30) * DRAM_MM2_PER_GIB)


def gain(alpha: float, computation: float, depth: float, core_fraction: float) -> float:
    """The specification's E: ``1 / ((alpha + C * beta) * D)`` (D = 1: data-independent)."""
    return 1.0 / ((alpha + computation * core_fraction) * depth)


@dataclasses.dataclass(frozen=True)
class Row:
    """One setting of an attack: memory fraction, penalties, and the attack's own figures."""

    alpha: float
    C: float
    D: float
    extra: Mapping[str, float]

    def gain(self, core_fraction: float) -> float:
        """The gain of this row for cores of area ``core_fraction`` of the memory."""
        return gain(self.alpha, self.C, self.D, core_fraction)

    def document(self, core_fraction: float) -> dict[str, Any]:
        """The row as a JSON-ready dict: its own figures, alpha, C, D and both gains."""
        return {
            **self.extra,
            "alpha": self.alpha,
            "C": self.C,
            "D": self.D,
            "E": self.gain(core_fraction),
            "E_free_cores": self.gain(0.0),
        }


@dataclasses.dataclass(frozen=True)
class Result:
    """One attack on one graph family: its rows and the best gains.

    ``basis`` says what alpha measures: ``"peak"`` memory, or ``"mean"`` memory over the run
    (an attacker running many guesses staggered in time pays for the sum of their means).
    ``beta`` prices the ``core`` at ``memory_bytes`` of defender memory.  ``figures`` holds the
    attack's figures that are not per row, ``notes`` what the reader must know to use them.
    """

    attack: str
    graph: str
    blocks: int
    nodes: int
    seeds: int
    basis: str
    memory_bytes: int
    core: Core
    beta: float
    rows: tuple[Row, ...]
    figures: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def best(self) -> Row:
        """The row of the largest gain with the cores priced."""
        return max(self.rows, key=lambda row: row.gain(self.beta))

    @property
    def gain(self) -> float:
        """The largest gain over the rows, cores priced."""
        return self.best.gain(self.beta)

    @property
    def gain_free_cores(self) -> float:
        """The largest gain over the rows with free cores (beta = 0)."""
        return max(row.gain(0.0) for row in self.rows)

    def document(self) -> dict[str, Any]:
        """The result as a JSON-ready dict (the ``twocats tradeoff --json`` document)."""
        return {
            "attack": self.attack,
            "graph": self.graph,
            "blocks": self.blocks,
            "nodes": self.nodes,
            "seeds": self.seeds,
            "alpha_basis": self.basis,
            "memory_bytes": self.memory_bytes,
            "core": self.core.name,
            "core_mm2": self.core.mm2,
            "beta": self.beta,
            "E": self.gain,
            "E_free_cores": self.gain_free_cores,
            "best": self.best.document(self.beta),
            "figures": dict(self.figures),
            "notes": list(self.notes),
            "rows": [row.document(self.beta) for row in self.rows],
        }


class Measured(Protocol):
    """What a result needs of the graph it measured (a :class:`~.graphs.Graph`)."""

    @property
    def name(self) -> str: ...

    @property
    def memory_blocks(self) -> int: ...

    @property
    def core(self) -> Core: ...

    @property
    def nodes(self) -> int: ...

    @property
    def memory_bytes(self) -> int: ...


def result_of(
    attack: str,
    graph: Measured,
    seeds: int,
    rows: Sequence[Row],
    memory_bytes: int | None,
    **details: Any,
) -> Result:
    """A peak-basis result on ``graph``, its core priced at ``memory_bytes`` (default: its own).

    ``details`` are the optional fields of :class:`Result` (``figures``, ``notes``).
    """
    memory = graph.memory_bytes if memory_bytes is None else memory_bytes
    return Result(
        attack,
        graph.name,
        graph.memory_blocks,
        graph.nodes,
        seeds,
        "peak",
        memory,
        graph.core,
        beta(graph.core, memory),
        tuple(rows),
        **details,
    )


def _mean_or_same(values: Sequence[float]) -> float:
    """The value all seeds share (a parameter such as q), or else their mean."""
    if all(value == values[0] for value in values):
        return values[0]
    return sum(values) / len(values)


def mean_rows(runs: Sequence[Sequence[Row]]) -> list[Row]:
    """The rows of several seeds' runs, column by column, every figure the mean over the seeds."""
    reached = min(len(rows) for rows in runs)
    merged = []
    for column in range(reached):
        rows = [run[column] for run in runs]
        count = len(rows)
        keys = rows[0].extra.keys()
        merged.append(
            Row(
                sum(row.alpha for row in rows) / count,
                sum(row.C for row in rows) / count,
                sum(row.D for row in rows) / count,
                {key: _mean_or_same([row.extra[key] for row in rows]) for key in keys},
            )
        )
    return merged
