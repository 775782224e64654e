"""Block addressing of the fill kernels: which earlier block a new block reads (twocats.md §7-§8).

Ordinary kernel source shared by every generated fill kernel; LLVM inlines it there.  Imports numba.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.simd._jit import jit

__all__ = ["source_block"]

U0 = np.uint64(0)
U1 = np.uint64(1)
U32 = np.uint64(32)


@jit
def source_block(
    i: Any, dependent: Any, s0: Any, s1: Any, done: Any, parallelism: Any, p: Any, bpt: Any
) -> Any:
    """Return the index in ``mem``'s blocks of the block that block ``i`` of region ``p`` reads.

    ``s0`` and ``s1`` are the region's first two state words, ``done`` the blocks of earlier
    slices (readable in every region) and ``bpt`` the blocks per region; all are uint64.
    """
    if dependent:
        # Password-dependent cubic addressing (twocats.md §8).
        cv = np.uint64(s0)
        cv2 = (cv * cv) >> U32
        cv3 = (cv * cv2) >> U32
        ref = i - U1 - (((i - U1) * cv3) >> U32)
        region = np.uint64(s1) % parallelism if ref < done else p
        return region * bpt + ref
    # Data-independent sliding bit-reversal addressing (twocats.md §7).
    n_bits = U0
    rest = i >> U1
    while rest != U0:
        n_bits = n_bits + U1
        rest = rest >> U1
    window = U1 << n_bits
    low = i - window
    ref = U0
    for bit in range(n_bits):
        ref = (ref << U1) | ((low >> np.uint64(bit)) & U1)
    if ref + window < i:
        ref = ref + window
    region = i % parallelism if ref < done else p
    return region * bpt + ref
