"""Lane hashing: many independent messages hashed at once in SIMD lanes, and ``twocats sum``.

Public names (loaded when first touched, so ``import twocats.lanes`` stays cheap)::

    hash_many(messages, algorithm="sha256", *, backend=None, lanes=None, threads=1) -> list[bytes]
    hash_many_array(messages, algorithm="sha256", ...) -> np.ndarray   # one row per digest
    hash_many_fixed(array, algorithm="sha256", ...) -> np.ndarray      # rows of equal length
    ALGORITHMS, Algorithm, PRIMITIVES     # the one registry of primitives and lane modes
    reference                             # plain-Python hashes (truth)

The modules: ``many`` (the ``hash_many`` family), ``registry`` (the table of algorithms),
``primitives`` (BLAKE2s, BLAKE2b, SHA-256 and SHA-512 in lanes), ``modes/`` (the lane modes from
the literature and their generator), ``reference/`` (the plain-Python truth), ``file_digests``
and ``check_file`` (the file engines of ``twocats sum``).  The compiled kernels are written by
``python -m codegen`` and compiled by :mod:`twocats.simd._jit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twocats._lazy import lazy_attributes

if TYPE_CHECKING:
    from twocats.lanes import reference
    from twocats.lanes.many import hash_many, hash_many_array, hash_many_fixed
    from twocats.lanes.registry import ALGORITHMS, PRIMITIVES, Algorithm

_LAZY = {
    "ALGORITHMS": "twocats.lanes.registry",
    "Algorithm": "twocats.lanes.registry",
    "PRIMITIVES": "twocats.lanes.registry",
    "hash_many": "twocats.lanes.many",
    "hash_many_array": "twocats.lanes.many",
    "hash_many_fixed": "twocats.lanes.many",
    "reference": "twocats.lanes.reference",
}

__all__ = [
    "ALGORITHMS",
    "PRIMITIVES",
    "Algorithm",
    "hash_many",
    "hash_many_array",
    "hash_many_fixed",
    "reference",
]


__getattr__ = lazy_attributes(__name__, _LAZY)
