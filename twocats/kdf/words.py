"""Arrays of 32-bit words without numpy: the work memory and region states of a derivation.

Usage::

    from twocats.kdf import words

    mem = words.allocate(1 << 20)            # a zeroed 1-D memoryview of format "I"
    states = words.rows([[1, 2], [3, 4]])    # a 2-D memoryview of shape (2, 2)
    words.zero(mem)

The password path runs on these views, so that loading an ahead-of-time kernel imports no numpy.
A numpy ``uint32`` array is accepted wherever a view is (it exports the same buffer), and
``numpy.asarray`` turns a view into an array without a copy.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, TypeAlias, cast

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from typing_extensions import Buffer

__all__ = ["WORD", "Words", "address", "allocate", "as_view", "flat", "rows", "zero"]

#: The buffer format of an unsigned 32-bit word.
WORD: Final = "I"

#: A C-contiguous array of native unsigned 32-bit words: a view of format "I" or a numpy array.
Words: TypeAlias = "memoryview | npt.NDArray[np.uint32]"

assert array(WORD).itemsize == 4, "the platform's unsigned int is not 32 bits"


def allocate(count: int) -> memoryview:
    """Return ``count`` zeroed words in memory of their own, touched only when first written.

    The memory is private to this process (a forked child gets its own copy on write).  Raises
    :class:`MemoryError` when the system refuses it.
    """
    size = 4 * max(count, 1)
    try:
        memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, OverflowError):
        raise MemoryError(f"the system refused {size} bytes of memory") from None
    if hasattr(mmap, "MADV_HUGEPAGE"):
        # Huge pages take far fewer page faults on the first write (numpy asks for them too); a
        # kernel without them refuses the hint, which changes nothing else.
        with contextlib.suppress(OSError):
            memory.madvise(mmap.MADV_HUGEPAGE)
    return memoryview(memory).cast(WORD)[:count]


def rows(values: Sequence[Sequence[int]]) -> memoryview:
    """Return a 2-D view of shape ``(len(values), len(values[0]))`` holding ``values``."""
    packed = array(WORD, [word for row in values for word in row])
    return memoryview(packed).cast("B").cast(WORD, (len(values), len(values[0])))


def as_view(buffer: Words) -> memoryview:
    """Return ``buffer`` (any object with a buffer) as a view of the same shape."""
    return memoryview(cast("Buffer", buffer))


def flat(buffer: Words) -> memoryview:
    """Return ``buffer`` as a 1-D view of its words (it must be C-contiguous)."""
    return as_view(buffer).cast("B").cast(WORD)


def address(buffer: Words) -> int:
    """Return the address of a writable buffer's first byte (it must stay alive while used)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(as_view(buffer)))


def zero(buffer: Words) -> None:
    """Overwrite every byte of a writable buffer with zero."""
    size = as_view(buffer).nbytes
    if size:
        ctypes.memset(address(buffer), 0, size)
