"""The lanes' known-answer check: a compiled build answers only once it agrees with the reference.

Before a process uses an algorithm's compiled build ("simd" or "scalar") for the first time,
:func:`check_compiled` hashes :data:`SAMPLE` with it and compares the SHA-256 of the digests with
the algorithm's :attr:`~twocats.lanes.algorithm.Algorithm.known_answer`, which the pure-Python
reference gave (``tests/lanes/test_known_answers.py`` recomputes every row's value from the
reference).  A build that differs, for example one loaded from a damaged cache, is compiled
afresh with one warning; one that still differs raises :class:`~twocats.exceptions.BackendError`,
so a wrong digest is never returned.  The check hashes about 18 KB once per algorithm and backend
in a process.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Final

from twocats.exceptions import BackendError
from twocats.simd import cache

__all__ = ["SAMPLE", "check_compiled"]

#: Messages of every padding case and of more than two 8 KiB chunks, painted ``i % 251``.
SAMPLE: Final = tuple((bytes(range(251)) * 66)[:n] for n in (0, 1, 64, 65, 200, 1000, 16391))

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
