"""The fill kernels a parameter set uses, as jobs of ``twocats warmup``.

Usage::

    from twocats.kdf.fill.warmup import all_kernels, kernels_for
    from twocats.simd.warmup import compile_kernels

    for kernel in kernels_for(params, "simd"):      # the fill kernels one parameter set uses
        kernel.compile()                             # compiles, or loads from the cache
    for kernel, seconds in compile_kernels(all_kernels("simd"), jobs=2):
        ...                                          # every fill kernel, on two processes

Importing this module imports no numba; compiling does.
"""

from __future__ import annotations

from dataclasses import dataclass

from twocats.hashes import HASHES
from twocats.kdf.fill.args import LANES, FillKey
from twocats.params import Params
from twocats.simd import aot
from twocats.simd.warmup import check_backend

__all__ = ["Kernel", "all_kernels", "kernels_for"]


@dataclass(frozen=True)
class Kernel:
    """One fill kernel as a warm-up job: the kernel its key names, compiled with its check."""

    key: FillKey

    @property
    def label(self) -> str:
        """A short name for progress displays, e.g. ``fill blake2s x8``."""
        march = " (2014-03)" if self.key.variant else ""
        return f"fill {HASHES[self.key.hash_type].name} x{self.key.lanes}{march}"

    def compile(self) -> None:
        """Compile the kernel (or load it from the disk cache) and run its known-answer check.

        The check job calls the kernel with the argument types of every real call (Python ints),
        and a build that fails it compiles afresh (:func:`~twocats.kdf.fill.kernels.checked_fill`).
        Its ahead-of-time artefact (:mod:`twocats.kdf.fill.aot`) is built too, where one can be; a
        failed build warns and leaves the kernel to numba.
        """
        from twocats.kdf.fill.kernels import checked_fill

        checked_fill(self.key)
        if aot.enabled():
            from twocats.kdf.fill.aot import try_build_fill

            try_build_fill(self.key)


def kernels_for(params: Params, backend: str) -> list[Kernel]:
    """Return the fill kernels that deriving with ``params`` on ``backend`` runs."""
    check_backend(backend)
    variant = 1 if params.variant == "2014-03" else 0
    return [Kernel(FillKey(params.lanes, backend, params.hash_code, variant))]


def all_kernels(backend: str) -> list[Kernel]:
    """Return every fill kernel: each hash type, lane count and block hash."""
    check_backend(backend)
    return [
        Kernel(FillKey(lanes, backend, facts.code, variant))
        for variant in (0, 1)
        for facts in HASHES
        for lanes in LANES
        if lanes <= facts.state_words
    ]
