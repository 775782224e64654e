"""Two threads hashing at once against one thread: does the compiled fill really release the GIL?

``python -m bench threads [--repeats N] [--min-time S] [--out DIR] [--smoke]`` times, side by side
in one process (in rotation, see :mod:`bench.harness`), two hashes run one after the other on one
thread against the same two hashes run at once on two threads, for:

* the ``MODERATE`` profile through :meth:`twocats.PasswordHasher.hash` (256 MiB, parallelism 2),
  with the fill's region threads capped at one (``TWOCATS_THREADS=1``) so that each hash keeps one
  core busy: two threads can then only be faster if the fill releases the GIL;
* a 1 GiB derivation with parallelism 1 (:meth:`twocats.kdf.Engine.derive`, one engine per
  thread, reused), where each hash is one thread by construction;
* the ``MODERATE`` profile again with the default region threads, where a single hash already
  uses both cores: two concurrent hashes cannot double that, and the ratio shows it.

The ratio is the throughput of two threads over one (the time of two sequential hashes over the
time of two concurrent ones); the goal is 1.8 on 2 cores.  The report also gives the CPU time per
wall-clock second of each mode (about 2 when two cores really work at once), the load average
before and after, since other jobs on a shared machine take cores away from both modes (with
Linux's autogroup scheduling, a busy session elsewhere holds this process to about one core
whatever its thread count), and a measure that does not depend on free cores: the longest
stall of a Python loop on one thread while another thread hashes.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from bench.harness import Report, load_average, load_note, measure_group, plain_smoke, plain_suite
from twocats.kdf import Engine
from twocats.kdf.fill.threads import THREADS_ENV
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST, MODERATE

__all__ = ["GOAL", "main", "run", "smoke"]

#: Goal of issue 7: two threads hash at least this many times as fast as one on 2 cores.
GOAL = 1.8

PASSWORDS = (b"first password", b"second password")
SALT = b"bench threads salt"


@contextmanager
def _fill_threads(count: int | None) -> Iterator[None]:
    """Cap the fill's region threads at ``count`` (None: the default) while the block runs."""
    previous = os.environ.get(THREADS_ENV)
    if count is None:
        os.environ.pop(THREADS_ENV, None)
    else:
        os.environ[THREADS_ENV] = str(count)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(THREADS_ENV, None)
        else:
            os.environ[THREADS_ENV] = previous


_AUTOGROUP_NOTE = (
    "  Autogroup scheduling is on: while another session keeps a core busy, this process gets "
    "about one core in all, so two threads cannot beat one whatever the GIL does."
)


def _autogroup() -> bool:
    """Return whether Linux shares the CPUs between sessions (autogroup) rather than threads."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled", encoding="ascii") as handle:
            return handle.read().strip() == "1"
    except OSError:
        return False


def _pair(one: Callable[[int], object]) -> dict[str, Callable[[], object]]:
    """The two measured modes of a hash ``one(worker)``: sequential and concurrent."""

    def sequential() -> None:
        one(0)
        one(1)

    def concurrent() -> None:
        other = threading.Thread(target=one, args=(1,))
        other.start()
        one(0)
        other.join()

    return {"1 thread": sequential, "2 threads": concurrent}


def _concurrent_outputs(one: Callable[[int], object]) -> list[object]:
    """Return the outputs of the two hashes run at once on two threads."""
    outputs: dict[int, object] = {}

    def record(worker: int) -> None:
        outputs[worker] = one(worker)

    _pair(record)["2 threads"]()
    return [outputs[0], outputs[1]]


def _longest_stall(one: Callable[[int], object]) -> tuple[float, float]:
    """Run one hash on a second thread while this thread spins a Python loop.

    Returns the longest gap between two iterations of the loop and the time of the hash, in
    seconds.  A fill that kept the GIL would stall the loop for a whole slice call (a quarter
    of a level, so about a quarter of the hash); a fill that releases it leaves only the
    operating system's scheduling gaps.  Unlike the throughput ratio, this does not depend on
    how many cores other jobs leave free.
    """
    done = threading.Event()

    def work() -> None:
        one(0)
        done.set()

    worker = threading.Thread(target=work)
    start = last = time.perf_counter()
    longest = 0.0
    worker.start()
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    worker.join()
    return longest, time.perf_counter() - start


def _cpu_per_second(call: Callable[[], object]) -> float:
    """Run ``call`` once; return the process CPU seconds spent per wall-clock second."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


def _workloads(smoke: bool) -> dict[str, tuple[Callable[[int], object], int | None, bool]]:
    """Workload name -> (one hash on worker 0 or 1, fill thread cap, whether the goal applies)."""
    moderate = CHEAPEST if smoke else MODERATE
    big = Params(mem_cost=10 if smoke else 20, parallelism=1)
    hasher = PasswordHasher.from_params(moderate)
    engines = (Engine(), Engine())

    def hash_moderate(worker: int) -> object:
        return hasher.hash(PASSWORDS[worker], salt=SALT)

    def derive_big(worker: int) -> object:
        return engines[worker].derive(PASSWORDS[worker], SALT, big)

    size = "1 GiB" if not smoke else "1 MiB"
    name = "MODERATE" if not smoke else "CHEAPEST"
    return {
        f"{name} hash, 1 fill thread per hash": (hash_moderate, 1, True),
        f"{size} derive, parallelism 1": (derive_big, None, True),
        f"{name} hash, default fill threads": (hash_moderate, None, False),
    }


def run(*, repeats: int, min_time: float, smoke: bool = False) -> Report:
    """Measure every workload in both modes; return the report (outputs are checked first)."""
    report = Report("threads", "Two threads hashing at once versus one thread")
    before = load_average()
    for workload, (one, cap, goal) in _workloads(smoke).items():
        with _fill_threads(cap):
            calls = _pair(one)
            if _concurrent_outputs(one) != [one(0), one(1)]:
                raise AssertionError(f"{workload}: concurrent and sequential outputs differ")
            timings = measure_group(calls, repeats=repeats, min_time=min_time)
            cpu = {mode: _cpu_per_second(call) for mode, call in calls.items()}
            stall, seconds = _longest_stall(one)
        for mode, timing in timings.items():
            report.record(
                f"{workload}/{mode}",
                timing,
                items=2,
                workload=workload,
                mode=mode,
                cpu_per_wall_s=round(cpu[mode], 2),
            )
        report.notes.append(
            f"{workload}: while one hash ran ({seconds * 1e3:.0f} ms), a Python loop on another "
            f"thread stalled for at most {stall * 1e3:.1f} ms (a held GIL would stall it for a "
            f"slice call, about {seconds / 4 * 1e3:.0f} ms)."
        )
        report.ratio(
            f"{workload}: 2 threads / 1 thread",
            faster=f"{workload}/2 threads",
            slower=f"{workload}/1 thread",
            goal=GOAL if goal and not smoke else None,
        )
    after = load_average()
    report.notes.append(
        load_note(before, after)
        + "  Other jobs on the machine take cores from both modes alike, which lowers the ratio."
        + (_AUTOGROUP_NOTE if _autogroup() else "")
    )
    report.notes.append(
        "Each call hashes twice: one thread runs the two hashes in turn, two threads run one "
        "each at the same time.  The ratio is the time of the first over the second, so 2.0 "
        "means two threads hash twice as fast; cpu_per_wall_s is CPU seconds per wall second."
    )
    report.notes.append(
        "With the default fill threads one MODERATE hash (parallelism 2) already keeps both "
        "cores busy, so two concurrent hashes cannot go faster; that row has no goal."
    )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the full suite and write bench/results/threads.{json,md}."""
    return plain_suite("threads", __doc__, run, argv, repeats=5, min_time=0.0)


def smoke() -> int:
    """Run every workload once at tiny sizes; checks outputs, asserts no timing."""
    return plain_smoke(run)
