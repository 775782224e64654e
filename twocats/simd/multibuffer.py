"""Deprecated alias of the ``hash_many`` family, which moved to :mod:`twocats.lanes`.

``ALGORITHMS`` is :data:`twocats.lanes.PRIMITIVES` and ``DIGEST_SIZES[name]`` is
``twocats.lanes.ALGORITHMS[name].digest_size``.
"""

from __future__ import annotations

import warnings

from twocats.hashes import HASHES
from twocats.lanes.many import hash_many, hash_many_array, hash_many_fixed
from twocats.lanes.primitives import DEFAULT_LANES, MAX_LANES, MAX_THREADS, PRIMITIVES

__all__ = [
    "ALGORITHMS",
    "DEFAULT_LANES",
    "DIGEST_SIZES",
    "MAX_LANES",
    "MAX_THREADS",
    "hash_many",
    "hash_many_array",
    "hash_many_fixed",
]

ALGORITHMS = PRIMITIVES
DIGEST_SIZES = {facts.name: facts.digest_size for facts in HASHES}

warnings.warn(
    "twocats.simd.multibuffer is deprecated: import hash_many, hash_many_array and "
    "hash_many_fixed from twocats.lanes",
    DeprecationWarning,
    stacklevel=2,
)
