"""The attacker's verdict beside ``compare``: the best attack on each hash at its equal-time memory.

``compare``'s equal-time rows give the memory TwoCats and argon2id fill in the same defender
time on this machine.  An attacker with custom hardware pays per guess for area times time.  With
the best published attack on a hash's graph (:mod:`.attacks`, gain E), the area is the memory
divided by E, and the time is the defender's time divided by the attacker's hardware speed-up
over the defender.  The cost of a guess relative to argon2id's is therefore

    (memory / (E * speed-up)) / (argon2id's memory / (argon2id's E * argon2id's speed-up)).

The speed-ups are inputs, not measurements (default 1 for every hash: the same factor, so they
cancel).  TwoCats' multiply chain bounds its speed-up if a multiplication cannot be made faster
than a given latency: a guess then takes at least its chain's multiplications times that latency,
and :func:`chain_bound` is the defender's time over that floor.  That latency is an assumption
about the attacker's hardware (:class:`Assumptions`); nothing here measures an ASIC.

Each row's graph is the real one at the measured memory, capped at :data:`MAX_SIMULATED_BLOCKS`
blocks (the penalties change little with size beyond that), and beta prices the cores at the
measured memory.  Beside TwoCats and argon2id stand TwoCats' side-channel-resistant mode at the
same memory and Argon2i with argon2id's memory and pass count (it runs as fast as argon2id).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from twocats.exceptions import InvalidParametersError
from twocats.kdf import geometry
from twocats.params import Params
from twocats.perf.text_table import aligned_table
from twocats.perf.tradeoff import graphs
from twocats.perf.tradeoff.attacks import Settings, Verdict, best

__all__ = [
    "ALGORITHMS",
    "MAX_SIMULATED_BLOCKS",
    "Assumptions",
    "AttackerRow",
    "attacker_rows",
    "chain_bound",
    "chain_multiplications",
    "format_attacker_table",
]

#: The largest graph simulated per row, in blocks.
MAX_SIMULATED_BLOCKS: Final = 1 << 16

#: The rows, in order.
ALGORITHMS: Final = ("twocats", "twocats-side-channel-resistant", "argon2id", "argon2i")


@dataclasses.dataclass(frozen=True)
class Assumptions:
    """What the verdict assumes of the attacker's hardware.

    ``speedups`` maps an algorithm of :data:`ALGORITHMS` to the attacker's speed-up over the
    defender (1 where absent); ``multiply_ns``, when set, caps TwoCats' speed-ups at
    :func:`chain_bound` for multiplications of that latency; ``multiply_latency`` is the
    iterative attack's multiplication latency in row steps.
    """

    speedups: Mapping[str, float] = dataclasses.field(default_factory=dict)
    multiply_ns: float | None = None
    multiply_latency: float = 4.0

    def __post_init__(self) -> None:
        for name, value in self.speedups.items():
            if name not in ALGORITHMS:
                raise InvalidParametersError(
                    f"an ASIC speed-up names one of {', '.join(ALGORITHMS)}; got {name!r}"
                )
            if not 0.001 <= value <= 1e6:
                raise InvalidParametersError(
                    f"the ASIC speed-up of {name} must be from 0.001 to 1000000; got {value}"
                )
        if self.multiply_ns is not None and not 0.001 <= self.multiply_ns <= 1000:
            raise InvalidParametersError(
                f"the chain bound's multiplication latency must be from 0.001 to 1000 ns; "
                f"got {self.multiply_ns}"
            )


def chain_multiplications(params: Params) -> int:
    """The multiplications in TwoCats' multiply chains over one derivation (every level)."""
    per_row = params.multiplies * (1 if params.variant == "2014-03" else 2)
    total = 0
    for plan in geometry.plan(params):
        if plan.fills:
            rows = max(1, plan.blocklen // params.lanes)
            # The regions' chains run in parallel: one region's chain is the sequential floor.
            total += plan.blocks_per_region * rows * per_row
    return total


def chain_bound(params: Params, seconds: float, multiply_ns: float) -> float:
    """The most an attacker can speed a TwoCats guess up if a multiplication takes ``multiply_ns``.

    A guess runs each region's chain of dependent multiplications in order, so it takes at least
    that many multiplication latencies; the bound is the defender's time over that floor.
    """
    return seconds / (chain_multiplications(params) * multiply_ns * 1e-9)


@dataclasses.dataclass(frozen=True)
class AttackerRow:
    """One algorithm at the memory it fills in the defender's time, and its best attack."""

    algorithm: str
    parameters: str
    memory_bytes: int
    verdict: Verdict
    speedup: float
    relative_cost: float

    def document(self) -> dict[str, Any]:
        """The row as a JSON-ready dict: every attack's gains, the best one's, and the cost."""
        chosen = self.verdict.best
        return {
            "algorithm": self.algorithm,
            "parameters": self.parameters,
            "graph": chosen.graph,
            "simulated_blocks": chosen.blocks,
            "memory_bytes": self.memory_bytes,
            "best_attack": chosen.attack,
            "E": chosen.gain,
            "E_free_cores": chosen.gain_free_cores,
            "alpha": chosen.best.alpha,
            "alpha_basis": chosen.basis,
            "asic_speedup": self.speedup,
            "relative_cost": self.relative_cost,
            "attacks": self.verdict.document()["attacks"],
        }


def _twocats_sized(params: Params) -> Params:
    """``params`` with memory and start cost lowered alike until the graph is small enough."""
    blocks = params.memory_bytes // params.block_size
    shift = 0
    while blocks >> shift > MAX_SIMULATED_BLOCKS:
        shift += 1
    start = params.start_mem_cost if params.start_mem_cost is not None else params.mem_cost
    return dataclasses.replace(
        params, mem_cost=params.mem_cost - shift, start_mem_cost=start - shift
    )


def attacker_rows(
    params: Params,
    twocats_memory: int,
    argon2_memory: int,
    argon2_lanes: int,
    seeds: Sequence[int],
    report: Callable[[str], None] = lambda name: None,
    *,
    assumptions: Assumptions | None = None,
    seconds: float | None = None,
) -> list[AttackerRow]:
    """The best attack on each algorithm of :data:`ALGORITHMS` at its equal-time memory.

    The defender's equal-time figures are the inputs: the memory TwoCats with ``params`` fills,
    the memory argon2id with ``argon2_lanes`` lanes fills in the same time, and that time in
    ``seconds`` (needed only for the multiply chain's bound).  ``report`` sees each algorithm's
    name before its graphs are attacked.
    """
    assumed = Assumptions() if assumptions is None else assumptions
    if assumed.multiply_ns is not None and seconds is None:
        raise InvalidParametersError("the multiply chain's bound needs the defender's time")
    sized = _twocats_sized(params)
    resistant = dataclasses.replace(sized, side_channel_resistant=True)
    kib = argon2_memory // graphs.ARGON2_BLOCK_BYTES
    lanes = argon2_lanes
    blocks = max(8 * lanes, min(kib, MAX_SIMULATED_BLOCKS))
    label = f"m={params.mem_cost},l={params.lanes},p={params.parallelism},x={params.multiplies}"
    argon_label = f"t=1,m={kib},p={lanes}"
    plan: list[tuple[str, str, int, Callable[[int], graphs.Graph]]] = [
        ("twocats", label, twocats_memory, functools.partial(graphs.twocats, sized)),
        (
            "twocats-side-channel-resistant",
            label + ",r=1",
            twocats_memory,
            functools.partial(graphs.twocats, resistant),
        ),
        (
            "argon2id",
            argon_label,
            argon2_memory,
            functools.partial(graphs.argon2, "argon2id", blocks, 1, lanes),
        ),
        (
            "argon2i",
            argon_label,
            argon2_memory,
            functools.partial(graphs.argon2, "argon2i", blocks, 1, lanes),
        ),
    ]
    found = []
    for name, parameters, memory, build in plan:
        report(name)
        settings = Settings(seeds, assumed.multiply_latency, memory_bytes=memory)
        speedup = assumed.speedups.get(name, 1.0)
        if name.startswith("twocats") and assumed.multiply_ns is not None and seconds is not None:
            speedup = min(speedup, chain_bound(params, seconds, assumed.multiply_ns))
        found.append((name, parameters, memory, best(build, settings), speedup))

    def cost(memory: int, verdict: Verdict, speedup: float) -> float:
        return memory / (verdict.best.gain * speedup)

    base = next(cost(m, v, s) for name, _, m, v, s in found if name == "argon2id")
    return [
        AttackerRow(name, label, memory, verdict, speedup, cost(memory, verdict, speedup) / base)
        for name, label, memory, verdict, speedup in found
    ]


def format_attacker_table(rows: Sequence[AttackerRow]) -> str:
    """Return the rows as an aligned table: memory, best attack, its E, speed-up, relative cost."""
    header = (
        "algorithm",
        "parameters",
        "memory MiB",
        "best attack",
        "E",
        "E free cores",
        "ASIC speed-up",
        "cost vs argon2id",
    )
    table = [
        (
            row.algorithm,
            row.parameters,
            f"{row.memory_bytes / (1 << 20):.2f}",
            row.verdict.best.attack,
            f"{row.verdict.best.gain:.3f}",
            f"{row.verdict.best.gain_free_cores:.3f}",
            f"{row.speedup:.3g}",
            f"{row.relative_cost:.2f}",
        )
        for row in rows
    ]
    return aligned_table(header, table, left=2)
