"""Resource limits: what the machine can give, what a derivation costs, and the errors for both.

Every entry point that allocates work memory (``derive``, ``client``, ``update``, :class:`Engine`,
:class:`~twocats.PasswordHasher` and the command line) compares the memory a request needs with
its limit *before* allocating anything.  The limit is the caller's ``max_memory`` where one is
given, and never more than :func:`machine_memory`: the physical memory, lowered by the
container's memory limit (cgroup) or the process's address-space limit (``ulimit -v``) where
those are smaller.  A request within the limit that the operating system still cannot serve
becomes a :class:`~twocats.exceptions.HashingError` when the allocator reports it.

Memory alone does not bound the time a stored hash string can demand: ``time_cost`` repeats
slices (2014) or every block hash (March 2014) up to ``2**30`` times, and 32-byte blocks cost
about thirty times more per byte than 16 KiB ones.  :func:`estimated_work` therefore rates a
derivation in *bytes of standard fill*: the bytes a derivation with the reference layout (16 KiB
blocks, 8 lanes, 2 multiplies, no repetitions) would fill in the same time on the compiled
backends.  A standard 2015 derivation at memory M rates about M (1.4 M with 3 multiplies; a
``start_mem_cost`` below ``mem_cost`` adds the lower levels, up to twice as much).  The figures of
the model were measured on the project machine and are good to within a factor of two, which is
all a limit needs.

This module imports neither numpy nor numba.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from twocats.exceptions import MemoryLimitError
from twocats.kdf import geometry

if TYPE_CHECKING:
    from twocats.params import Params

__all__ = [
    "BLOCK_OVERHEAD_BYTES",
    "MACHINE",
    "MAX_MEMORY_NAME",
    "effective_limit",
    "estimated_work",
    "format_size",
    "machine_memory",
    "memory_limit_error",
]

#: The fixed cost of one block (its state hash and addressing) in bytes of standard fill: a
#: 32-byte block costs about as much as 800 bytes of a 16 KiB block.
BLOCK_OVERHEAD_BYTES: Final = 768

#: How a limit set by the caller is named in error messages.
MAX_MEMORY_NAME: Final = "max_memory"

#: How the machine's own limit is named in error messages.
MACHINE: Final = "this machine's memory"

# cgroup files holding a container's memory limit (v2, then v1); "max" or a huge value: none.
_CGROUP_LIMITS: Final = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")

# cgroup v1 reports "no limit" as a page-rounded 2**63 - 1; anything this large means none.
_NO_CGROUP_LIMIT: Final = 1 << 62


def format_size(nbytes: int) -> str:
    """Format a byte count with a binary unit, e.g. ``512 MiB`` or ``1.5 GiB``."""
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            if unit == "bytes":
                return f"{nbytes} bytes"
            return f"{value:.4g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _physical_memory() -> int | None:
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        page_size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None
    if pages <= 0 or page_size <= 0:
        return None
    return int(pages) * int(page_size)


def _cgroup_limit() -> int | None:
    for path in _CGROUP_LIMITS:
        try:
            with open(path, encoding="ascii") as handle:
                text = handle.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isdigit() and 0 < int(text) < _NO_CGROUP_LIMIT:
            return int(text)
    return None


def _address_space_limit() -> int | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - platforms without the resource module
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    return int(soft)


def machine_memory() -> int | None:
    """Return the most memory this process can be given, in bytes (None: the platform won't say).

    That is the physical memory, or the container's memory limit or the process's address-space
    limit where either is smaller.
    """
    known = [
        size
        for size in (_physical_memory(), _cgroup_limit(), _address_space_limit())
        if size is not None
    ]
    return min(known) if known else None


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


def estimated_work(params: Params, *, old_mem_cost: int | None = None) -> int:
    """Return the estimated work of a derivation (or an update) in bytes of standard fill.

    Each level that fills memory counts its bytes, scaled by the lane count (fewer lanes hash
    fewer bytes per step: ``8 / lanes``) and the multiply chain (``(1 + multiplies) / 3``), plus
    :data:`BLOCK_OVERHEAD_BYTES` per block, times its repetitions: ``2**time_cost`` for every
    block of the March 2014 version, and for the 2014 version ``(3 + 2**time_cost) / 4`` on the
    main levels, whose last slice runs ``2**time_cost`` times.
    """
    total = 0
    for plan in geometry.plan(params, old_mem_cost=old_mem_cost):
        if not plan.fills:
            continue
        blocks = plan.parallelism * plan.blocks_per_region
        fill = 4 * plan.words * 8 * (1 + params.multiplies) // (3 * params.lanes)
        level = fill + blocks * BLOCK_OVERHEAD_BYTES
        time_cost = params.time_cost or 0
        if params.variant == "2014-03":
            level <<= time_cost
        elif params.variant == "2014" and plan.main:
            level = level * (3 + (1 << time_cost)) // 4
        total += level
    return total
