"""The one machine probe: cgroup CPU quota and memory limit from a folder of fake cgroup files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from twocats import _machine
from twocats.bulk import workers
from twocats.cli import warmup
from twocats.kdf import limits
from twocats.kdf.fill import threads as fill


def _cgroup(folder: Path, files: dict[str, str]) -> Path:
    """Write cgroup files, named by their paths under ``folder``, and return ``folder``."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="ascii")
    return folder


def test_a_quota_of_one_and_a_half_cpus_leaves_one(tmp_path: Path) -> None:
    """cpu.max "150000 100000" (1.5 CPUs) rounds down to 1 usable CPU."""
    cgroup = _cgroup(tmp_path, {"cpu.max": "150000 100000"})
    assert _machine.cpu_quota(cgroup) == 1
    assert _machine.usable_cpus(cgroup) == 1


def test_no_quota_leaves_the_affinity(tmp_path: Path) -> None:
    """cpu.max "max 100000", or no cgroup files at all, leaves the CPUs of the affinity."""
    affinity = len(os.sched_getaffinity(0))
    assert _machine.cpu_quota(_cgroup(tmp_path / "max", {"cpu.max": "max 100000"})) is None
    assert _machine.usable_cpus(tmp_path / "max") == affinity
    assert _machine.usable_cpus(tmp_path / "none") == affinity


def test_a_quota_never_raises_the_affinity(tmp_path: Path) -> None:
    """A quota of more CPUs than the affinity holds leaves the affinity."""
    cgroup = _cgroup(tmp_path, {"cpu.max": "100000000 100000"})
    assert _machine.cpu_quota(cgroup) == 1000
    assert _machine.usable_cpus(cgroup) == len(os.sched_getaffinity(0))


def test_a_quota_below_one_cpu_still_leaves_one(tmp_path: Path) -> None:
    """cpu.max "20000 100000" (a fifth of a CPU) still leaves one CPU."""
    assert _machine.usable_cpus(_cgroup(tmp_path, {"cpu.max": "20000 100000"})) == 1


def test_cgroup_v1_quota_files_are_read(tmp_path: Path) -> None:
    """Without cpu.max, cgroup v1's cpu.cfs_quota_us over cpu.cfs_period_us is the quota."""
    v1 = {"cpu/cpu.cfs_quota_us": "300000", "cpu/cpu.cfs_period_us": "100000"}
    cgroup = _cgroup(tmp_path, v1)
    assert _machine.cpu_quota(cgroup) == 3
    assert _machine.cpu_quota(_cgroup(tmp_path / "off", {"cpu/cpu.cfs_quota_us": "-1"})) is None


@pytest.mark.parametrize("text", ["", "garbage", "150000", "150000 0", "-1 100000"])
def test_a_malformed_cpu_max_is_no_quota(tmp_path: Path, text: str) -> None:
    """An empty, malformed or zero-period cpu.max is read as no quota."""
    assert _machine.cpu_quota(_cgroup(tmp_path, {"cpu.max": text})) is None


def test_the_cgroup_memory_limit_lowers_the_machine_memory(tmp_path: Path) -> None:
    """memory.max below the physical memory is the machine memory; "max" sets no limit."""
    physical = _machine.machine_memory(tmp_path / "none")
    assert physical is not None
    assert _machine.machine_memory(_cgroup(tmp_path / "v2", {"memory.max": "1048576"})) == 1 << 20
    assert _machine.machine_memory(_cgroup(tmp_path / "max", {"memory.max": "max"})) == physical
    v1 = _cgroup(tmp_path / "v1", {"memory/memory.limit_in_bytes": str((1 << 63) - 4096)})
    assert _machine.machine_memory(v1) == physical


def test_the_fill_pool_and_the_hasher_agree_under_a_quota(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Under a 1.5-CPU quota the fill pool, the hasher, warm-up and bulk workers all see 1 CPU."""
    monkeypatch.delenv(fill.THREADS_ENV, raising=False)
    monkeypatch.setattr(_machine, "CGROUP", _cgroup(tmp_path, {"cpu.max": "150000 100000"}))
    assert fill.default_threads() == 1
    assert limits.usable_cpus() == 1
    assert warmup.usable_cpus() == 1
    assert workers.usable_cpus() == 1


def test_the_load_average_is_a_number_or_none() -> None:
    """load_average returns the one-minute figure where the platform keeps one."""
    load = _machine.load_average()
    assert load is None or load >= 0.0


def test_the_load_averages_are_the_platform_figures_or_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """load_averages gives the three figures, load_average the first; both None without them."""
    monkeypatch.setattr(os, "getloadavg", lambda: (1.5, 2.0, 3.0))
    assert _machine.load_averages() == (1.5, 2.0, 3.0)
    assert _machine.load_average() == 1.5

    def unavailable() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert _machine.load_averages() is None
    assert _machine.load_average() is None


def test_the_kernel_threads_are_one_pool_that_grows() -> None:
    """The fill and the lanes share one pool of kernel threads, grown to the largest need."""
    small = _machine.kernel_threads(1)
    assert _machine.kernel_threads(1) is small
    large = _machine.kernel_threads(65)
    assert large is not small
    assert _machine.kernel_threads(2) is large
    assert large.submit(lambda: 7).result() == 7
