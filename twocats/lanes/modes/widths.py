"""The lane widths of the lane modes' kernels: how many messages each hashes in lock-step.

The kernel drivers (:mod:`twocats.lanes.modes.kernels`) and the generator of their unrolled rounds
(``python -m codegen``) read them here.  Importing this module imports nothing.
"""

from __future__ import annotations

__all__ = ["LSH_WIDTH", "SHA256_NARROW"]

#: The number of messages hashed in lock-step by the multi-message LSH kernels.
LSH_WIDTH = 8

#: The lane width of the project's own SHA-256 kernel for j-lanes and j-pointers with j <= 8.
SHA256_NARROW = 8
