"""The one table of lane algorithms: the lane primitives and the modes from the literature.

:data:`ALGORITHMS` maps every name that :func:`twocats.lanes.hash_many` and ``twocats sum`` accept
to an :class:`Algorithm`, whose ``many(messages, backend=...)`` returns one digest per message, so
that a multi-message front end can dispatch on the name::

    from twocats.lanes.registry import ALGORITHMS, PRIMITIVES

    PRIMITIVES                              # ("blake2s", "blake2b", "sha256", "sha512", "sha1")
    ALGORITHMS["lsh-256-256"].digest_size   # 32

The primitives are :mod:`twocats.lanes.primitives` (SHA-1 among them, for legacy integrity checks
only); the modes are families, each a module of :mod:`twocats.lanes.modes` with reference, scalar
and simd backends, which declares its own rows as ``ALGORITHMS`` (this module finds every family
module of that package)::

    keccak      multi-message SHA-3/SHAKE over 4 or 8 Keccak states; TurboSHAKE, KT128/KT256,
                cSHAKE and ParallelHash built on them
    blake2tree  BLAKE2sp and BLAKE2bp (leaves in lanes), keyed, any output length
    lsh         LSH-256 and LSH-512 (KS X 3262), single-message and multi-message
    sha256tree  j-lanes SHA-256, Intel's mh_sha256, j-pointers

The plain-Python references live in :mod:`twocats.lanes.reference` (the official vector readers
are test code, in ``tests/support/modes_kat.py``).  Importing this module imports neither numpy
nor numba.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import partial
from types import ModuleType
from typing import Any

from twocats.exceptions import InvalidParametersError
from twocats.hashes import by_name
from twocats.lanes import modes, primitives
from twocats.lanes.algorithm import Algorithm
from twocats.lanes.primitives import PRIMITIVES
from twocats.simd.family import Family

__all__ = ["ALGORITHMS", "PRIMITIVES", "Algorithm", "algorithm_named"]


def _primitives() -> list[Algorithm]:
    """The primitives, in hash-code order."""
    rows = []
    for name in PRIMITIVES:
        facts = by_name(name)
        legacy = " (legacy integrity checks only)" if facts.legacy else ""
        rows.append(
            Algorithm(
                name,
                facts.digest_size,
                partial(primitives.digest_list, name),
                name,
                f"{name}, {primitives.DEFAULT_LANES[name]} messages in lanes by default{legacy}",
                legacy=facts.legacy,
                primitive=True,
            )
        )
    return rows


def _mode_modules() -> list[ModuleType]:
    """Every family module of :mod:`twocats.lanes.modes`, in module-name order."""
    return [
        importlib.import_module(f"{modes.__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(modes.__path__), key=lambda info: info.name)
        if not info.ispkg and not info.name.startswith("_")
    ]


_MODES = _mode_modules()

#: Algorithm name -> :class:`Algorithm`: the primitives, then the lane modes.
ALGORITHMS: dict[str, Algorithm] = {
    entry.name: entry
    for entry in [
        *_primitives(),
        *(row for module in _MODES for row in getattr(module, "ALGORITHMS", ())),
    ]
}

#: The kernel families of the lanes (:mod:`twocats.simd.family`): the primitives' scheduler, then
#: each lane mode's kernels.
FAMILIES: tuple[Family[Any], ...] = (
    primitives.FAMILY,
    *(module.FAMILY for module in _MODES if hasattr(module, "FAMILY")),
)


def algorithm_named(name: str) -> Algorithm:
    """Return the algorithm called ``name``; an unknown name raises, listing the known ones."""
    entry = ALGORITHMS.get(name)
    if entry is None:
        allowed = ", ".join(ALGORITHMS)
        raise InvalidParametersError(f"algorithm must be one of {allowed}, not {name!r}")
    return entry
