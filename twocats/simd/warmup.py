"""Compile fill kernels ahead of their first use, into the disk cache (``twocats warmup``).

Usage::

    from twocats.simd.warmup import all_kernels, compile_kernels, kernels_for

    for kernel in kernels_for(params, "simd"):      # the fill kernels one parameter set uses
        kernel.compile()                             # compiles, or loads from the cache
    for kernel, seconds in compile_kernels(all_kernels("simd"), jobs=2):
        ...                                          # every fill kernel, on two processes

A kernel compiled here is written to ``$TWOCATS_CACHE_DIR`` (see :mod:`twocats.simd._jit`), so
later processes load it instead of compiling it.  :func:`compile_kernels` runs any :class:`Job`:
the lane hashes' jobs are in :mod:`twocats.lanes.warmup`.  Importing this module imports no numba;
compiling does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from twocats._machine import usable_cpus
from twocats.exceptions import BackendError
from twocats.hashes import HASHES
from twocats.params import Params
from twocats.simd import aot

__all__ = [
    "COMPILED_BACKENDS",
    "Job",
    "Kernel",
    "all_kernels",
    "check_backend",
    "compile_kernels",
    "default_jobs",
    "kernels_for",
]

#: The backends that have compiled kernels.
COMPILED_BACKENDS = ("scalar", "simd")

#: The lane counts of the fill kernels (powers of two up to the state words of the hash).
_FILL_LANES = (1, 2, 4, 8, 16)


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


@dataclass(frozen=True)
class Kernel:
    """One fill kernel: lane count, hash type and block hash on a backend."""

    backend: str
    hash_code: int
    lanes: int
    #: 0 for the final and 2014 block hash, 1 for March 2014.
    variant: int = 0

    @property
    def label(self) -> str:
        """A short name for progress displays, e.g. ``fill blake2s x8``."""
        march = " (2014-03)" if self.variant else ""
        return f"fill {HASHES[self.hash_code].name} x{self.lanes}{march}"

    @property
    def key(self) -> aot.FillKey:
        """The kernel's ahead-of-time key."""
        return aot.FillKey(self.lanes, self.backend, self.hash_code, self.variant)

    def compile(self) -> None:
        """Compile the kernel (or load it from the disk cache) and run its known-answer check.

        The check job calls the kernel with the argument types of every real call (Python ints),
        and a build that fails it compiles afresh (:func:`~twocats.simd.fillkernels.checked_fill`).
        Its ahead-of-time artefact (:mod:`twocats.simd.aot`) is built too, where one can be; a
        failed build warns and leaves the kernel to numba.
        """
        from twocats.simd.fillkernels import checked_fill

        checked_fill(self.key)
        if aot.enabled():
            from twocats.simd.aotcompile import try_build_fill

            try_build_fill(self.key)


def check_backend(backend: str) -> None:
    """Raise :class:`~twocats.exceptions.BackendError` unless ``backend`` compiles kernels."""
    if backend not in COMPILED_BACKENDS:
        allowed = ", ".join(COMPILED_BACKENDS)
        raise BackendError(f"backend must be one of {allowed} to compile kernels, not {backend!r}")


def kernels_for(params: Params, backend: str) -> list[Kernel]:
    """Return the fill kernels that deriving with ``params`` on ``backend`` runs."""
    check_backend(backend)
    variant = 1 if params.variant == "2014-03" else 0
    return [Kernel(backend, params.hash_code, params.lanes, variant)]


def all_kernels(backend: str) -> list[Kernel]:
    """Return every fill kernel: each hash type, lane count and block hash."""
    check_backend(backend)
    return [
        Kernel(backend, facts.code, lanes, variant)
        for variant in (0, 1)
        for facts in HASHES
        for lanes in _FILL_LANES
        if lanes <= facts.state_words
    ]


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
