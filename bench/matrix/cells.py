"""The cells of the TwoCats trade-off matrix: what ``python -m bench matrix`` measures.

Shared by the runner (:mod:`bench.matrix.runner`), the report writer (:mod:`bench.matrix.report`)
and the plots (:mod:`bench.matrix.plots`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from twocats.perf.levels import Cell

__all__ = [
    "C_REFERENCE_GBPS",
    "FULL_CONFIGS",
    "FULL_MEM_COSTS",
    "FULL_MULTIPLIES",
    "FULL_PARALLELISM",
    "HEADLINE",
    "MAILING_LIST",
    "MAILING_LIST_PUBLISHED",
    "SMALL_MEM_COST",
    "TINY_MEM_COST",
    "copy_ceiling",
    "find_cell",
    "first_level_extras",
    "mailing_list_cells",
    "matrix_cells",
    "peer_rows",
    "shared_mem_costs",
]

#: (hash type, lanes) pairs of the full matrix: 16 lanes need a 64-byte hash.
FULL_CONFIGS: Final = (
    ("blake2s", 1),
    ("blake2s", 2),
    ("blake2s", 4),
    ("blake2s", 8),
    ("blake2b", 8),
    ("blake2b", 16),
    ("sha512", 16),
)
FULL_MULTIPLIES: Final = (0, 2)
FULL_MEM_COSTS: Final = (14, 20)
FULL_PARALLELISM: Final = (1, 2)

#: The configuration issue 3 sets its goals on: blake2s, 8 lanes, multiplies 2, 1 GiB, one thread.
HEADLINE: Final = Cell("blake2s", 8, 2, 20, 1)

#: The PHC mailing-list runs of March 2014 (``twocats -m21 -l8 -M0`` and ``-l1``) with their
#: published outputs, and the times the author reported for 2 GiB on his machine.
MAILING_LIST: Final = {
    8: "53dc33f3b4861efb961cc1935b7d792adf068640390827e7e6761b5ae42da02f",
    1: "c44bd0df16eddf100a4dff2731fa58075b98ca123e19fe1a16bd2c33545590b3",
}
MAILING_LIST_PUBLISHED: Final = {
    "lanes 8, SSE2": 0.32,
    "lanes 8, no SSE": 1.30,
    "lanes 1": 0.90,
}

#: The published C reference on the project machine (issue 3): GB/s at the headline configuration.
C_REFERENCE_GBPS: Final = {"multiplies 2": 4.3, "multiplies 0": 6.4}


def mailing_list_cells() -> list[Cell]:
    """Return the two March 2014 mailing-list cells (2 GiB, two regions on two threads)."""
    return [Cell("blake2s", lanes, 0, 21, 2, "2014-03") for lanes in (8, 1)]


def matrix_cells(full: bool) -> list[Cell]:
    """Return the cells every level measures (full matrix or the short one)."""
    if not full:
        return [Cell("blake2s", lanes, 2, mem, 1) for mem in (14, 20) for lanes in (1, 8)]
    return [
        Cell(hash_type, lanes, multiplies, mem_cost, parallelism)
        for mem_cost in FULL_MEM_COSTS
        for parallelism in FULL_PARALLELISM
        for multiplies in FULL_MULTIPLIES
        for hash_type, lanes in FULL_CONFIGS
    ]


#: Memory costs of the in-cache cells the breakdown needs (1 MiB and 16 MiB).
TINY_MEM_COST: Final = 10
SMALL_MEM_COST: Final = 14


def first_level_extras() -> list[Cell]:
    """Return the cells only the first (best) level measures.

    The headline with fresh memory on every call, and the headline and its multiplies-0 twin at
    1 MiB, which with the 16 MiB cells give the fixed cost of a derivation (see :func:`breakdown`).
    """
    return [
        dataclasses.replace(HEADLINE, fresh=True),
        dataclasses.replace(HEADLINE, multiplies=0, fresh=True),
        dataclasses.replace(HEADLINE, mem_cost=TINY_MEM_COST),
        dataclasses.replace(HEADLINE, mem_cost=TINY_MEM_COST, multiplies=0),
    ]


def shared_mem_costs(levels: Sequence[dict[str, Any]]) -> list[int]:
    """Return the memory costs of the 2015 cells every measured level has (not the extras)."""
    measured = [level for level in levels if level.get("cells")]
    common: set[int] | None = None
    for level in measured:
        costs = {c["mem_cost"] for c in level["cells"] if c["variant"] == "2015" and not c["fresh"]}
        common = costs if common is None else common & costs
    return sorted(common or ())


def find_cell(level: dict[str, Any], cell: Cell) -> dict[str, Any] | None:
    """Return ``level``'s result for ``cell``, or None if it was not measured."""
    wanted = dataclasses.asdict(cell)
    results: list[dict[str, Any]] = level.get("cells", [])
    for result in results:
        if all(result[name] == value for name, value in wanted.items()):
            return result
    return None


# -- the machine -----------------------------------------------------------------------------------


def copy_ceiling(document: dict[str, Any], threads: int) -> float | None:
    """The measured memory-copy rate in GB/s at one or two threads, or None without peers."""
    peers = document.get("peers")
    if not peers:
        return None
    return float(peers["bandwidth"]["copy_2t" if threads > 1 else "copy_1t"]["gbps"])


def peer_rows(document: dict[str, Any]) -> list[tuple[str, float, float, int]]:
    """Return (name, GB/s, fraction of the copy ceiling, threads) rows at 1 GiB, best first."""
    peers = document.get("peers")
    if not peers:
        return []
    level = document["levels"][0]
    rows: list[tuple[str, float, int]] = []
    bandwidth = peers["bandwidth"]
    rows += [
        ("numpy fill (write only), 1 thread", bandwidth["fill_1t"]["gbps"], 1),
        ("numpy copy, 1 thread", bandwidth["copy_1t"]["gbps"], 1),
        ("numpy copy, 2 threads", bandwidth["copy_2t"]["gbps"], 2),
    ]
    if "fresh_fill_1t" in bandwidth:
        rows.append(("numpy fill of fresh memory, 1 thread", bandwidth["fresh_fill_1t"]["gbps"], 1))
    tc = [
        (f"TwoCats {level['label']}, reused buffer, p=1", HEADLINE),
        (
            f"TwoCats {level['label']}, reused buffer, p=2",
            dataclasses.replace(HEADLINE, parallelism=2),
        ),
        (f"TwoCats {level['label']}, fresh memory, p=1", dataclasses.replace(HEADLINE, fresh=True)),
        (
            f"TwoCats {level['label']}, multiplies 0, p=1",
            dataclasses.replace(HEADLINE, multiplies=0),
        ),
    ]
    for name, cell in tc:
        found = find_cell(level, cell)
        if found is not None:
            rows.append((name, found["gbps"], cell.parallelism))
    argon = peers["argon2id"]
    rows += [
        ("argon2id t=1, p=1", argon["p1"]["gbps"], 1),
        ("argon2id t=1, p=2", argon["p2"]["gbps"], 2),
        ("scrypt r=8, p=1", peers["scrypt"]["large"]["gbps"], 1),
    ]
    ceilings = {1: copy_ceiling(document, 1) or 1.0, 2: copy_ceiling(document, 2) or 1.0}
    return [(name, rate, rate / ceilings[threads], threads) for name, rate, threads in rows]
