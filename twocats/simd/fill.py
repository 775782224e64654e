"""Compiled TwoCats slice fill: the ``scalar`` and ``simd`` backends of the KDF seam ``fill_slice``.

Usage::

    from twocats.simd.fill import get_fill_slice

    fill_slice = get_fill_slice("simd")          # or "scalar"
    fill_slice(mem, states, done, per_slice, bpt, blocklen, sub_blocklen, parallelism, lanes,
               multiplies, dependent, hash_type, variant, time_cost)

The callable has exactly the seam's signature (see :mod:`twocats.kdf.core`) and the result equals
:func:`twocats.kdf.reference.fill_slice` bit for bit.  One compiled call fills a whole slice of one
or more regions: addressing, block hash, the multiply chain and the per-block state hash all run
inside the kernel (``twocats/simd/_generated/fill_l*.py``, written by :mod:`twocats.simd.fillgen`).

Regions run on real threads: the kernels release the GIL, a persistent thread pool runs one share
of the regions per thread, and the call returns only when every region has finished its slice (the
barrier).  Regions never read each other's blocks of the current slice, so the result does not
depend on the number of threads.  Small slices run on the calling thread, where a hand-off would
cost more than it saves.

This module imports numpy and, on the first fill, numba; import it lazily.
"""

from __future__ import annotations

import atexit
import importlib
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from twocats.exceptions import BackendError, InvalidParametersError
from twocats.simd.fillgen import LANES, module_name

__all__ = [
    "FILL_BACKENDS",
    "FillSlice",
    "default_threads",
    "fill_kernel",
    "get_fill_slice",
    "kernel_asm",
]

#: The backends this module compiles (the pure-Python ``reference`` lives in ``twocats.kdf``).
FILL_BACKENDS = ("scalar", "simd")

#: Environment variable that caps the number of fill threads (default: the usable CPUs).
THREADS_ENV = "TWOCATS_THREADS"

# Slices smaller than this many words in total are filled on the calling thread.
_INLINE_WORDS = 1 << 16

# State words W per hash code (blake2s, blake2b, sha256, sha512).
_STATE_WORDS = (8, 16, 8, 16)

_MAX_TIME_COST = 30


class FillSlice(Protocol):
    """The KDF seam: fill blocks ``[done, done + per_slice)`` of every region (one slice)."""

    def __call__(
        self,
        mem: npt.NDArray[np.uint32],
        states: npt.NDArray[np.uint32],
        done: int,
        per_slice: int,
        bpt: int,
        blocklen: int,
        sub_blocklen: int,
        parallelism: int,
        lanes: int,
        multiplies: int,
        dependent: bool,
        hash_type: int,
        variant: int,
        time_cost: int,
    ) -> None: ...


def default_threads() -> int:
    """Return the number of fill threads: ``$TWOCATS_THREADS`` if set, else the usable CPUs."""
    configured = os.environ.get(THREADS_ENV)
    if configured:
        try:
            value = int(configured)
        except ValueError:
            value = 0
        if value < 1:
            raise InvalidParametersError(f"{THREADS_ENV} must be a whole number >= 1")
        return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def fill_kernel(lanes: int, backend: str) -> Any:
    """Return the compiled region kernel for ``lanes`` lanes and ``backend`` ("scalar" or "simd").

    The kernel fills one slice of the regions ``p_first, p_first + p_step, ...``; its arguments are
    ``(mem, states, p_first, p_step, done, per_slice, bpt, blocklen, sub_blocklen, parallelism,
    multiplies, dependent, hash_type, variant, time_cost)``.  It compiles on its first call.
    """
    _check_backend(backend)
    if lanes not in LANES:
        raise InvalidParametersError(f"lanes must be one of {', '.join(map(str, LANES))}")
    module = importlib.import_module(f"twocats.simd._generated.{module_name(lanes)}")
    return getattr(module, f"fill_region_l{lanes}").get(backend)


def kernel_asm(lanes: int, backend: str) -> str:
    """Return the assembly text of the compiled kernel for ``lanes`` and ``backend``.

    The kernel is compiled (or loaded from the disk cache) by a tiny fill first.  numba does not
    print kernels loaded from its cache; for those the cached optimised LLVM module is turned into
    assembly again by the process's target machine, the one that produced the cached code.
    """
    kernel = fill_kernel(lanes, backend)
    mem = np.zeros(64, dtype=np.uint32)
    states = np.zeros((1, 8), dtype=np.uint32)
    kernel(mem, states, 0, 1, 0, 1, 4, 16, 16, 1, 0, 0, 0, 0, 0)
    texts = []
    for signature in kernel.signatures:
        library = kernel.overloads[signature].library
        if getattr(library, "_disable_inspection", False):
            texts.append(str(library._codegen._tm.emit_assembly(library._shared_module)))
        else:
            texts.append(str(kernel.inspect_asm(signature)))
    return "\n".join(texts)


def _check_backend(backend: str) -> None:
    if backend not in FILL_BACKENDS:
        raise BackendError(f"backend must be one of {', '.join(FILL_BACKENDS)}, not {backend!r}")


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _executor(workers: int) -> ThreadPoolExecutor:
    """Return the shared pool, grown to at least ``workers`` threads (it lives until exit)."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="twocats-fill")
            _pool_size = workers
            if old is not None:
                old.shutdown(wait=False)
        return _pool


@atexit.register
def _shutdown_pool() -> None:
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=True)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidParametersError(message)


def _validate(
    mem: npt.NDArray[np.uint32],
    states: npt.NDArray[np.uint32],
    done: int,
    per_slice: int,
    bpt: int,
    blocklen: int,
    sub_blocklen: int,
    parallelism: int,
    lanes: int,
    multiplies: int,
    dependent: bool,
    hash_type: int,
    variant: int,
    time_cost: int,
) -> None:
    """Check the seam arguments so that a kernel can never write outside ``mem`` or ``states``."""
    _require(
        isinstance(mem, np.ndarray)
        and mem.dtype == np.uint32
        and mem.ndim == 1
        and mem.flags.c_contiguous
        and mem.flags.writeable,
        "mem must be a writeable 1-D C-contiguous uint32 array",
    )
    _require(0 <= hash_type < len(_STATE_WORDS), "hash_type must be 0, 1, 2 or 3")
    words = _STATE_WORDS[hash_type]
    _require(1 <= parallelism <= 255, "parallelism must be from 1 to 255")
    _require(
        isinstance(states, np.ndarray)
        and states.dtype == np.uint32
        and states.shape == (parallelism, words)
        and states.flags.c_contiguous
        and states.flags.writeable,
        f"states must be a writeable C-contiguous uint32 array of shape ({parallelism}, {words})",
    )
    _require(lanes in LANES, f"lanes must be one of {', '.join(map(str, LANES))}")
    _require(0 <= multiplies <= 8, "multiplies must be from 0 to 8")
    _require(variant in (0, 1), "variant must be 0 (final/2014) or 1 (March 2014)")
    limit = _MAX_TIME_COST if variant == 1 else 0
    _require(0 <= time_cost <= limit, f"time_cost must be from 0 to {limit} for variant {variant}")
    _require(
        sub_blocklen >= lanes
        and sub_blocklen % lanes == 0
        and (sub_blocklen & -sub_blocklen) == sub_blocklen,
        "sub_blocklen must be a power of two and a multiple of lanes",
    )
    _require(
        blocklen >= sub_blocklen and (blocklen & -blocklen) == blocklen,
        "blocklen must be a power of two and at least sub_blocklen",
    )
    _require(per_slice >= 0 and done >= 0 and done + per_slice <= bpt, "blocks out of range")
    _require(not dependent or done >= 1, "a password-dependent slice needs done >= 1")
    _require(parallelism * bpt * blocklen <= mem.size, "mem is too small for the regions")


class _SliceFiller:
    """The compiled ``fill_slice`` of one backend (see :func:`get_fill_slice`)."""

    def __init__(self, backend: str, threads: int | None) -> None:
        self.backend = backend
        self.threads = threads

    def __repr__(self) -> str:
        return f"<twocats fill_slice backend={self.backend!r}>"

    def __call__(
        self,
        mem: npt.NDArray[np.uint32],
        states: npt.NDArray[np.uint32],
        done: int,
        per_slice: int,
        bpt: int,
        blocklen: int,
        sub_blocklen: int,
        parallelism: int,
        lanes: int,
        multiplies: int,
        dependent: bool,
        hash_type: int,
        variant: int,
        time_cost: int,
    ) -> None:
        _validate(
            mem,
            states,
            done,
            per_slice,
            bpt,
            blocklen,
            sub_blocklen,
            parallelism,
            lanes,
            multiplies,
            dependent,
            hash_type,
            variant,
            time_cost,
        )
        if per_slice == 0:
            return
        kernel = fill_kernel(lanes, self.backend)
        threads = self.threads if self.threads is not None else default_threads()
        shares = min(threads, parallelism)
        if parallelism * per_slice * blocklen < _INLINE_WORDS:
            shares = 1
        tail = (
            done,
            per_slice,
            bpt,
            blocklen,
            sub_blocklen,
            parallelism,
            multiplies,
            int(bool(dependent)),
            hash_type,
            variant,
            time_cost,
        )
        # In plain-Python runs (NUMBA_DISABLE_JIT) the kernels' wrapping uint32 sums are numpy
        # scalar operations; their overflow is intended.
        with np.errstate(over="ignore"):
            if shares == 1:
                kernel(mem, states, 0, 1, *tail)
                return
            pool = _executor(shares - 1)
            futures: list[Future[None]] = [
                pool.submit(kernel, mem, states, share, shares, *tail) for share in range(1, shares)
            ]
            try:
                kernel(mem, states, 0, shares, *tail)
            finally:
                # The barrier: every region finishes this slice before the call returns.
                for future in futures:
                    future.result()


def get_fill_slice(backend: str, *, threads: int | None = None) -> FillSlice:
    """Return the compiled ``fill_slice`` seam for ``backend`` ("scalar" or "simd").

    ``threads`` caps the threads that fill regions in parallel (default: :func:`default_threads`,
    read at each call); the result never depends on it.  Kernels compile lazily on first use.
    """
    _check_backend(backend)
    if threads is not None and threads < 1:
        raise InvalidParametersError("threads must be >= 1")
    return _SliceFiller(backend, threads)
