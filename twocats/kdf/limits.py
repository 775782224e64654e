"""Resource limits: what the machine can give, what a derivation costs, and the errors for both.

Every entry point that allocates work memory (``derive``, ``client``, ``update``, :class:`Engine`,
:class:`~twocats.PasswordHasher` and the command line) compares the memory a request needs with
its limit *before* allocating anything.  The limit is the caller's ``max_memory`` where one is
given, and never more than :func:`machine_memory`: the physical memory, lowered by the
container's memory limit (cgroup) or the process's address-space limit (``ulimit -v``) where
those are smaller.  A request within the limit that the operating system still cannot serve
becomes a :class:`~twocats.exceptions.HashingError` when the allocator reports it.

Memory alone does not bound the time a stored hash string can demand: ``time_cost`` repeats
slices (2014) or every block hash (March 2014) up to ``2**30`` times, 32-byte blocks cost about
thirty times more per byte than 16 KiB ones, and each block's state hash costs more with the
SHA-2 hash types.  :func:`work_units` therefore counts, from the level plan alone, what a
derivation does at the seam (``fill_slice`` calls, blocks, sub-blocks, lane rows and multiply
steps), and :func:`estimated_work` weighs those counts by their measured CPU cost: the result is
in *work units*, one nanosecond of CPU time of one core of the project machine on the compiled
``simd`` backend.  ``tests/password/test_hasher_limits.py`` checks the counts against a seam that
counts what the orchestration really asks of it, for every variant, hash type and block shape,
and ``python -m bench work`` measures the estimate against CPU time.

:class:`StoredLimits` is the one place that decides whether stored or file-supplied parameters
may run: :func:`check_stored_params` is what :class:`~twocats.PasswordHasher`, the command line
and bulk upgraders call.  Its defaults follow the costliest parameters a server may have stored
hashes with: its own, the built-in profiles and those the operator declares (see
:meth:`StoredLimits.relative_to`), so that lowering the cost never locks anyone out, while a
planted hash, whatever its shape, costs at most 2.5 verifications of the costliest of them.

This module imports neither numpy nor numba.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from twocats._machine import machine_memory, usable_cpus
from twocats._units import format_size
from twocats.exceptions import HashLimitError, HashMemoryLimitError, MemoryLimitError
from twocats.kdf import geometry
from twocats.params import check_int

if TYPE_CHECKING:
    from twocats.params import Params

__all__ = [
    "MACHINE",
    "MAX_MEMORY_NAME",
    "MEMORY_RATIO",
    "WORK_RATIO",
    "StoredLimits",
    "WorkUnits",
    "check_stored_params",
    "effective_limit",
    "estimated_work",
    "format_work",
    "machine_memory",
    "memory_limit_error",
    "usable_cpus",
    "work_units",
]

#: By default a stored hash may estimate at most this many times the work of the reference
#: parameters (a hasher's own): an upgraded hash, whose lower levels add up to one more
#: verification, stays well within it.
WORK_RATIO: Final = 2.5

#: By default a stored hash may need at most this many times the memory of the reference
#: parameters: one memory cost above them.
MEMORY_RATIO: Final = 2

# Measured CPU cost of each counted unit, in picoseconds (simd backend, one thread, the project
# machine: ``python -m bench work``).  Where a cost varied with the memory size the largest
# figure is kept: an estimate may run high, never low.
_CALL_PS: Final = 1_500_000
_BLOCK_PS: Final = (250_000, 300_000, 220_000, 340_000)  # by hash code: the state hash
_SUB_BLOCK_PS: Final = 700
_ROW_PS: Final = {1: 1_850, 2: 1_850, 4: 1_570, 8: 1_740, 16: 3_020}  # by lanes
_MULTIPLY_ROW_PS: Final = (0, 1_060, 3_440, 5_910, 9_250, 11_830, 14_400, 16_980, 19_550)
_MULTIPLY_2014_03_PS: Final = 720  # per multiply of the March 2014 chain, which is shorter
_FRESH_BYTE_PS: Final = 450  # first touch of memory the operating system has to map

#: How a limit set by the caller is named in error messages.
MAX_MEMORY_NAME: Final = "max_memory"

#: How the machine's own limit is named in error messages.
MACHINE: Final = "this machine's memory"


def format_work(units: int) -> str:
    """Format work units (nanoseconds of reference CPU time) as seconds, e.g. ``0.18 s``."""
    seconds = units / 1e9
    return f"{seconds:.0f} s" if seconds >= 100 else f"{seconds:.3g} s"


def effective_limit(max_memory: int | None) -> tuple[int | None, str]:
    """Return the limit in force for ``max_memory`` and its name for error messages.

    The limit is ``max_memory``, lowered to :func:`machine_memory` where that is smaller; None
    means no limit is known at all (no ``max_memory`` and a platform that does not report its
    memory).
    """
    machine = machine_memory()
    if max_memory is None or (machine is not None and machine < max_memory):
        return machine, MACHINE
    return max_memory, MAX_MEMORY_NAME


def memory_limit_error(mem_cost: int, needed: int, limit: int, source: str) -> MemoryLimitError:
    """Return the error for a request of ``needed`` bytes at ``mem_cost`` above ``limit``.

    ``source`` names the limit (:data:`MAX_MEMORY_NAME` or :data:`MACHINE`).
    """
    return MemoryLimitError(
        f"mem_cost={mem_cost} needs {format_size(needed)} of work memory ({needed} bytes), more "
        f"than {source} ({format_size(limit)}, {limit} bytes)"
    )


@dataclasses.dataclass(frozen=True)
class WorkUnits:
    """What a derivation asks of the seam, counted from its level plan."""

    calls: int = 0
    blocks: int = 0
    sub_blocks: int = 0
    rows: int = 0
    multiplies: int = 0


def work_units(params: Params, *, old_mem_cost: int | None = None) -> WorkUnits:
    """Count the seam calls, blocks, sub-blocks, lane rows and multiply steps of a derivation.

    A row is one step of the lane loop (``lanes`` words); March 2014 repeats every block hash
    ``2**time_cost`` times (its state hash once), the 2014 version the last slice of every main
    level.  The first data-independent slice of a level expands its block 0 instead of hashing
    it.
    """
    calls = blocks = sub_blocks = rows = multiplies = 0
    time_cost = params.time_cost or 0
    inner = 1 << time_cost if params.variant == "2014-03" else 1
    for plan in geometry.plan(params, old_mem_cost=old_mem_cost):
        if not plan.fills:
            continue
        for s in range(4):
            dependent = s >= plan.resistant_slices
            sub_blocklen = plan.sub_blocklen if dependent else plan.blocklen
            repeats = 1 << time_cost if params.variant == "2014" and plan.main and s == 3 else 1
            hashed = plan.per_slice - (0 if dependent or s else 1)
            count = repeats * plan.parallelism * max(hashed, 0)
            calls += repeats
            blocks += count
            sub_blocks += count * inner * (plan.blocklen // sub_blocklen)
            level_rows = count * inner * (plan.blocklen // params.lanes)
            rows += level_rows
            multiplies += level_rows * params.multiplies
    return WorkUnits(calls, blocks, sub_blocks, rows, multiplies)


def estimated_work(params: Params, *, old_mem_cost: int | None = None) -> int:
    """Return the estimated work of a derivation (or an update), in work units (CPU ns).

    The counts of :func:`work_units` weighed by their measured costs; fresh memory is not
    included (see :meth:`StoredLimits.work_of`).
    """
    units = work_units(params, old_mem_cost=old_mem_cost)
    if params.variant == "2014-03":
        row = _ROW_PS[params.lanes] + _MULTIPLY_2014_03_PS * params.multiplies
    else:
        row = _ROW_PS[params.lanes] + _MULTIPLY_ROW_PS[params.multiplies]
    picoseconds = (
        units.calls * _CALL_PS
        + units.blocks * _BLOCK_PS[params.hash_code]
        + units.sub_blocks * _SUB_BLOCK_PS
        + (units.rows * row)
    )
    return picoseconds // 1000


def _memory_cost(memory: int) -> int:
    """Return the mem_cost whose memory (``2**m`` KiB) is the largest not above ``memory``."""
    return max(0, min(30, (memory >> 10).bit_length() - 1))


@dataclasses.dataclass(frozen=True)
class StoredLimits:
    """The memory and work that stored or file-supplied parameters may ask for.

    ``max_memory`` and ``max_work`` are the limits (bytes, work units); ``memory_name`` names the
    memory limit in messages, ``work_basis`` says where ``max_work`` comes from, and
    ``pooled_bytes`` is the memory a caller already holds for reuse: a request above it also
    pays for mapping fresh memory, which :meth:`work_of` adds.
    """

    max_memory: int
    max_work: int
    memory_name: str = MAX_MEMORY_NAME
    work_basis: str = "set by the caller"
    pooled_bytes: int = 0

    @classmethod
    def relative_to(
        cls,
        reference: Params,
        *,
        previous: Iterable[Params] = (),
        max_memory: int | None = None,
        max_work: int | None = None,
    ) -> StoredLimits:
        """Return the limits for a caller whose own parameters are ``reference``.

        ``previous`` are parameters stored hashes may also have been made with (those the
        operator used before, the built-in profiles): each is accepted as it is, and upgraded,
        unless it needs more memory than an explicit ``max_memory`` or the machine allows.
        Without ``max_memory`` the limit is :data:`MEMORY_RATIO` times the reference's memory, or
        the memory of the largest of ``previous`` where that is more; without ``max_work`` it is
        :data:`WORK_RATIO` times the work of the costliest of the reference and ``previous``, or
        of the default profile's layout at ``max_memory`` where that is more (an operator who
        raises ``max_memory`` accepts ordinary hashes of that size).  Either limit is lowered to
        what the machine can give.  Raises
        :class:`~twocats.exceptions.InvalidParametersError` for a limit that is not a positive
        integer.
        """
        from twocats.profiles import DEFAULT, PROFILES

        names = {params: f"the {name} profile" for name, params in PROFILES.items()}
        own_memory = reference.memory_bytes
        earlier = tuple(previous)
        if max_memory is None:
            wanted = max([MEMORY_RATIO * own_memory] + [geometry.work_memory(p) for p in earlier])
        else:
            wanted = check_int("max_memory", max_memory, 1)
        name = MAX_MEMORY_NAME
        machine, machine_name = effective_limit(wanted)
        if machine is not None and machine < wanted:
            wanted, name = machine, machine_name
        if max_work is not None:
            work = check_int("max_work", max_work, 1)
            return cls(wanted, work, name, "set by the caller", own_memory)
        plain = cls(wanted, 0, pooled_bytes=own_memory)
        work, basis = estimated_work(reference), "the own parameters"
        for params in earlier:
            # Parameters above the memory limit are refused for their memory alone.
            if geometry.work_memory(params) <= wanted and plain.work_of(params) > work:
                name_of = names.get(params, f"earlier parameters ({_describe(params)})")
                work, basis = plain.work_of(params), name_of
        if max_memory is not None:
            at_limit = _scaled(DEFAULT, _memory_cost(max_memory))
            if plain.work_of(at_limit) > work:
                work, basis = plain.work_of(at_limit), "a default-profile hash at max_memory"
        basis = f"{WORK_RATIO:g} times the work of {basis}"
        return cls(wanted, int(WORK_RATIO * work), name, basis, own_memory)

    def work_of(self, params: Params, *, old_mem_cost: int | None = None) -> int:
        """Return the work of ``params``, with the first touch of memory beyond ``pooled_bytes``."""
        needed = geometry.work_memory(params, old_mem_cost=old_mem_cost)
        fresh = max(0, needed - self.pooled_bytes)
        return estimated_work(params, old_mem_cost=old_mem_cost) + fresh * _FRESH_BYTE_PS // 1000

    def check(
        self,
        params: Params,
        *,
        old_mem_cost: int | None = None,
        subject: str = "the stored hash",
        memory: bool = True,
    ) -> None:
        """Refuse ``params`` if they need more memory or work than these limits allow.

        Raises :class:`~twocats.exceptions.HashMemoryLimitError` or
        :class:`~twocats.exceptions.HashLimitError`, before anything is allocated; ``subject``
        names what is refused in the message.  ``memory=False`` checks the work only (for a
        caller that checks memory against a limit of its own).
        """
        needed = geometry.work_memory(params, old_mem_cost=old_mem_cost)
        if memory and needed > self.max_memory:
            error = memory_limit_error(params.mem_cost, needed, self.max_memory, self.memory_name)
            raise HashMemoryLimitError(f"{subject} is refused: {error}")
        work = self.work_of(params, old_mem_cost=old_mem_cost)
        if work > self.max_work:
            raise HashLimitError(
                f"{subject} is refused: its work is estimated at {format_work(work)} of CPU "
                f"({_describe(params)}), more than max_work ({format_work(self.max_work)}, "
                f"{self.work_basis})"
            )


def check_stored_params(
    params: Params,
    reference: Params,
    *,
    previous: Iterable[Params] = (),
    max_memory: int | None = None,
    max_work: int | None = None,
    old_mem_cost: int | None = None,
    subject: str = "the stored hash",
) -> None:
    """Refuse stored or file-supplied ``params`` that cost more than a caller should run.

    ``reference`` is the caller's own parameters (a command without any uses
    :data:`twocats.profiles.DEFAULT`); the limits are :meth:`StoredLimits.relative_to` it, the
    built-in profiles (:data:`twocats.profiles.BUILT_IN`) and ``previous``, and ``old_mem_cost``
    checks an upgrade from that cost instead of a derivation.  The same check, with the same
    defaults and messages, guards :meth:`twocats.PasswordHasher.verify`,
    :meth:`~twocats.PasswordHasher.upgrade` and :meth:`~twocats.PasswordHasher.check_hash`.
    """
    from twocats.profiles import BUILT_IN

    limits = StoredLimits.relative_to(
        reference, previous=(*BUILT_IN, *previous), max_memory=max_memory, max_work=max_work
    )
    limits.check(params, old_mem_cost=old_mem_cost, subject=subject)


def _describe(params: Params) -> str:
    """Name the settings of ``params`` that decide its cost, e.g. ``mem_cost=18, multiplies=3``."""
    return ", ".join(
        f"{name}={getattr(params, name)}"
        for name in (
            "hash_type",
            "mem_cost",
            "time_cost",
            "multiplies",
            "lanes",
            "parallelism",
            "block_size",
            "sub_block_size",
        )
        if getattr(params, name) is not None
    )


def _scaled(params: Params, mem_cost: int) -> Params:
    """Return ``params`` at another memory cost (start level included; weak sizes allowed)."""
    return dataclasses.replace(params, mem_cost=mem_cost, start_mem_cost=mem_cost, strict=False)
