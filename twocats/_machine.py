"""The one probe of this machine (its memory, the CPUs this process may use, its load) and the
process's one pool of kernel threads.

Everything in twocats that sizes itself to the machine asks here: the hasher's memory budget and
concurrency, the fill thread pool, warm-up, the bulk workers, tuning and the benchmarks.  They
therefore agree, inside a container too, where the CPUs are the process's affinity lowered by the
cgroup CPU quota and the memory is the physical memory lowered by the cgroup memory limit or the
address-space limit (``ulimit -v``).

Each cgroup reader takes the cgroup folder as a parameter (None: :data:`CGROUP`, read at the
call), so a test can hand it a folder of its own.  The compiled kernels release the GIL, so the
fill's regions and the lanes' runs share :func:`kernel_threads`.  This module imports neither
numpy nor numba.
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "CGROUP",
    "affinity_cpus",
    "cpu_quota",
    "kernel_threads",
    "load_average",
    "load_averages",
    "machine_memory",
    "usable_cpus",
]

#: The cgroup folder of this process (v2 files at its top, v1 controllers in sub-folders).
CGROUP: Final = Path("/sys/fs/cgroup")

# cgroup v1 reports "no limit" as a page-rounded 2**63 - 1; anything this large means none.
_NO_MEMORY_LIMIT: Final = 1 << 62


def _read_setting(path: Path) -> str | None:
    """Return the stripped text of a small system file, or None if it cannot be read."""
    try:
        with path.open(encoding="ascii") as handle:
            return handle.read(256).strip()
    except (OSError, UnicodeDecodeError):
        return None


def affinity_cpus() -> int:
    """Return the number of CPUs this process may be scheduled on (its affinity)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def cpu_quota(cgroup: Path | None = None) -> int | None:
    """Return the whole CPUs the cgroup's quota allows (at least 1), or None without a quota.

    A fractional quota is rounded down: 1.5 CPUs' worth of time is 1 CPU that never waits for
    the scheduler's throttle, where 2 threads would both stall at the end of every period.
    """
    cgroup = CGROUP if cgroup is None else cgroup
    text = _read_setting(cgroup / "cpu.max")
    if text is not None:
        quota, _, period = text.partition(" ")
    else:
        quota = _read_setting(cgroup / "cpu" / "cpu.cfs_quota_us") or ""
        period = _read_setting(cgroup / "cpu" / "cpu.cfs_period_us") or ""
    if quota.isdigit() and period.isdigit() and int(period) > 0:
        return max(1, int(quota) // int(period))
    return None


def usable_cpus(cgroup: Path | None = None) -> int:
    """Return the CPUs this process may use: its affinity, lowered by a cgroup CPU quota."""
    cpus = affinity_cpus()
    quota = cpu_quota(cgroup)
    return cpus if quota is None else min(cpus, quota)


def _physical_memory() -> int | None:
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        page_size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None
    if pages <= 0 or page_size <= 0:
        return None
    return int(pages) * int(page_size)


def _cgroup_memory(cgroup: Path | None) -> int | None:
    """Return the cgroup's memory limit (v2, then v1), or None where it sets none."""
    cgroup = CGROUP if cgroup is None else cgroup
    for path in (cgroup / "memory.max", cgroup / "memory" / "memory.limit_in_bytes"):
        text = _read_setting(path)
        if text is not None and text.isdigit() and 0 < int(text) < _NO_MEMORY_LIMIT:
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


def machine_memory(cgroup: Path | None = None) -> int | None:
    """Return the most memory this process can be given, in bytes (None: the platform won't say).

    That is the physical memory, or the container's memory limit or the process's address-space
    limit where either is smaller.
    """
    known = [
        size
        for size in (_physical_memory(), _cgroup_memory(cgroup), _address_space_limit())
        if size is not None
    ]
    return min(known) if known else None


def load_averages() -> tuple[float, float, float] | None:
    """Return the 1, 5 and 15 minute load averages, or None where the platform has none."""
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return None


def load_average() -> float | None:
    """Return the one-minute load average, or None where the platform has none."""
    averages = load_averages()
    return None if averages is None else averages[0]


_pool_lock = threading.Lock()
# The shared pool and its size.
_pool: list[tuple[ThreadPoolExecutor, int]] = []


def kernel_threads(count: int) -> ThreadPoolExecutor:
    """Return the process's pool of kernel threads, grown to at least ``count`` threads.

    It lives until exit; a forked child, in which its threads do not exist, starts a fresh one.
    """
    from concurrent.futures import ThreadPoolExecutor

    with _pool_lock:
        if not _pool or _pool[0][1] < count:
            # A smaller pool is dropped, not shut down: a concurrent call may still be about to
            # submit to it.  Its idle threads exit once the last reference to it is gone.
            _pool[:] = [(ThreadPoolExecutor(count, thread_name_prefix="twocats"), count)]
        return _pool[0][0]


@atexit.register
def _shutdown_pool() -> None:
    with _pool_lock:
        for pool, _size in _pool:
            pool.shutdown(wait=True)


def _forget_pool_after_fork() -> None:
    global _pool_lock
    _pool.clear()
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)
