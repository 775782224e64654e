"""Fill kernels made ready before a hasher's call is admitted, so that a compile never holds a slot.

Every stored hash names the shape of the fill kernel it runs (hash type, lane count, block hash;
:func:`twocats.kdf.fill.warmup.kernels_for`).  A kernel that no artefact or cache holds yet compiles
for seconds, and a call that did so inside an admission slot would keep every other login waiting.
:meth:`KernelShapes.prepare` therefore makes the kernel ready first, outside admission:

* A kernel already loaded in this process, or whose checked artefact loads now, is ready at once.
* The shapes of the hasher's own parameters, of ``previous`` and of the built-in profiles (the
  shapes its users' hashes legitimately have) are loaded in the calling thread: compiled there if
  no cache holds them, as the first hash of a fresh server always did.
* Any other shape (a planted hash, or a rare legitimate one) is compiled by an isolated Python
  process (:mod:`twocats._child`), at most one at a time per process and within
  :data:`COMPILE_SECONDS`.  The child builds the kernel's ahead-of-time artefact into a private
  folder this process made, which this process then loads with the artefacts' checks
  (:func:`twocats.simd.aot.adopt`), or, where no artefact can be built, leaves numba's build in
  the cache, which this process loads without compiling anything (a cache that the child could
  not write refuses the shape).  A caller that would wait longer than its admission ``timeout``
  (:data:`COMPILE_SECONDS` without one) for another caller's compile gets
  :class:`~twocats.exceptions.HasherBusyError`, and a shape whose compile failed or ran out of
  time is refused, for the rest of the process, with :class:`~twocats.exceptions.HashLimitError`
  (which the framework adapters answer like a wrong password).

Each shape is prepared once per process; the ``reference`` backend and kernels run as Python
(``NUMBA_DISABLE_JIT``) need nothing.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from twocats.exceptions import HasherBusyError, HashLimitError
from twocats.params import Params
from twocats.simd import cache
from twocats.simd.registry import resolve_backend

if TYPE_CHECKING:
    from twocats.kdf.fill.args import FillKey

__all__ = ["COMPILE_SECONDS", "KernelShapes", "Shape", "compile_in_child", "shape_of"]

#: The longest a compiling process may run, in seconds, before the shape is refused.
COMPILE_SECONDS: Final = 120.0

#: A kernel shape: hash code, lane count and block hash (0 final/2014, 1 March 2014).
Shape = tuple[int, int, int]

# The shapes loaded in this process, by backend, and those whose compile failed.
_ready: set[tuple[str, Shape]] = set()
_failed: set[tuple[str, Shape]] = set()
# One compiling process at a time.
_compiling = threading.Lock()


def shape_of(params: Params) -> Shape:
    """Return the kernel shape ``params`` run."""
    return params.hash_code, params.lanes, 1 if params.variant == "2014-03" else 0


class KernelShapes:
    """The kernel shapes a hasher expects, and the preparation of any other (see the module)."""

    __slots__ = ("_backend", "_expected")

    def __init__(self, backend: str | None, expected: Iterable[Params]) -> None:
        self._backend = backend
        self._expected = frozenset(shape_of(params) for params in expected)

    def ready(self, params: Params) -> bool:
        """Whether a call with ``params`` may be admitted at once (nothing left to load)."""
        backend = resolve_backend(self._backend)
        return (
            backend == "reference" or cache.jit_disabled() or (backend, shape_of(params)) in _ready
        )

    def prepare(self, params: Params, wait: float | None) -> None:
        """Make the kernel of ``params`` ready, outside admission; ``wait`` bounds the queue.

        Raises :class:`~twocats.exceptions.HasherBusyError` after ``wait`` seconds (None:
        :data:`COMPILE_SECONDS`) behind another caller's compile, and
        :class:`~twocats.exceptions.HashLimitError` for a shape that could not be compiled.
        """
        if self.ready(params):
            return
        backend, shape = resolve_backend(self._backend), shape_of(params)
        key = (backend, shape)
        if shape in self._expected:
            _load(backend, shape)
            _ready.add(key)
            return
        waited = COMPILE_SECONDS if wait is None else wait
        if not _compiling.acquire(timeout=waited):
            raise HasherBusyError(
                f"the hasher is busy: waited {waited:g} s (timeout) for another stored hash's "
                "kernel to compile"
            )
        try:
            if key in _failed:
                raise _refusal(shape)
            if key in _ready:
                return
            if not _load_artefact(backend, shape) and not _compiled_elsewhere(backend, shape):
                _failed.add(key)
                raise _refusal(shape)
            _ready.add(key)
        finally:
            _compiling.release()


def _load_artefact(backend: str, shape: Shape) -> bool:
    """Whether a checked ahead-of-time kernel of ``shape`` loads now (cheap: no numba)."""
    from twocats.kdf.fill.aot import load_fill
    from twocats.kdf.fill.args import FillKey
    from twocats.simd import aot

    code, lanes, variant = shape
    if not aot.enabled():
        return False
    # Whatever an earlier look at the artefacts found (before a compile) is looked at again.
    key = FillKey(lanes, backend, code, variant)
    aot.forget(key)
    return load_fill(key) is not None


def _load(backend: str, shape: Shape) -> None:
    """Load the kernel of ``shape`` as the fill will, compiling it here if no cache holds it."""
    if _load_artefact(backend, shape):
        return
    from twocats.kdf.fill.args import FillKey
    from twocats.kdf.fill.warmup import Kernel
    from twocats.simd import aot

    code, lanes, variant = shape
    kernel = Kernel(FillKey(lanes, backend, code, variant))
    # numba's build loads (or compiles), and an artefact is built where one can be.
    kernel.compile()
    if not _load_artefact(backend, shape):
        # The build was tried: the fill does not try it again inside a slot.
        aot.claim_build(kernel.key)


def _compile_elsewhere(backend: str, shape: Shape, settings: dict[str, str]) -> bool:
    """Compile the kernel of ``shape`` in an isolated process; whether it succeeded.

    ``settings`` go to the child's environment.
    """
    from twocats import _child

    code, lanes, variant = shape
    program = (
        "from twocats.kdf.fill.args import FillKey; from twocats.kdf.fill.warmup import Kernel; "
        f"Kernel(FillKey({lanes}, {backend!r}, {code}, {variant})).compile()"
    )
    try:
        done = _child.run(
            program,
            settings=settings,
            timeout=COMPILE_SECONDS,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _compiled_elsewhere(backend: str, shape: Shape) -> bool:
    """Have an isolated process compile the kernel of ``shape``; load it here without compiling.

    The child writes the kernel's artefact into a private folder made here, which this process
    adopts with every check of the artefacts; without an artefact, numba's build is loaded from
    the cache the child wrote it to, and a build that is not there (a cache the child could not
    write) is not compiled here: returns whether the kernel is ready.
    """
    from twocats.kdf.fill.aot import FILL
    from twocats.kdf.fill.args import FillKey
    from twocats.simd import aot

    code, lanes, variant = shape
    key = FillKey(lanes, backend, code, variant)
    with tempfile.TemporaryDirectory(prefix="twocats-kernel-") as private:
        settings = {aot.AOT_DIR_ENV: private} if aot.enabled() else {}
        if not _compile_elsewhere(backend, shape, settings):
            return False
        if aot.adopt(FILL, key, Path(private)):
            return True
    return _load_cached(key)


def _load_cached(key: FillKey) -> bool:
    """Load numba's checked build of ``key`` from the cache, compiling nothing; whether it did."""
    from twocats.kdf.fill.kernels import checked_fill
    from twocats.simd import _jit, aot

    try:
        with _jit.cached_only():
            checked_fill(key)
    except _jit.NotCachedError:
        return False
    # Its artefact could not be built by the child: the fill does not try inside a slot either.
    aot.claim_build(key)
    return True


def loads_without_compiling(backend: str | None, params: Params) -> bool:
    """Whether the kernel ``params`` use is ready without numba's compiler.

    So it is for the reference backend, under ``NUMBA_DISABLE_JIT``, and where a checked
    ahead-of-time artefact of it loads; otherwise numba loads it from its cache or compiles it.
    """
    chosen = resolve_backend(backend)
    if chosen == "reference" or cache.jit_disabled():
        return True
    return _load_artefact(chosen, shape_of(params))


def compile_in_child(backend: str | None, params: Params) -> bool:
    """Compile the kernel ``params`` use into the disk cache in a fresh process; whether it did.

    A process that goes on to hold large work areas (``twocats tune``) then only loads the kernel,
    without the compiler's memory in its own.
    """
    chosen = resolve_backend(backend)
    if chosen == "reference" or cache.jit_disabled():
        return True
    return _compile_elsewhere(chosen, shape_of(params), {})


def _refusal(shape: Shape) -> HashLimitError:
    from twocats.hashes import HASHES

    code, lanes, variant = shape
    march = " (2014-03)" if variant else ""
    return HashLimitError(
        f"the stored hash is refused: its fill kernel ({HASHES[code].name} x{lanes}{march}) "
        f"could not be compiled within {COMPILE_SECONDS:g} s"
    )
