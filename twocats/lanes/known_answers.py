"""The lane modes' known-answer checks: a compiled build answers once it agrees with the reference.

Each lane mode's kernel has its own (:meth:`twocats.simd._jit.Variants.checked_by`, declared
beside the kernel): before a process first uses a build, known input (:func:`painted`) goes
through the code that calls it and must give the pure-Python reference's output (:func:`agrees`),
whichever path called it (a stream, a batch of one, a batch of many).  A build that differs, for
example one loaded from a damaged cache, is compiled afresh with one warning; one that still
differs raises :class:`~twocats.exceptions.BackendError`, so a wrong digest is never returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["SAMPLE", "agrees", "painted"]

#: Messages of every padding case and of more than two 8 KiB chunks, painted ``i % 251``.
SAMPLE: Final = tuple((bytes(range(251)) * 66)[:n] for n in (0, 1, 64, 65, 200, 1000, 16391))


def painted(*lengths: int) -> list[bytes]:
    """Messages of the given lengths painted ``i % 251``, as the kernels' own checks hash them."""
    return [(bytes(range(251)) * (n // 251 + 1))[:n] for n in lengths]


def agrees(function: Callable[..., Any], backend: str, *args: Any, **kwargs: Any) -> bool:
    """Whether ``function(*args, **kwargs)`` on ``backend`` gives the reference backend's output."""
    return bool(
        function(*args, backend=backend, **kwargs) == function(*args, backend="reference", **kwargs)
    )
