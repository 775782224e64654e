"""Compile kernels ahead of their first use, into the disk cache (``twocats warmup``).

Usage::

    from twocats.simd.warmup import compile_kernels

    for kernel, seconds in compile_kernels(jobs_to_compile, jobs=2):
        ...                                          # every job, on two processes

A kernel compiled here is written to ``$TWOCATS_CACHE_DIR`` (see :mod:`twocats.simd._jit`), so
later processes load it instead of compiling it.  :func:`compile_kernels` runs any :class:`Job`:
the fill's jobs are in :mod:`twocats.kdf.fill.warmup`, the lane hashes' in
:mod:`twocats.lanes.warmup`.  Several jobs compile in isolated child processes
(:mod:`twocats._child`), each sent its jobs pickled on standard input.  Importing this module
imports no numba; compiling does.
"""

from __future__ import annotations

import base64
import contextlib
import json
import pickle
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from twocats._machine import usable_cpus
from twocats.exceptions import BackendError

if TYPE_CHECKING:
    import subprocess

__all__ = ["COMPILED_BACKENDS", "Job", "check_backend", "compile_kernels", "default_jobs", "serve"]

#: The backends that have compiled kernels.
COMPILED_BACKENDS = ("scalar", "simd")


class Job(Protocol):
    """Something to compile ahead of use, in a worker process (it must pickle)."""

    @property
    def label(self) -> str:
        """A short name for progress displays."""
        ...

    def compile(self) -> None:
        """Compile the kernel, or load it from the disk cache."""
        ...


AnyJob = TypeVar("AnyJob", bound=Job)


def check_backend(backend: str) -> None:
    """Raise :class:`~twocats.exceptions.BackendError` unless ``backend`` compiles kernels."""
    if backend not in COMPILED_BACKENDS:
        allowed = ", ".join(COMPILED_BACKENDS)
        raise BackendError(f"backend must be one of {allowed} to compile kernels, not {backend!r}")


def default_jobs() -> int:
    """The processes :func:`compile_kernels` uses by default: the usable CPUs."""
    return usable_cpus()


def _timed_compile(kernel: Job) -> float:
    """Compile ``kernel``; return the seconds it took (runs in a worker process)."""
    started = time.perf_counter()
    kernel.compile()
    return time.perf_counter() - started


def compile_kernels(kernels: Sequence[AnyJob], jobs: int) -> Iterator[tuple[AnyJob, float]]:
    """Compile ``kernels`` on ``jobs`` processes; yield each kernel with its seconds when done.

    With one job, or one kernel, they compile in this process, in order.  Otherwise each of
    ``jobs`` isolated child processes (:mod:`twocats._child`) takes the next kernel as it
    finishes one; they write to the same kernel cache, whose writers of one kernel take turns.
    Raises :class:`~twocats.exceptions.BackendError` when a kernel fails to compile.
    """
    if jobs <= 1 or len(kernels) <= 1:
        for kernel in kernels:
            yield kernel, _timed_compile(kernel)
        return
    import selectors
    import subprocess

    from twocats._child import start

    pending = list(reversed(kernels))
    workers: dict[Any, tuple[subprocess.Popen[bytes], list[AnyJob]]] = {}
    chooser = selectors.DefaultSelector()
    try:
        for _ in range(min(jobs, len(kernels))):
            worker = start(_WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert worker.stdout is not None
            workers[worker.stdout] = (worker, [])
            chooser.register(worker.stdout, selectors.EVENT_READ)
            _hand_out(worker, pending, workers[worker.stdout][1])
        while any(given for _worker, given in workers.values()):
            for ready, _events in chooser.select():
                worker, given = workers[ready.fileobj]
                kernel = given.pop()
                seconds = _answer(worker, kernel)
                _hand_out(worker, pending, given)
                if not given:
                    chooser.unregister(ready.fileobj)
                yield kernel, seconds
    finally:
        chooser.close()
        for worker, _given in workers.values():
            _stop(worker)


# What each worker process runs: compile the pickled jobs of standard input, one per line, and
# answer each with one line, its seconds or the error.
_WORKER = "from twocats.simd.warmup import serve; serve()"


def serve() -> None:
    """Compile the jobs that arrive on standard input (the worker of :func:`compile_kernels`)."""
    for line in sys.stdin.buffer:
        kernel = pickle.loads(base64.b64decode(line))
        answer: dict[str, object]
        try:
            answer = {"seconds": _timed_compile(kernel)}
        except Exception as error:
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def _hand_out(worker: subprocess.Popen[bytes], pending: list[AnyJob], given: list[AnyJob]) -> None:
    """Give ``worker`` the next pending kernel, or tell it that none is left."""
    assert worker.stdin is not None
    if not pending:
        worker.stdin.close()
        return
    kernel = pending.pop()
    given.append(kernel)
    worker.stdin.write(base64.b64encode(pickle.dumps(kernel)) + b"\n")
    worker.stdin.flush()


def _answer(worker: subprocess.Popen[bytes], kernel: Job) -> float:
    """Read a worker's answer about ``kernel``: its seconds, or raise its error."""
    assert worker.stdout is not None
    line = worker.stdout.readline()
    try:
        answer = json.loads(line) if line else {}
    except ValueError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    seconds = answer.get("seconds")
    if isinstance(seconds, (int, float)):
        return float(seconds)
    detail = answer.get("error") or "the worker process ended"
    raise BackendError(f"compiling {kernel.label} failed: {detail}")


def _stop(worker: subprocess.Popen[bytes]) -> None:
    """Let a worker go: it ends when its standard input closes, or is killed."""
    for pipe in (worker.stdin, worker.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    try:
        worker.wait(timeout=10)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
