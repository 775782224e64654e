"""The fill kernels' interface: lane counts, names, keys, scratch arrays and integer arguments.

Usage::

    from twocats.kdf.fill.args import FillArgs

    args = FillArgs.of(job)                  # job: a twocats.kdf.geometry.SliceJob
    kernel(mem, states, args.share(1, 2))    # regions 1, 3, 5, ... of the slice

The kernels (``_generated/fill_l*.py``), their threads, their ahead-of-time entry point and the
tests all build a kernel's arguments here, and the generator of the kernels reads the same facts.
Importing this module imports neither numpy nor numba.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from twocats.hashes import HASHES, SCRATCH_WORDS
from twocats.kdf.geometry import SliceJob

__all__ = [
    "CHAINS",
    "DIGEST_AT",
    "LANES",
    "SCRATCH",
    "FillArgs",
    "FillKey",
    "kernel_name",
    "module_name",
]

#: The lane counts that get a kernel (the powers of two the parameters allow).
LANES: tuple[int, ...] = (1, 2, 4, 8, 16)

#: The two block hashes: the final/2014 chain (variant 0) and the March 2014 chain (variant 1).
CHAINS: tuple[str, ...] = ("final", "march")

#: The scratch arrays a kernel takes after ``mem`` and ``states``: (name, dtype, words) per array.
#: The caller allocates them, so that the compiled code allocates nothing itself.
SCRATCH: dict[str, tuple[tuple[str, str, int], ...]] = {
    "final": (("w32", "uint32", SCRATCH_WORDS), ("w64", "uint64", SCRATCH_WORDS)),
    "march": (
        ("w32", "uint32", SCRATCH_WORDS),
        ("w64", "uint64", SCRATCH_WORDS),
        ("odd", "uint64", 8),
    ),
}


#: Where in the ``w32`` scratch the state hash leaves the W words of its digest (after the chaining
#: value and the message block of a 32-bit hash).
DIGEST_AT = 24


def kernel_name(chain: str, lanes: int) -> str:
    """Return the name of the kernel of ``chain`` ("final" or "march") for ``lanes`` lanes."""
    return f"fill_{chain}_l{lanes}"


def module_name(lanes: int) -> str:
    """Return the module name (without package) of the kernel for ``lanes`` lanes."""
    return f"fill_l{lanes}"


@dataclass(frozen=True)
class FillKey:
    """One fill kernel: lane count, backend, hash code and block-hash variant."""

    lanes: int
    backend: str
    hash_type: int
    variant: int

    @property
    def name(self) -> str:
        """The kernel's name, e.g. ``fill_final_l8_blake2s__simd``."""
        base = kernel_name(CHAINS[self.variant], self.lanes)
        return f"{base}_{HASHES[self.hash_type].name}__{self.backend}"

    @property
    def label(self) -> str:
        """A short name for progress displays, e.g. ``fill blake2s x8``."""
        march = " (2014-03)" if self.variant else ""
        return f"fill {HASHES[self.hash_type].name} x{self.lanes}{march}"


@dataclass(frozen=True)
class FillArgs:
    """The integer arguments of one kernel call, after ``mem``, ``states`` and the scratch.

    The kernel fills blocks ``[done, done + per_slice)`` of the regions ``p_first, p_first +
    p_step, ...``; the other fields are those of :class:`~twocats.kdf.geometry.SliceJob`, with
    ``dependent`` as 0 or 1.  ``time_cost`` is an argument of the March 2014 kernels only (None
    for the final/2014 ones).
    """

    p_first: int
    p_step: int
    done: int
    per_slice: int
    bpt: int
    blocklen: int
    sub_blocklen: int
    parallelism: int
    multiplies: int
    dependent: int
    time_cost: int | None = None

    @classmethod
    def count(cls, variant: int) -> int:
        """Return how many integer arguments a kernel of ``variant`` (0 or 1) takes."""
        return len(dataclasses.fields(cls)) - (0 if variant else 1)

    @classmethod
    def of(cls, job: SliceJob) -> FillArgs:
        """Return the arguments that fill ``job``'s slice of every region on one thread."""
        return cls(
            0,
            1,
            job.done,
            job.per_slice,
            job.bpt,
            job.blocklen,
            job.sub_blocklen,
            job.parallelism,
            job.multiplies,
            int(bool(job.dependent)),
            job.time_cost if job.variant else None,
        )

    def share(self, p_first: int, p_step: int) -> FillArgs:
        """Return these arguments for the regions ``p_first, p_first + p_step, ...`` only."""
        return dataclasses.replace(self, p_first=p_first, p_step=p_step)

    def job(self, lanes: int, hash_type: int) -> SliceJob:
        """Return the :class:`~twocats.kdf.geometry.SliceJob` these arguments fill."""
        variant = 0 if self.time_cost is None else 1
        return SliceJob(
            self.done, self.per_slice, self.bpt, self.blocklen, self.sub_blocklen,
            self.parallelism, lanes, self.multiplies, bool(self.dependent), hash_type, variant,
            self.time_cost or 0,
        )  # fmt: skip

    def ints(self) -> tuple[int, ...]:
        """Return the arguments in the kernel's order (``time_cost`` last, where it is one)."""
        values = (
            self.p_first, self.p_step, self.done, self.per_slice, self.bpt, self.blocklen,
            self.sub_blocklen, self.parallelism, self.multiplies, self.dependent,
        )  # fmt: skip
        return values if self.time_cost is None else (*values, self.time_cost)
