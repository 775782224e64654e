"""Compile kernels ahead of their first use, into the disk cache (what ``twocats warmup`` runs).

Usage::

    from twocats.simd.warmup import all_kernels, compile_kernel, kernels_for

    for kernel in kernels_for(params, "simd"):      # the kernels one parameter set uses
        compile_kernel(kernel)                       # compiles, or loads from the cache
    for kernel, seconds in compile_kernels(all_kernels("simd"), jobs=2):
        ...                                          # every kernel, on two processes

A kernel compiled here is written to ``$TWOCATS_CACHE_DIR`` (see :mod:`twocats.simd._jit`), so
later processes load it instead of compiling it.  Importing this module imports no numba; compiling
does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from twocats._machine import usable_cpus
from twocats.exceptions import BackendError
from twocats.hashes import HASHES
from twocats.params import Params
from twocats.simd import aot

__all__ = [
    "COMPILED_BACKENDS",
    "Kernel",
    "all_kernels",
    "compile_kernel",
    "compile_kernels",
    "default_jobs",
    "kernels_for",
]

#: The backends that have compiled kernels.
COMPILED_BACKENDS = ("scalar", "simd")

#: The lane counts of the fill kernels (powers of two up to the state words of the hash).
_FILL_LANES = (1, 2, 4, 8, 16)

#: The algorithms of ``hash_many`` with compiled lane kernels.
_LANE_HASHES = tuple(facts.name for facts in HASHES)


@dataclass(frozen=True)
class Kernel:
    """One compiled kernel: a fill (lanes, hash type, block hash) or a lane hash."""

    backend: str
    #: "fill" or "lanes".
    kind: str
    hash_code: int
    lanes: int = 0
    #: 0 for the final and 2014 block hash, 1 for March 2014 (fills only).
    variant: int = 0

    @property
    def label(self) -> str:
        """A short name for progress displays, e.g. ``fill blake2s x8`` or ``hash_many sha256``."""
        name = HASHES[self.hash_code].name
        if self.kind == "lanes":
            return f"hash_many {name}"
        march = " (2014-03)" if self.variant else ""
        return f"fill {name} x{self.lanes}{march}"


def _check_backend(backend: str) -> None:
    if backend not in COMPILED_BACKENDS:
        allowed = ", ".join(COMPILED_BACKENDS)
        raise BackendError(f"backend must be one of {allowed} to compile kernels, not {backend!r}")


def kernels_for(params: Params, backend: str) -> list[Kernel]:
    """Return the kernels that deriving with ``params`` on ``backend`` runs."""
    _check_backend(backend)
    variant = 1 if params.variant == "2014-03" else 0
    return [Kernel(backend, "fill", params.hash_code, params.lanes, variant)]


def all_kernels(backend: str) -> list[Kernel]:
    """Return every fill kernel (each hash type, lane count and block hash) and lane hash."""
    _check_backend(backend)
    fills = [
        Kernel(backend, "fill", facts.code, lanes, variant)
        for variant in (0, 1)
        for facts in HASHES
        for lanes in _FILL_LANES
        if lanes <= facts.state_words
    ]
    lane_hashes = [Kernel(backend, "lanes", HASHES.index(facts)) for facts in HASHES]
    return fills + lane_hashes


def compile_kernel(kernel: Kernel) -> None:
    """Compile ``kernel`` (or load it from the disk cache) by running it once on empty input.

    A fill kernel's ahead-of-time artefact (:mod:`twocats.simd.aot`) is built too, where one can
    be; a failed build warns and leaves the kernel to numba.
    """
    import numpy as np

    if kernel.kind == "lanes":
        from twocats.lanes.many import hash_many_fixed

        hash_many_fixed(
            np.zeros((1, 64), np.uint8), _LANE_HASHES[kernel.hash_code], backend=kernel.backend
        )
        return
    from twocats.simd.fillkernels import fill_kernel, scratch

    compiled = fill_kernel(kernel.lanes, kernel.backend, kernel.hash_code, kernel.variant)
    words = HASHES[kernel.hash_code].state_words
    mem = np.zeros(2 * words, dtype=np.uint32)
    states = np.zeros((1, words), dtype=np.uint32)
    # Slice [1, 1) of one region: nothing is filled, but the call compiles the kernel for the
    # argument types of every real call (Python ints).
    tail = (0,) if kernel.variant else ()
    compiled(mem, states, *scratch(kernel.variant), 0, 1, 1, 0, 2, words, words, 1, 0, 0, *tail)
    if aot.enabled():
        from twocats.simd.aotcompile import try_build_fill

        try_build_fill(aot.FillKey(kernel.lanes, kernel.backend, kernel.hash_code, kernel.variant))


def default_jobs() -> int:
    """The processes :func:`compile_kernels` uses by default: the usable CPUs."""
    return usable_cpus()


def _timed_compile(kernel: Kernel) -> float:
    """Compile ``kernel``; return the seconds it took (runs in a worker process)."""
    started = time.perf_counter()
    compile_kernel(kernel)
    return time.perf_counter() - started


def compile_kernels(kernels: Sequence[Kernel], jobs: int) -> Iterator[tuple[Kernel, float]]:
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
