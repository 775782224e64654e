"""Compile kernels ahead of their first use, into the disk cache (``twocats warmup``).

Usage::

    from twocats.simd.warmup import compile_kernels

    for kernel, seconds in compile_kernels(jobs_to_compile, jobs=2):
        ...                                          # every job, on two processes

A kernel compiled here is written to ``$TWOCATS_CACHE_DIR`` (see :mod:`twocats.simd._jit`), so
later processes load it instead of compiling it.  :func:`compile_kernels` runs any :class:`Job`:
the fill's jobs are in :mod:`twocats.kdf.fill.warmup`, the lane hashes' in
:mod:`twocats.lanes.warmup`.  Importing this module imports no numba; compiling does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Protocol, TypeVar

from twocats._machine import usable_cpus
from twocats.exceptions import BackendError

__all__ = ["COMPILED_BACKENDS", "Job", "check_backend", "compile_kernels", "default_jobs"]

#: The backends that have compiled kernels.
COMPILED_BACKENDS = ("scalar", "simd")


class Job(Protocol):
    """Something to compile ahead of use, in a worker process (it must pickle)."""

    @property
    def label(self) -> str:
        """A short name for progress displays."""
        ...

    def compile(self) -> None:
        """Compile the kernel, or load it from the disk cache."""
        ...


AnyJob = TypeVar("AnyJob", bound=Job)


def check_backend(backend: str) -> None:
    """Raise :class:`~twocats.exceptions.BackendError` unless ``backend`` compiles kernels."""
    if backend not in COMPILED_BACKENDS:
        allowed = ", ".join(COMPILED_BACKENDS)
        raise BackendError(f"backend must be one of {allowed} to compile kernels, not {backend!r}")


def default_jobs() -> int:
    """The processes :func:`compile_kernels` uses by default: the usable CPUs."""
    return usable_cpus()


def _timed_compile(kernel: Job) -> float:
    """Compile ``kernel``; return the seconds it took (runs in a worker process)."""
    started = time.perf_counter()
    kernel.compile()
    return time.perf_counter() - started


def compile_kernels(kernels: Sequence[AnyJob], jobs: int) -> Iterator[tuple[AnyJob, float]]:
    """Compile ``kernels`` on ``jobs`` processes; yield each kernel with its seconds when done.

    With one job, or one kernel, they compile in this process, in order.  Worker processes are
    started fresh (not forked) and write to the same kernel cache, which numba updates atomically.
    """
    if jobs <= 1 or len(kernels) <= 1:
        for kernel in kernels:
            yield kernel, _timed_compile(kernel)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(kernels)), mp_context=context) as pool:
        futures = {pool.submit(_timed_compile, kernel): kernel for kernel in kernels}
        for future in as_completed(futures):
            yield futures[future], future.result()
