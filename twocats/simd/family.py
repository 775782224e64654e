"""Kernel families: the one life of every compiled kernel, from its key to a checked callable.

A family is the set of kernels one face calls: the password hash's fill
(:mod:`twocats.kdf.fill.family`), the lane primitives' scheduler (:mod:`twocats.lanes.primitives`)
and each lane mode (:mod:`twocats.lanes.modes`).  It declares what only it knows (:class:`Family`:
its key, numba source, signature, known-answer check and the keys a parameter set needs);
:func:`ready` does the rest, the same way for every family (docs/contributing.md, "The life of a
kernel", draws it).

Every kernel is a callable of its family's signature (arrays and integers), whether an artefact
(:class:`twocats.simd.aot.Entry`) or numba's build, and has passed its known-answer check in
this process: the plain-Python reference decides.  Warm-up (:func:`warm`), the isolated compile
and a wheel's artefacts (:func:`wheel`) run the one worker, :func:`serve`, in isolated children
(:mod:`twocats._child`).  Importing this module imports neither numba nor numpy.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

from twocats._child import run as run_child
from twocats._child import start as start_child
from twocats.exceptions import BackendError
from twocats.simd import aot, cache
from twocats.simd.isa import X86_64_LEVELS

__all__ = [
    "COMPILE_SECONDS",
    "JOB_SECONDS",
    "Family",
    "Job",
    "KernelKey",
    "Key",
    "family_of",
    "is_ready",
    "ready",
    "ready_now",
    "serve",
    "share",
    "warm",
    "wheel",
]

#: The longest an isolated child may compile one kernel, in seconds.
COMPILE_SECONDS: Final = 120.0

#: The longest a warm-up or wheel worker may take over one job before the run gives up, in
#: seconds (an artefact's build at an emulated level included).
JOB_SECONDS: Final = 3600.0


class Key(Hashable, Protocol):
    """One kernel of a family on one backend."""

    @property
    def name(self) -> str:
        """Its name, unique across families, e.g. ``fill_final_l8_blake2s__simd``."""
        ...

    @property
    def backend(self) -> str:
        """ "scalar" or "simd"."""
        ...

    @property
    def label(self) -> str:
        """A short name for progress displays, e.g. ``fill blake2s x8``."""
        ...


K = TypeVar("K", bound=Key)


@dataclass(frozen=True)
class Family(Generic[K]):
    """What a family of kernels declares; :func:`ready` does the rest.

    ``kernel`` returns numba's build of a key (it imports numba); ``signature`` its arguments in
    numba's spelling (``"uint32[:], uint64[:, :], int64"``), which the artefact's C entry takes;
    ``check(kernel, key)`` tells whether a build gives the plain-Python reference's answers on
    known input; ``keys(backend, params)`` names the keys a parameter set needs, or every key
    for ``params=None``; ``sources`` are the files beyond the kernel's own source that its
    machine code depends on (the family's module, hash constants).  Every callable is a module's
    function or method, so that a family pickles for a worker process.
    """

    name: str
    kernel: Callable[[K], Any]
    signature: Callable[[K], str]
    check: Callable[[Callable[..., None], K], bool]
    keys: Callable[[str, Any], list[K]]
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class KernelKey:
    """A kernel of a module by its name, on one backend (the key of :func:`family_of`)."""

    kernel: str
    backend: str

    @property
    def name(self) -> str:
        """The kernel's name and backend, e.g. ``keccak_sponge_x4__simd``."""
        return f"{self.kernel}__{self.backend}"

    @property
    def label(self) -> str:
        """E.g. ``keccak sponge x4``."""
        return self.kernel.replace("_", " ")


@dataclass(frozen=True)
class _Module:
    """The ``variants`` kernels of one module, by name, with their signatures."""

    module: str
    signatures: tuple[tuple[str, str], ...]

    def kernel(self, key: KernelKey) -> Any:
        return getattr(importlib.import_module(self.module), key.kernel).get(key.backend)

    def signature(self, key: KernelKey) -> str:
        return dict(self.signatures)[key.kernel]

    def keys(self, backend: str, params: Any) -> list[KernelKey]:
        # No parameter set of the password hash needs a lane kernel.
        return (
            [] if params is not None else [KernelKey(name, backend) for name, _ in self.signatures]
        )


def family_of(
    name: str,
    module: str,
    signatures: Mapping[str, str],
    check: Callable[[Callable[..., None], KernelKey], bool],
    *sources: str,
) -> Family[KernelKey]:
    """The family of the kernels ``signatures`` names in ``module``, keyed by :class:`KernelKey`."""
    kernels = _Module(module, tuple(signatures.items()))
    return Family(name, kernels.kernel, kernels.signature, check, kernels.keys, sources)


class _Numba:
    """numba's build of a kernel, called as an artefact is: the arrays as numpy arrays (no copy),
    the integers as Python ints, so that every call runs the build its check ran."""

    def __init__(self, build: Any, signature: str) -> None:
        self.build = build
        self._arrays = [argument.ndim > 0 for argument in aot.arguments(signature)]
        self._plain = cache.jit_disabled()

    def __call__(self, *args: Any) -> None:
        import numpy as np

        values = [
            np.asarray(value) if array else int(value)
            for value, array in zip(args, self._arrays, strict=True)
        ]
        if not self._plain:
            self.build(*values)
            return
        # The kernel runs as Python: its fixed-width sums wrap on purpose.
        with np.errstate(over="ignore"):
            self.build(*values)


# The kernels made ready in this process, by key name; the keys whose artefact this process
# tried to build; the keys an isolated child could not make ready.
_ready: dict[str, Callable[..., None]] = {}
_built: set[str] = set()
_failed: set[str] = set()
_lock = threading.RLock()
# Only one isolated compile runs at a time.
_compiling = threading.Lock()


def ready(
    family: Family[K], key: K, *, elsewhere: bool = False, wait: float = COMPILE_SECONDS
) -> Callable[..., None]:
    """Return ``key``'s kernel, checked against the reference, loading or building it once.

    The checked artefact where one loads; otherwise numba's build (loaded from numba's cache or
    compiled) once it passes the family's check, compiled afresh once with everything it calls
    when it fails (one warning), :class:`~twocats.exceptions.BackendError` when it still fails;
    its artefact is then built for the next process, once, where one can be.  With
    ``elsewhere`` a kernel no artefact holds is compiled by an isolated child (one at a time,
    within :data:`COMPILE_SECONDS`): :class:`TimeoutError` after ``wait`` seconds behind another
    child, and :class:`~twocats.exceptions.BackendError`, then at once, for a key it could not
    make ready.
    """
    kernel = _ready.get(key.name)
    if kernel is not None:
        return kernel
    if elsewhere:
        return _elsewhere(family, key, wait)
    with _lock:
        kernel = _ready.get(key.name)
        if kernel is None:
            kernel = _ready[key.name] = aot.load(family, key) or _made(family, key)
    return kernel


def ready_now(family: Family[K], key: K) -> bool:
    """Whether ``key``'s kernel is ready without numba: made ready before, or its checked
    artefact loads now (it is then kept)."""
    if key.name in _ready:
        return True
    with _lock:
        kernel = _ready.get(key.name) or aot.load(family, key)
        if kernel is not None:
            _ready[key.name] = kernel
    return kernel is not None


def is_ready(key: Key) -> bool:
    """Whether ``key``'s kernel was made ready in this process (a lookup: it loads nothing)."""
    return key.name in _ready


def _numba(family: Family[K], key: K) -> _Numba:
    """numba's build of ``key`` once it passes the family's check (see :func:`ready`)."""
    kernel = _Numba(family.kernel(key), family.signature(key))
    if cache.jit_disabled() or family.check(kernel, key):
        return kernel
    from twocats.simd import _jit

    cache.warn_once(
        f"twocats: the kernel {key.name} fails its known-answer check; it compiles afresh"
    )
    _jit.afresh(kernel.build)
    if not family.check(kernel, key):
        raise BackendError(f"the compiled kernel {key.name} fails its known-answer check")
    return kernel


def _made(family: Family[K], key: K) -> Callable[..., None]:
    """numba's checked build of ``key``, then its artefact where one can be built (once)."""
    kernel = _numba(family, key)
    if not aot.enabled() or key.name in _built:
        return kernel
    _built.add(key.name)
    try:
        built = aot.build(family, key, kernel.build)
    except (BackendError, OSError, subprocess.SubprocessError) as error:
        # A kernel without an artefact runs on numba's build: a failed build costs speed only.
        stderr = getattr(error, "stderr", None)
        detail = stderr.decode(errors="replace").strip() if isinstance(stderr, bytes) else ""
        aot.warn_once(f"could not build the compiled kernel {key.name} ({detail or error!s:.300})")
        return kernel
    return (aot.load(family, key) if built is not None else None) or kernel


def _elsewhere(family: Family[K], key: K, wait: float) -> Callable[..., None]:
    """Make ``key`` ready through an isolated child (see :func:`ready`)."""
    if not _compiling.acquire(timeout=wait):
        raise TimeoutError(f"waited {wait:g} s for another kernel to compile")
    try:
        if key.name in _failed:
            raise BackendError(f"the kernel {key.name} could not be compiled")
        kernel = _ready.get(key.name) or aot.load(family, key) or _compiled_by_child(family, key)
        if kernel is None:
            _failed.add(key.name)
            raise BackendError(f"the kernel {key.name} could not be compiled")
        _ready[key.name] = kernel
        return kernel
    finally:
        _compiling.release()


def _compiled_by_child(family: Family[K], key: K) -> Callable[..., None] | None:
    """Have an isolated child make ``key`` ready; load its kernel here without compiling.

    The child writes the artefact into a private folder made here, which this process adopts with
    every check of the artefacts; without an artefact, numba's build is loaded from the cache the
    child wrote it to, and a build that is not there (a cache the child could not write) is not
    compiled here.
    """
    with tempfile.TemporaryDirectory(prefix="twocats-kernel-") as private:
        settings = {aot.AOT_DIR_ENV: private} if aot.enabled() else {}
        try:
            done = run_child(
                _WORKER,
                settings=settings,
                timeout=COMPILE_SECONDS,
                input=_line(Job(family, key)),
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0 or "seconds" not in _answer(done.stdout):
            return None
        adopted = aot.adopt(family, key, Path(private))
        if adopted is not None:
            return adopted
    from twocats.simd import _jit

    try:
        with _jit.cached_only():
            kernel = _numba(family, key)
    except _jit.NotCachedError:
        return None
    # The child could not build its artefact: this process does not try either.
    _built.add(key.name)
    return kernel


@dataclass(frozen=True)
class Job:
    """One kernel to make ready ahead of use, in a worker process (it pickles).

    With ``level`` the worker builds a platform wheel's artefact for that x86-64 level into the
    folder ``out`` instead.
    """

    family: Family[Any]
    key: Any
    level: str | None = None
    out: str = ""

    @property
    def label(self) -> str:
        """The key's label, for progress displays."""
        return str(self.key.label)


def _done(job: Job) -> tuple[float, bool]:
    """Do ``job``; return its seconds and whether an artefact serves its kernel."""
    started = time.perf_counter()
    if job.level is None:
        artefact = isinstance(ready(job.family, job.key), aot.Entry)
    else:
        build = _numba(job.family, job.key).build
        if aot.build(job.family, job.key, build, job.level, Path(job.out)) is None:
            raise BackendError(
                "artefacts cannot be built here (an untested numba or an unnamed CPU)"
            )
        artefact = True
    return time.perf_counter() - started, artefact


# What each worker process runs: do the pickled jobs of standard input, one per line, and
# answer each with one line, its seconds or the error.
_WORKER = "from twocats.simd.family import serve; serve()"


def serve() -> None:
    """Do the jobs that arrive on standard input (the worker of :func:`warm` and :func:`ready`)."""
    for line in sys.stdin.buffer:
        job = pickle.loads(base64.b64decode(line))
        answer: dict[str, object]
        try:
            seconds, artefact = _done(job)
            answer = {"seconds": seconds, "artefact": artefact}
        except Exception as error:
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def _line(job: Job) -> bytes:
    return base64.b64encode(pickle.dumps(job)) + b"\n"


def _answer(line: bytes) -> dict[str, Any]:
    try:
        answer = json.loads(line) if line else {}
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def warm(
    jobs: Sequence[Job], processes: int, settings: Mapping[str, str] | None = None
) -> Iterator[tuple[Job, float, bool]]:
    """Do ``jobs`` on ``processes`` processes; yield each job with its seconds and whether an
    artefact serves its kernel, as it is done (``twocats warmup``).

    With one process, or one job, and no ``settings`` they run in this process, in order;
    otherwise each of ``processes`` isolated children (with ``settings`` in their environment)
    takes the next job as it finishes one; they write to the same kernel cache, whose writers of
    one kernel take turns.  Raises :class:`~twocats.exceptions.BackendError` when a job fails or
    no worker answers within :data:`JOB_SECONDS`.
    """
    if settings is None and (processes <= 1 or len(jobs) <= 1):
        for job in jobs:
            yield job, *_done(job)
        return
    import selectors

    pending = list(reversed(jobs))
    workers: dict[Any, tuple[subprocess.Popen[bytes], list[Job]]] = {}
    chooser = selectors.DefaultSelector()
    try:
        for _ in range(max(1, min(processes, len(jobs)))):
            worker = start_child(
                _WORKER, settings=settings, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            assert worker.stdout is not None
            workers[worker.stdout] = (worker, [])
            chooser.register(worker.stdout, selectors.EVENT_READ)
            _hand_out(worker, pending, workers[worker.stdout][1])
        while any(given for _worker, given in workers.values()):
            answered = chooser.select(timeout=JOB_SECONDS)
            if not answered:
                raise BackendError(f"no worker answered in {JOB_SECONDS:g} s")
            for found, _events in answered:
                worker, given = workers[found.fileobj]
                job = given.pop()
                assert worker.stdout is not None
                answer = _answer(worker.stdout.readline())
                _hand_out(worker, pending, given)
                if not given:
                    chooser.unregister(found.fileobj)
                seconds = answer.get("seconds")
                if not isinstance(seconds, (int, float)):
                    detail = answer.get("error") or "the worker process ended"
                    raise BackendError(f"compiling {job.label} failed: {detail}")
                yield job, float(seconds), bool(answer.get("artefact"))
    finally:
        chooser.close()
        for worker, _given in workers.values():
            _stop(worker)


def _hand_out(worker: subprocess.Popen[bytes], pending: list[Job], given: list[Job]) -> None:
    """Give ``worker`` the next pending job, or tell it that none is left."""
    assert worker.stdin is not None
    if not pending:
        worker.stdin.close()
        return
    job = pending.pop()
    given.append(job)
    worker.stdin.write(_line(job))
    worker.stdin.flush()


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


def wheel(
    jobs: Sequence[Job], out: Path, levels: Sequence[str] | None = None
) -> Iterator[tuple[str, str]]:
    """Build a platform wheel's artefacts of ``jobs`` into ``out``; yield each x86-64 level of
    :data:`~twocats.simd.isa.X86_64_LEVELS` (or of ``levels``) with what became of it.

    Each level this CPU runs is built by an isolated child whose numba targets that level, on an
    empty kernel cache, and every artefact is checked against numba's build of its level; a level
    this CPU does not run is skipped.  Raises :class:`~twocats.exceptions.BackendError` when a
    build fails.
    """
    runs = set(aot.host_levels())
    for level, _flags in X86_64_LEVELS:
        if levels is not None and level not in levels:
            continue
        if level not in runs:
            yield level, "skipped, this CPU does not run it"
            continue
        with tempfile.TemporaryDirectory(prefix="twocats-wheel-") as scratch:
            settings = {"NUMBA_CPU_NAME": level, "NUMBA_CPU_FEATURES": ""}
            settings |= {cache.CACHE_ENV: scratch, "NUMBA_CACHE_DIR": scratch, cache.AOT_ENV: "1"}
            leveled = [Job(job.family, job.key, level, str(out.resolve())) for job in jobs]
            for _done_job in warm(leveled, 1, settings):
                pass
        yield level, "built"


def share() -> list[str]:
    """Make the kernel cache (and a moved artefacts' folder) readable by every user, as
    :func:`twocats.simd.cache.share` does; return what was left alone.

    Raises :class:`~twocats.simd.cache.RefusedError` when a cache root that is a link or someone
    else's is refused whole.
    """
    roots = [cache.cache_root()]
    if not aot.aot_dir().is_relative_to(cache.cache_root()):
        roots.append(aot.aot_dir())
    refused: list[str] = []
    for root in roots:
        refused += cache.share(root).refused
    return refused
