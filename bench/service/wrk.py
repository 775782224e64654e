"""The HTTP benchmark's load: ``wrk`` with :file:`mix.lua` against one server, for a bounded time.

:func:`drive` runs ``wrk`` while :class:`Sampler` times ``GET /health`` and reads the workers'
memory from ``/proc``; :class:`Load` is what one run saw.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from bench.service.servers import Server, get
from twocats._machine import usable_cpus

__all__ = ["LUA_SCRIPT", "Answer", "Load", "Sampler", "drive", "rss", "wrk_path"]

LUA_SCRIPT = Path(__file__).resolve().parent / "mix.lua"


def wrk_path() -> str | None:
    """The ``wrk`` executable, or None where it is not installed."""
    return shutil.which("wrk")


@dataclasses.dataclass(frozen=True)
class Answer:
    """One answer wrk saw: the kind of login, its status, its time and its Retry-After."""

    kind: str
    status: int
    seconds: float
    retry_after: str | None


@dataclasses.dataclass(frozen=True)
class Load:
    """What one wrk run saw, and what the sampler measured meanwhile."""

    connections: int
    duration: float
    answers: tuple[Answer, ...]
    socket_errors: dict[str, int]
    #: Each ``GET /health``: its time in seconds and whether it was answered 200.
    health: tuple[tuple[float, bool], ...]
    rss_peak: dict[int, int]
    #: The CPU time the workers used during the load, in seconds.
    cpu_seconds: float


class Sampler:
    """Times ``GET /health`` every ``interval`` s, and reads the workers' RSS, in two threads.

    A probe that fails or times out counts with the time it took, as not answered.
    """

    def __init__(self, url: str, pids: Sequence[int], interval: float = 0.05) -> None:
        self._url = url
        self._pids = list(pids)
        self._interval = interval
        self._stop = threading.Event()
        self.health: list[tuple[float, bool]] = []
        self.rss_peak: dict[int, int] = dict.fromkeys(self._pids, 0)
        self._threads = [
            threading.Thread(target=self._probe, daemon=True),
            threading.Thread(target=self._memory, daemon=True),
        ]

    def __enter__(self) -> Sampler:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _probe(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                answered = get(self._url, "/health", timeout=10)[0] == 200
            except OSError:
                answered = False
            self.health.append((time.perf_counter() - started, answered))
            self._stop.wait(max(0.0, self._interval - (time.perf_counter() - started)))

    def _memory(self) -> None:
        while not self._stop.is_set():
            for pid in self._pids:
                self.rss_peak[pid] = max(self.rss_peak[pid], rss(pid))
            self._stop.wait(0.1)


def rss(pid: int) -> int:
    """The resident memory of process `pid`, in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def drive(
    server: Server,
    connections: int,
    seconds: float,
    *,
    users: int,
    planted: int,
    seed: int = 1,
    timing: bool = False,
) -> Load:
    """Run wrk against ``POST /login`` for `seconds` at `connections` while sampling the server.

    With `timing`, the logins are half wrong passwords and half unknown users.
    """
    wrk = wrk_path()
    if wrk is None:
        raise RuntimeError("wrk is not installed (Debian: apt-get install wrk)")
    threads = min(connections, usable_cpus())
    command = [
        wrk,
        "-t",
        str(threads),
        "-c",
        str(connections),
        "-d",
        f"{seconds:g}s",
        # A slow answer is timed, not dropped: the timeout is longer than the run.
        "--timeout",
        f"{seconds + 10:g}s",
        "-s",
        str(LUA_SCRIPT),
        server.url,
        "--",
        str(users),
        str(max(1, planted)),
        str(seed),
        "timing" if timing else "mix",
    ]
    cpu = server.cpu_seconds()
    with Sampler(server.url, server.workers()) as sampler:
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    cpu = server.cpu_seconds() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr[-2000:]}")
    answers: list[Answer] = []
    errors: dict[str, int] = {}
    duration = seconds
    for line in done.stdout.splitlines():
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "R" and len(fields) == 5:
            took = int(fields[3])
            answers.append(
                Answer(
                    fields[1],
                    int(fields[2]),
                    took / 1e6 if took >= 0 else float("nan"),
                    None if fields[4] == "-" else fields[4],
                )
            )
        elif fields[0] == "E":
            names = ("connect", "read", "write", "timeout")
            errors = dict(zip(names, map(int, fields[1:5]), strict=True))
        elif fields[0] == "S":
            duration = int(fields[1]) / 1e6
    return Load(
        connections=connections,
        duration=duration,
        answers=tuple(answers),
        socket_errors=errors,
        health=tuple(sampler.health),
        rss_peak=dict(sampler.rss_peak),
        cpu_seconds=cpu,
    )
