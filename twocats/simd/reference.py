"""Deprecated alias of the plain-Python hashes, which moved to :mod:`twocats.lanes.reference`.

``ALGORITHMS`` is :data:`twocats.lanes.reference.FUNCTIONS`.
"""

from __future__ import annotations

import warnings

from twocats.lanes.reference import (
    FUNCTIONS,
    BytesLike,
    blake2_compress,
    blake2b,
    blake2s,
    digest,
    sha256,
    sha512,
)

__all__ = [
    "ALGORITHMS",
    "BytesLike",
    "blake2_compress",
    "blake2b",
    "blake2s",
    "digest",
    "sha256",
    "sha512",
]

ALGORITHMS = FUNCTIONS

warnings.warn(
    "twocats.simd.reference is deprecated: import twocats.lanes.reference",
    DeprecationWarning,
    stacklevel=2,
)
