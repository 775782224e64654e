"""Multi-message and tree hashing modes from the literature, run in SIMD lanes.

The plain-Python references of every mode live in :mod:`twocats.simd.modes.reference`; the official
known-answer file readers in :mod:`twocats.simd.modes.kat`.
"""
