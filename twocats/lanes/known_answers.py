"""The lanes' known-answer checks: a compiled build answers only once it agrees with the reference.

Two checks guard every digest.  Each lane kernel has its own (:meth:`twocats.simd._jit.Variants.
checked_by`, declared beside the kernel): before a process first uses a build, known input
(:func:`painted`) goes through the code that calls it and must give the pure-Python reference's
output (:func:`agrees`), whichever path called it (a stream, a batch of one, a batch of many).
And before a process uses an algorithm's compiled build ("simd" or "scalar") for the first time,
:func:`check_compiled` hashes :data:`SAMPLE` with it and compares the SHA-256 of the digests with
the algorithm's :attr:`~twocats.lanes.algorithm.Algorithm.known_answer`, which the reference gave
(``tests/lanes/test_known_answers.py`` recomputes every row's value from the reference).  A build
that differs, for example one loaded from a damaged cache, is compiled afresh with one warning;
one that still differs raises :class:`~twocats.exceptions.BackendError`, so a wrong digest is
never returned.  The algorithm's check hashes about 18 KB once per algorithm and backend in a
process, a kernel's a few hundred bytes.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any, Final

from twocats.exceptions import BackendError
from twocats.simd import cache

__all__ = ["SAMPLE", "agrees", "check_compiled", "painted"]

#: Messages of every padding case and of more than two 8 KiB chunks, painted ``i % 251``.
SAMPLE: Final = tuple((bytes(range(251)) * 66)[:n] for n in (0, 1, 64, 65, 200, 1000, 16391))

def painted(*lengths: int) -> list[bytes]:
    """Messages of the given lengths painted ``i % 251``, as the kernels' own checks hash them."""
    return [(bytes(range(251)) * (n // 251 + 1))[:n] for n in lengths]


def agrees(function: Callable[..., Any], backend: str, *args: Any, **kwargs: Any) -> bool:
    """Whether ``function(*args, **kwargs)`` on ``backend`` gives the reference backend's output."""
    return bool(
        function(*args, backend=backend, **kwargs)
        == function(*args, backend="reference", **kwargs)
    )


_checked: set[tuple[str, str]] = set()
_lock = threading.Lock()


def _answer(many: Callable[..., list[bytes]], backend: str) -> str:
    return hashlib.sha256(b"".join(many(list(SAMPLE), backend=backend))).hexdigest()


def check_compiled(
    name: str, many: Callable[..., list[bytes]], backend: str, *, known_answer: str
) -> None:
    """Make sure ``many``, algorithm ``name``'s function, agrees with the reference on ``backend``.

    ``known_answer`` is the algorithm's :attr:`~twocats.lanes.algorithm.Algorithm.known_answer`.

    The reference backend and a process without compiled kernels (``NUMBA_DISABLE_JIT``) are not
    checked: they run the source itself.
    """
    if backend == "reference" or (name, backend) in _checked:
        return
    with _lock:
        if (name, backend) in _checked:
            return
        if not cache.jit_disabled() and _answer(many, backend) != known_answer:
            from twocats.simd import _jit

            cache.warn_once(
                f"twocats: the {backend} build of {name} fails its known-answer check; "
                "its kernels compile afresh"
            )
            _jit.recompile_package("twocats.lanes")
            if _answer(many, backend) != known_answer:
                raise BackendError(
                    f"the compiled {name} kernels ({backend}) fail their known-answer check"
                )
        _checked.add((name, backend))
