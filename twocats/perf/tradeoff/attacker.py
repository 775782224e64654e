"""The attacker's half of ``compare``: trade-off penalties beside the memory each hash fills.

``compare``'s equal-time rows give the memory TwoCats and argon2id fill in the same defender time
on this machine.  An attacker with custom hardware pays per guess for memory times time; with the
ranking attack of :mod:`twocats.perf.tradeoff.ranking` it can keep only the fraction alpha of the
memory at the price of D(alpha) times the sequential work, dividing that product by at most E.
The cost of a guess relative to argon2id is therefore ``(memory / E) / (argon2id's memory /
argon2id's E)``, on the model's assumption that the attacker's hardware speeds each hash up by the
same factor over the defender's (the same time per guess for all rows at equal defender time).
TwoCats' multiply chain is meant to bound that speed-up for TwoCats; that is a claim about
hardware, which nothing here measures.

Each row's graph is the real one at the measured memory, capped at :data:`MAX_SIMULATED_BLOCKS`
blocks (the penalties change little with size beyond that).  Beside TwoCats and argon2id stand
TwoCats' side-channel-resistant mode at the same memory and Argon2i with argon2id's memory and
pass count (it runs as fast as argon2id).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from twocats.params import Params
from twocats.perf.text_table import aligned_table
from twocats.perf.tradeoff import graphs
from twocats.perf.tradeoff.ranking import Attack, attack

__all__ = ["MAX_SIMULATED_BLOCKS", "AttackerRow", "attacker_rows", "format_attacker_table"]

#: The largest graph simulated per row, in blocks.
MAX_SIMULATED_BLOCKS: Final = 1 << 16

#: Argon2's block size in bytes.
_ARGON2_BLOCK: Final = 1024


@dataclasses.dataclass(frozen=True)
class AttackerRow:
    """One algorithm at the memory it fills in the defender's time, and the attack on its graph."""

    algorithm: str
    parameters: str
    memory_bytes: int
    result: Attack
    relative_cost: float

    def document(self) -> dict[str, Any]:
        """The row as a JSON-ready dict."""
        best = self.result.best
        return {
            "algorithm": self.algorithm,
            "parameters": self.parameters,
            "graph": self.result.graph,
            "simulated_blocks": self.result.blocks,
            "memory_bytes": self.memory_bytes,
            "best_alpha": best.alpha,
            "best_alpha_D": best.alpha_d,
            "E": self.result.E,
            "relative_cost": self.relative_cost,
            "rows": [row.document() for row in self.result.rows],
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
) -> list[AttackerRow]:
    """Attack TwoCats (both modes) at ``params`` and argon2id, Argon2i at ``argon2_memory`` bytes.

    ``report`` sees each algorithm's name before its graphs are attacked.
    """
    sized = _twocats_sized(params)
    resistant = dataclasses.replace(sized, side_channel_resistant=True)
    kib = argon2_memory // _ARGON2_BLOCK
    blocks = max(8 * argon2_lanes, min(kib, MAX_SIMULATED_BLOCKS))
    label = f"m={params.mem_cost},l={params.lanes},p={params.parallelism},x={params.multiplies}"
    argon_label = f"t=1,m={kib},p={argon2_lanes}"
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
            functools.partial(graphs.argon2, "argon2id", blocks, 1, argon2_lanes),
        ),
        (
            "argon2i",
            argon_label,
            argon2_memory,
            functools.partial(graphs.argon2, "argon2i", blocks, 1, argon2_lanes),
        ),
    ]
    results = []
    for name, parameters, memory, build in plan:
        report(name)
        results.append((name, parameters, memory, attack(build, seeds)))
    baseline = next(memory / result.E for name, _, memory, result in results if name == "argon2id")
    return [
        AttackerRow(name, parameters, memory, result, (memory / result.E) / baseline)
        for name, parameters, memory, result in results
    ]


def format_attacker_table(rows: Sequence[AttackerRow]) -> str:
    """Return the rows as an aligned table: memory, best alpha*D and its alpha, E, relative cost."""
    header = (
        "algorithm",
        "parameters",
        "memory MiB",
        "best alpha*D",
        "at alpha",
        "E",
        "vs argon2id",
    )
    table = [
        (
            row.algorithm,
            row.parameters,
            f"{row.memory_bytes / (1 << 20):.2f}",
            f"{row.result.best.alpha_d:.3f}",
            f"{row.result.best.alpha:.3f}",
            f"{row.result.E:.3f}",
            f"{row.relative_cost:.2f}",
        )
        for row in rows
    ]
    return aligned_table(header, table, left=2)
