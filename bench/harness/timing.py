"""Timing: callables in rotation, and child processes (wall clock, CPU time, peak memory)."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from twocats.perf.samples import Samples

__all__ = ["Process", "measure", "measure_group", "once", "run_process"]


def once(
    call: Callable[[], object], min_time: float, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Time ``call`` in a loop of at least ``min_time`` seconds of ``clock``; return s per call."""
    calls = 0
    start = clock()
    while True:
        call()
        calls += 1
        elapsed = clock() - start
        if elapsed >= min_time:
            return elapsed / calls


def measure(
    call: Callable[[], object], *, repeats: int = 7, warmup: int = 1, min_time: float = 0.05
) -> Samples:
    """Time one callable after ``warmup`` untimed calls."""
    return measure_group({"call": call}, repeats=repeats, warmup=warmup, min_time=min_time)["call"]


def measure_group(
    calls: Mapping[str, Callable[[], object]],
    *,
    repeats: int = 7,
    warmup: int = 1,
    min_time: float = 0.05,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Samples]:
    """Time several callables side by side, one repetition of each in turn, in seconds of
    ``clock`` per call (``time.process_time``: the CPU time of the process)."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            samples[name].append(once(call, min_time, clock))
    return {name: Samples(tuple(values)) for name, values in samples.items()}


@dataclass(frozen=True)
class Process:
    """One finished child process: its exit status, its output, and what it cost."""

    returncode: int
    stdout: bytes
    stderr: bytes
    #: Seconds of wall clock from its start to its end.
    wall: float
    #: CPU seconds (user + system) the system accounted to it when it was reaped.
    cpu: float
    #: Its peak resident memory, in bytes.
    max_rss: int


def run_process(
    args: Sequence[str],
    *,
    stdin: bytes = b"",
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    timeout: float | None = None,
    before: Callable[[], None] | None = None,
) -> Process:
    """Run ``args`` in a fresh process and time it: the wall clock around it, its own CPU time and
    peak memory (``wait4``).  A process that outlives ``timeout`` seconds is killed; ``before`` runs
    in the child before it starts (for example to pin it to a core)."""
    with (
        tempfile.TemporaryFile() as given,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        given.write(stdin)
        given.seek(0)
        started = time.perf_counter()
        child = subprocess.Popen(
            args, stdin=given, stdout=out, stderr=err, env=env, cwd=cwd, preexec_fn=before
        )
        killer = None
        if timeout is not None:
            killer = threading.Timer(timeout, lambda: child.send_signal(signal.SIGKILL))
            killer.start()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        if killer is not None:
            killer.cancel()
        # Popen is told the status wait4 collected, so that it never waits for the child again.
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Process(
            returncode=child.returncode,
            stdout=out.read(),
            stderr=err.read(),
            wall=wall,
            cpu=usage.ru_utime + usage.ru_stime,
            # ru_maxrss is in KiB on Linux.
            max_rss=usage.ru_maxrss * 1024,
        )
