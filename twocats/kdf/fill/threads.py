"""Compiled TwoCats slice fill: the ``scalar`` and ``simd`` backends of the KDF seam ``fill_slice``.

Usage::

    from twocats.kdf.fill.threads import get_fill_slice

    fill_slice = get_fill_slice("simd")          # or "scalar"
    fill_slice(mem, states, job)                 # job: a twocats.kdf.geometry.SliceJob

The callable is the seam :class:`twocats.kdf.geometry.FillSlice` and the result equals
:func:`twocats.kdf.reference.fill_slice` bit for bit.  One compiled call fills a whole slice of one
or more regions: addressing, block hash, the multiply chain and the per-block state hash all run
inside the kernel (``twocats/kdf/fill/_generated/fill_l*.py``, written by ``python -m codegen``),
one kernel per lane count and block hash; the per-block state hash ``Hv`` is
:func:`twocats.kdf.fill.statehash.state_hash`.

Regions run on real threads: the kernels release the GIL, the process's kernel threads
(:func:`twocats._machine.kernel_threads`) run one share of the regions each, and the call returns
only when every region has finished its slice (the barrier).  Regions never read each other's
blocks of the current slice, so the result does not depend on the number of threads.  Small
slices run on the calling thread, where a hand-off would cost more than it saves.

Importing the module imports neither numpy nor numba: a kernel is made ready by
:func:`twocats.simd.family.ready` (:data:`twocats.kdf.fill.family.FILL`), from an ahead-of-time
artefact when one was built for this machine and source, and otherwise from numba, which is then
imported and compiles or loads the kernel from its cache.  ``mem`` and
``states`` are words of :mod:`twocats.kdf.words` (views or numpy arrays).
"""

from __future__ import annotations

import os
from concurrent.futures import Future

from twocats._machine import kernel_threads, usable_cpus
from twocats.exceptions import InvalidParametersError
from twocats.hashes import HASHES
from twocats.kdf import words
from twocats.kdf.fill.args import LANES, FillArgs, FillKey
from twocats.kdf.fill.family import FILL, fill, fill_variants, scratch
from twocats.kdf.geometry import FillSlice, SliceJob
from twocats.params import BOUNDS
from twocats.simd.family import ready
from twocats.simd.registry import check_compiled

__all__ = ["THREADS_ENV", "default_threads", "get_fill_slice", "kernel_asm"]

#: Environment variable that caps the number of fill threads (default: the usable CPUs).
THREADS_ENV = "TWOCATS_THREADS"

# Slices smaller than this many words in total are filled on the calling thread.
_INLINE_WORDS = 1 << 16

# State words W per hash code.
_STATE_WORDS = tuple(facts.state_words for facts in HASHES)

# The bounds of the parameters the seam receives, from the one bounds table.
_PARALLELISM = BOUNDS["parallelism"]
_MULTIPLIES = BOUNDS["multiplies"]
_TIME_COST = BOUNDS["time_cost"]


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
    return usable_cpus()


def kernel_asm(lanes: int, backend: str) -> str:
    """Return the assembly text of numba's build of the final/2014 blake2s kernel for ``lanes``
    (compiled, or loaded from the disk cache, for the argument types of every real call)."""
    import numpy as np

    from twocats.simd._jit import kernel_asm as assembly

    kernel = fill_variants(lanes).get(check_compiled(backend))
    arrays = [np.zeros(64, np.uint32), np.zeros((1, 8), np.uint32), *map(np.asarray, scratch(0))]
    return assembly(kernel, *arrays, *FillArgs(0, 1, 0, 1, 4, 16, 16, 1, 0, 0).ints())


def _words_of(value: object) -> memoryview | None:
    """Return a view of ``value``'s buffer if it holds writable C-contiguous 32-bit words."""
    try:
        view = memoryview(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    if view.format != words.WORD or view.readonly or not view.c_contiguous:
        return None
    return view


def _validate(mem: words.Words, states: words.Words, job: SliceJob) -> None:
    """Check the seam arguments so that a kernel can never write outside ``mem`` or ``states``.

    The bounds are those of :data:`twocats.params.BOUNDS`.  Messages are built only on failure:
    this runs on every slice.
    """
    mem_view = _words_of(mem)
    if mem_view is None or mem_view.ndim != 1:
        raise InvalidParametersError("mem must be a writeable 1-D C-contiguous uint32 array")
    if not isinstance(job, SliceJob):
        raise InvalidParametersError("job must be a twocats.kdf.geometry.SliceJob")
    if not 0 <= job.hash_type < len(_STATE_WORDS):
        raise InvalidParametersError("hash_type must be 0, 1, 2 or 3")
    width = _STATE_WORDS[job.hash_type]
    parallelism = job.parallelism
    if not _PARALLELISM[0] <= parallelism <= _PARALLELISM[1]:
        low, high = _PARALLELISM
        raise InvalidParametersError(f"parallelism must be from {low} to {high}")
    states_view = _words_of(states)
    if states_view is None or states_view.shape != (parallelism, width):
        raise InvalidParametersError(
            "states must be a writeable C-contiguous uint32 array of shape "
            f"({parallelism}, {width})"
        )
    lanes = job.lanes
    if lanes not in LANES:
        raise InvalidParametersError(f"lanes must be one of {', '.join(map(str, LANES))}")
    if not _MULTIPLIES[0] <= job.multiplies <= _MULTIPLIES[1]:
        low, high = _MULTIPLIES
        raise InvalidParametersError(f"multiplies must be from {low} to {high}")
    if job.variant not in (0, 1):
        raise InvalidParametersError("variant must be 0 (final/2014) or 1 (March 2014)")
    limit = _TIME_COST[1] if job.variant == 1 else 0
    if not 0 <= job.time_cost <= limit:
        raise InvalidParametersError(
            f"time_cost must be from 0 to {limit} for variant {job.variant}"
        )
    sub_blocklen, blocklen = job.sub_blocklen, job.blocklen
    if not (sub_blocklen >= lanes and sub_blocklen & (sub_blocklen - 1) == 0):
        raise InvalidParametersError("sub_blocklen must be a power of two and a multiple of lanes")
    if not (blocklen >= sub_blocklen and blocklen & (blocklen - 1) == 0):
        raise InvalidParametersError("blocklen must be a power of two and at least sub_blocklen")
    done, per_slice = job.done, job.per_slice
    if not (per_slice >= 0 and done >= 0 and done + per_slice <= job.bpt):
        raise InvalidParametersError("blocks out of range")
    if job.dependent and done < 1:
        raise InvalidParametersError("a password-dependent slice needs done >= 1")
    if parallelism * job.bpt * blocklen > len(mem_view):
        raise InvalidParametersError("mem is too small for the regions")


class _SliceFiller:
    """The compiled ``fill_slice`` of one backend (see :func:`get_fill_slice`)."""

    def __init__(self, backend: str, threads: int | None) -> None:
        self.backend = backend
        self.threads = threads

    def __repr__(self) -> str:
        return f"<twocats fill_slice backend={self.backend!r}>"

    def __call__(self, mem: words.Words, states: words.Words, job: SliceJob) -> None:
        _validate(mem, states, job)
        per_slice, parallelism, variant = job.per_slice, job.parallelism, job.variant
        if per_slice == 0:
            return
        kernel = ready(FILL, FillKey(job.lanes, self.backend, job.hash_type, variant))
        shares = 1
        if parallelism > 1 and parallelism * per_slice * job.blocklen >= _INLINE_WORDS:
            threads = self.threads if self.threads is not None else default_threads()
            shares = min(threads, parallelism)
        args = FillArgs.of(job)
        if shares == 1:
            fill(kernel, variant, mem, states, args)
            return
        pool = kernel_threads(shares - 1)
        futures: list[Future[None]] = [
            pool.submit(fill, kernel, variant, mem, states, args.share(share, shares))
            for share in range(1, shares)
        ]
        try:
            fill(kernel, variant, mem, states, args.share(0, shares))
        finally:
            # The barrier: every region finishes this slice before the call returns.
            for future in futures:
                future.result()


def get_fill_slice(backend: str, *, threads: int | None = None) -> FillSlice:
    """Return the compiled ``fill_slice`` seam for ``backend`` ("scalar" or "simd").

    ``threads`` caps the threads that fill regions in parallel (default: :func:`default_threads`,
    read at each call); the result never depends on it.  Kernels compile lazily on first use.
    """
    check_compiled(backend)
    if threads is not None and threads < 1:
        raise InvalidParametersError("threads must be >= 1")
    return _SliceFiller(backend, threads)
