"""Plain-Python references of the lane modes: slow, obvious, and the definition of truth.

Each module implements one family from its specification only (no numpy, no numba):
``keccak`` (SHA-3, SHAKE, cSHAKE, TurboSHAKE, KangarooTwelve, ParallelHash), ``blake2tree``
(BLAKE2sp, BLAKE2bp), ``lsh`` (LSH-256, LSH-512), ``sha1`` (legacy SHA-1) and ``sha256tree``
(j-lanes, mh_sha256, j-pointers).
"""
