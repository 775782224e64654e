"""The one place that configures numba for twocats kernels.

Importing this module imports numba, so only kernel modules import it, and only lazily.  On import
it sets the LLVM options that let the big unrolled lane loops vectorize (numba-simd.md §3.3).
Every kernel of the project is declared through one of two decorators:

``jit`` (one compiled function, fixed vectorizer mode)::

    from twocats.simd._jit import jit

    @jit                    # mode="scalar": loop and SLP vectorizers off
    def helper(a, b): ...

    @jit(mode="simd")       # loop vectorizer on; mode="simd+slp" also turns SLP on
    def kernel(x): ...

``variants`` (the same Python source compiled twice, as a "simd" and a "scalar" kernel)::

    from twocats.simd._jit import variants

    @variants               # or @variants(slp=True) to run the SLP vectorizer in the simd build
    def fill(mem, ...): ...

    @variants(vector_width=16)      # force the loop vectorizer's factor in the simd build
    def lanes(H, M, n): ...

    @variants(vector_width=16, interleave=2)    # two vectors in flight per iteration
    def lanes2(H, M, n): ...

    @variants(vectorize=False)      # own loops scalar in both builds; lanes() still simd in simd
    def driver(H, M, n): lanes(H, M, n)

    fill.get("simd")(mem, ...)      # or fill.simd / fill.scalar; get() takes "simd" or "scalar"

``PerBackend`` (a global of a ``variants`` kernel that differs between the two builds)::

    STEP = PerBackend(simd=16, scalar=1)                  # a constant numba freezes
    decode = PerBackend(simd=transposed, scalar=plain)    # code only one build may hold

Rules and facts that matter to kernel authors:

* Both decorators return objects that compile lazily on the first call and cache the machine code
  on disk under ``$TWOCATS_CACHE_DIR`` (default ``~/.cache/twocats``), in one directory per numba
  version, target ISA (CPU name and feature string) and vectorizer mode (with its forced width).
  numba's own cache key ignores the vectorizer switches, which is why the modes live in separate
  directories and under separate function names (``fill__simd`` and ``fill__scalar``).
* Every index and data file of the cache is written private and its SHA-256 recorded beside it;
  it is unpickled only after its owner, mode and SHA-256 are checked (``_CheckedCacheFile``), and
  anything wrong with it is a miss that compiles afresh, with one warning per process.
* The cache is keyed on source *content*, not on paths or mtimes, so a fresh clone or reinstall of
  the same source reuses it.  The content covers the kernel's own file, this file, and the files
  of every project kernel it calls (found through its globals), so editing a callee invalidates
  its callers.
* The vectorizer mode is applied around the dispatcher's own compilation.  A callee compiled as its
  own function keeps its mode; once linked into a caller, LLVM optimises the caller's module again
  with the caller's mode.
* A ``variants`` kernel may call ``jit`` kernels and other ``variants`` kernels: a global name
  bound to a ``variants`` object resolves, inside the simd build, to the callee's simd build and
  inside the scalar build to its scalar build.  Each build is compiled against a copy of the
  module's globals taken on its first use, so kernels must only use module-level constants and
  functions.  A ``jit`` kernel can call ``jit`` kernels only (a ``variants`` object is not a numba
  function).
* A global bound to a ``PerBackend`` resolves to its ``simd`` value in the simd build and to its
  ``scalar`` value in the scalar build (a ``variants`` value to that build of it), so that vector
  intrinsics stay out of the scalar build and constants such as a vector's lane count differ.
* Every kernel is ``nopython`` and ``nogil`` and uses numba's "numpy" error model (no Python
  exceptions for division by zero); further numba options are passed through.  One option is
  added: ``noalias=True`` promises that no two array arguments share memory, so that LLVM emits no
  runtime overlap checks (for a lane loop over 26 rows they cost about as much as a short call).
* A build that fails its family's known-answer check (:func:`twocats.simd.family.ready`) is
  compiled afresh with every kernel it calls, none loaded from the cache again (:func:`afresh`),
  so the plain-Python reference decides.
* With ``NUMBA_DISABLE_JIT=1`` both decorators hand back plain Python functions (coverage runs).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import io
import json
import os
import pickle
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar, overload

import llvmlite.binding as llvm
import numba
from numba.core import caching
from numba.core import config as _numba_config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher
from numba.core.registry import CPUDispatcher, cpu_target
from numba.core.runtime.nrt import rtsys

from twocats.exceptions import BackendError
from twocats.simd import cache
from twocats.simd.asm import library_asm
from twocats.simd.cache import cache_root

__all__ = [
    "BUILDS",
    "LIGHT_LOAD_NUMBA",
    "LLVM_OPTIONS",
    "Build",
    "PerBackend",
    "Variants",
    "cache_root",
    "jit",
    "kernel_asm",
    "variants",
]

F = TypeVar("F", bound=Callable[..., Any])

# numba's configuration module, typed loosely: its attributes are created from the environment.
config: Any = _numba_config

#: LLVM options set once per process before any project kernel compiles (numba-simd.md §3.3).
#: The first lets the loop vectorizer emit the many runtime alias checks that a lane loop touching
#: 24 rows needs; the second lets constant 8-iteration loops vectorize.
LLVM_OPTIONS = (
    "-vectorize-memory-check-threshold=100000",
    "-vectorizer-min-trip-count=4",
)
for _option in LLVM_OPTIONS:
    llvm.set_option("", _option)


@dataclass(frozen=True)
class Build:
    """A vectorizer configuration under which a kernel is compiled."""

    name: str
    loop_vectorize: bool
    slp_vectorize: bool
    #: Vectorization factor forced on the loop vectorizer (0: LLVM's cost model decides).
    vector_width: int = 0
    #: Vectors forced in flight per iteration of a vectorized loop (0: LLVM's cost model).
    interleave: int = 0

    @property
    def tag(self) -> str:
        """The cache directory of this mode (numba's cache key ignores every field here)."""
        width = f"-w{self.vector_width}" if self.vector_width else ""
        return f"{self.name}{width}{f'-i{self.interleave}' if self.interleave else ''}"

    def with_width(self, width: int) -> Build:
        """Return this mode with the loop vectorizer forced to ``width`` lanes (0: cost model)."""
        if width < 0:
            raise ValueError(f"vector_width must be 0 or positive, not {width}")
        return replace(self, vector_width=width) if self.loop_vectorize else self

    def with_interleave(self, count: int) -> Build:
        """Return this mode with ``count`` vectors in flight per loop iteration (0: cost model).

        A loop of a vector's worth of iterations too few for them all runs vectorized still (a
        vector epilogue of the forced width), not one iteration at a time.
        """
        if count < 0:
            raise ValueError(f"interleave must be 0 or positive, not {count}")
        return replace(self, interleave=count) if self.loop_vectorize else self


#: The vectorizer modes; the key is also the cache directory and the function-name suffix.
BUILDS = {
    "scalar": Build("scalar", loop_vectorize=False, slp_vectorize=False),
    "simd": Build("simd", loop_vectorize=True, slp_vectorize=False),
    "simd+slp": Build("simd+slp", loop_vectorize=True, slp_vectorize=True),
}

_DEFAULT_OPTIONS: dict[str, Any] = {"nopython": True, "nogil": True, "error_model": "numpy"}


@functools.lru_cache(maxsize=1)
def _isa_tag() -> str:
    """Name the target ISA of numba's codegen: the CPU name plus a digest of its features."""
    _triple, cpu_name, features = cpu_target.target_context.codegen().magic_tuple()
    digest = hashlib.sha256(features.encode()).hexdigest()[:12]
    return f"{cpu_name or 'host'}-{digest}"


@functools.cache
def _file_digest(path: str, mtime_ns: int, size: int) -> bytes:
    """Hash one source file; the stat fields only key the memo so an edited file is hashed again."""
    del mtime_ns, size
    return hashlib.sha256(Path(path).read_bytes()).digest()


def _digest_of(path: str) -> bytes:
    stat = os.stat(path)
    return _file_digest(path, stat.st_mtime_ns, stat.st_size)


def _code_names(code: types.CodeType) -> Iterator[str]:
    """Yield every global or attribute name used by a code object and its nested code objects."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def _python_function(value: Any) -> types.FunctionType | None:
    """Return the Python function behind a project kernel object, or None for anything else."""
    if isinstance(value, Variants):
        return value.py_func
    if isinstance(value, Dispatcher):
        func = value.py_func
        return func if isinstance(func, types.FunctionType) else None
    return None


def _python_functions(value: Any) -> list[types.FunctionType]:
    """The Python functions behind a kernel global: a kernel's, or both of a ``PerBackend``'s."""
    values = (value.simd, value.scalar) if isinstance(value, PerBackend) else (value,)
    return [func for func in map(_python_function, values) if func is not None]


def _source_files(func: types.FunctionType) -> set[str]:
    """Collect the source files a kernel's machine code depends on (its own and its callees')."""
    files: set[str] = set()
    pending = [func]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        files.add(inspect.getfile(current))
        names = set(_code_names(current.__code__))
        for name in names:
            value = current.__globals__.get(name)
            callees = _python_functions(value)
            if callees:
                pending.extend(callees)
            elif isinstance(value, types.ModuleType) and value.__name__.startswith("twocats."):
                if getattr(value, "__file__", None):
                    files.add(str(value.__file__))
                for attribute in names:
                    nested = _python_function(getattr(value, attribute, None))
                    if nested is not None:
                        pending.append(nested)
    return files


def _source_stamp(func: types.FunctionType) -> str:
    """Digest the content of every source file the kernel depends on, plus this module."""
    hasher = hashlib.sha256()
    hasher.update(repr(LLVM_OPTIONS).encode())
    for path in sorted(_source_files(func) | {__file__}):
        hasher.update(Path(path).name.encode())
        hasher.update(_digest_of(path))
    return hasher.hexdigest()


class _Locator(caching._CacheLocator):
    """Place a kernel's cache files under the project cache root, whatever the checkout path."""

    def __init__(self, py_func: types.FunctionType, mode: Build) -> None:
        self._py_func = py_func
        self._cache_path = str(
            cache_root() / f"numba-{numba.__version__}" / _isa_tag() / mode.tag / py_func.__module__
        )

    def get_cache_path(self) -> str:
        return self._cache_path

    def ensure_cache_path(self) -> None:
        # The checked cache file makes the folders, through descriptors, when it writes.
        return

    def get_source_stamp(self) -> str:
        return _source_stamp(self._py_func)

    def get_disambiguator(self) -> str:
        return str(self._py_func.__code__.co_firstlineno)

    @classmethod
    def from_function(cls, py_func: Any, py_file: Any) -> _Locator:
        raise NotImplementedError("project kernels build their locator with a vectorizer mode")


class _CacheImpl(caching.CompileResultCacheImpl):
    """numba's compile-result serialisation with the project locator and module-qualified names."""

    def __init__(self, py_func: types.FunctionType, mode: Build) -> None:
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _Locator(py_func, mode)
        fullname = f"{py_func.__module__}.{py_func.__qualname__}"
        self._filename_base = self.get_filename_base(fullname, sys.abiflags)  # type: ignore[no-untyped-call]


# Upper bounds on what is read: one kernel's digest record, and one index or data file.
_DIGESTS_BYTES = 1 << 16
_ENTRY_BYTES = 64 << 20


class _DamagedEntryError(Exception):
    """A cache file that exists but does not have the SHA-256 twocats recorded for it."""


class _CheckedCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files of one kernel, each checked before it is unpickled.

    Every file written here is private (:meth:`twocats.simd.cache.Folder.write`) and its SHA-256
    is recorded in the kernel's digest record ``<name>.sha256`` beside it.  The kernel's folder
    is opened from the cache root down through descriptors (:func:`twocats.simd.cache.open_folder`);
    before a file is unpickled, it and the record must pass the cache's trust rule, and the bytes
    read through the checked descriptor must have the recorded SHA-256.  A file with no record is
    a miss (written by another release, or never finished); one whose bytes differ raises
    :class:`_DamagedEntryError`.  A lock file serialises the writers of one kernel, so that files
    and record agree (a cache this user does not own is read without it).
    """

    def __init__(self, cache_path: str, filename_base: str, source_stamp: str) -> None:
        super().__init__(cache_path, filename_base, source_stamp)  # type: ignore[no-untyped-call]
        self._path = Path(cache_path)
        self._digests_name = f"{filename_base}.sha256"
        self._lock_name = f"{filename_base}.lock"

    @contextlib.contextmanager
    def _folder(self, *, write: bool) -> Iterator[cache.Folder]:
        """The kernel's folder, made if ``write``, locked for writing or reading."""
        root = cache_root()
        folder = cache.open_folder(self._path, root=root, create=write, setting=cache.CACHE_ENV)
        with folder, folder.locked(self._lock_name, exclusive=write):
            yield folder

    def _digests(self, folder: cache.Folder) -> dict[str, str]:
        try:
            record = json.loads(folder.read(self._digests_name, _DIGESTS_BYTES))
        except FileNotFoundError:
            return {}
        except (cache.RefusedError, ValueError) as error:
            path = folder.path / self._digests_name
            raise _DamagedEntryError(f"{path} cannot be used ({error})") from None
        if not isinstance(record, dict) or not all(
            isinstance(value, str) for value in record.values()
        ):
            raise _DamagedEntryError(f"{folder.path / self._digests_name} is not a digest record")
        return record

    def _read(self, folder: cache.Folder, name: str) -> bytes | None:
        """Return the checked bytes of the file ``name``, or None when it is a plain miss."""
        if not folder.exists(name):
            return None
        recorded = self._digests(folder).get(name)
        if recorded is None:
            return None
        try:
            data = folder.read(name, _ENTRY_BYTES)
        except FileNotFoundError:
            return None
        except cache.RefusedError as error:
            raise _DamagedEntryError(str(error)) from None
        if hashlib.sha256(data).hexdigest() != recorded:
            raise _DamagedEntryError(f"{folder.path / name} does not have its recorded SHA-256")
        return data

    def _write(self, folder: cache.Folder, name: str, data: bytes) -> None:
        """Write the file ``name`` privately and record its SHA-256 (under the writers' lock)."""
        folder.write(name, data)
        try:
            record = self._digests(folder)
        except _DamagedEntryError:
            record = {}
        record[name] = hashlib.sha256(data).hexdigest()
        folder.write(self._digests_name, json.dumps(record, indent=1, sort_keys=True).encode())

    def flush(self) -> None:
        with self._folder(write=True) as folder:
            self._save_index(folder, {})

    def save(self, key: Any, data: Any) -> None:
        with self._folder(write=True) as folder:
            try:
                overloads = self._load_index(folder)
            except (_DamagedEntryError, pickle.UnpicklingError, EOFError, ValueError):
                overloads = {}
            data_name = overloads.get(key)
            if data_name is None:
                existing = set(overloads.values())
                number = 1
                while self._data_name(number) in existing:  # type: ignore[no-untyped-call]
                    number += 1
                data_name = overloads[key] = self._data_name(number)  # type: ignore[no-untyped-call]
                self._save_index(folder, overloads)
            self._write(folder, data_name, self._dump(data))  # type: ignore[no-untyped-call]

    def load(self, key: Any) -> Any:
        try:
            with self._folder(write=False) as folder:
                data_name = self._load_index(folder).get(key)
                data = None if data_name is None else self._read(folder, data_name)
        except FileNotFoundError:
            # No folder yet: nothing of this kernel was saved.
            return None
        return None if data is None else pickle.loads(data)

    def _load_index(self, folder: cache.Folder) -> dict[Any, Any]:  # type: ignore[override]
        data = self._read(folder, self._index_name)
        if data is None:
            return {}
        stream = io.BytesIO(data)
        if pickle.load(stream) != self._version:
            return {}
        stamp, overloads = pickle.loads(stream.read())
        return overloads if stamp == self._source_stamp else {}

    def _save_index(self, folder: cache.Folder, overloads: dict[Any, Any]) -> None:  # type: ignore[override]
        head = pickle.dumps(self._version, protocol=-1)
        body = self._dump((self._source_stamp, overloads))  # type: ignore[no-untyped-call]
        self._write(folder, self._index_name, head + body)


#: numba releases on which a cached kernel is loaded without refreshing the whole target context.
#: numba refreshes it before every cache load, importing every implementation registry (numpy's
#: linear algebra, and through it scipy when installed): a quarter to most of a second.  Machine
#: code loaded from the cache needs only numba's runtime to be initialised, which relies on how
#: numba's cache loads code, so other releases take numba's own path.
LIGHT_LOAD_NUMBA = frozenset({"0.68.1"})


class _KernelCache(caching.Cache):
    """A per-kernel disk cache whose entries are checked before they are loaded.

    Its source stamp is computed on first use, not at import time.  A refused folder, a damaged
    entry or an unwritable cache warns once per process (:func:`twocats.simd.cache.warn_once`)
    and the kernel compiles; a damaged entry is then written again.
    """

    _impl_class = _CacheImpl  # type: ignore[assignment]

    def __init__(self, py_func: types.FunctionType, mode: Build) -> None:
        self._name = repr(py_func)
        self._py_func = py_func
        self._impl = _CacheImpl(py_func, mode)
        self._cache_path = self._impl.locator.get_cache_path()
        self._index: _CheckedCacheFile | None = None
        #: Set when a build failed its known-answer check: entries are no longer loaded (the
        #: kernel compiles afresh, and the fresh build replaces them).
        self.afresh = False
        self.enable()  # type: ignore[no-untyped-call]

    @property
    def _cache_file(self) -> _CheckedCacheFile:  # type: ignore[override]
        if self._index is None:
            self._index = _CheckedCacheFile(
                cache_path=self._cache_path,
                filename_base=self._impl.filename_base,
                source_stamp=self._impl.locator.get_source_stamp(),
            )
        return self._index

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        overload = None if self.afresh else self._checked_load(sig, target_context)
        if overload is None and _cached_only.active:
            raise NotCachedError(f"{self._py_func.__qualname__} is not in the kernel cache")
        return overload

    def _checked_load(self, sig: Any, target_context: Any) -> Any:
        try:
            if numba.__version__ not in LIGHT_LOAD_NUMBA:
                return super().load_overload(sig, target_context)  # type: ignore[no-untyped-call]
            # A miss compiles, and numba's compiler refreshes the target context itself.
            rtsys.initialize(target_context)
            return self._load_overload(sig, target_context)  # type: ignore[no-untyped-call]
        except cache.RefusedError as error:
            # The cache's folders (or a lock) cannot be used: the kernel compiles in memory.
            cache.warn_once(f"twocats: kernel cache refused ({error}); kernels compile in memory")
        except Exception as error:  # Any failure to load is a miss that compiles.
            detail = str(error) if isinstance(error, _DamagedEntryError) else type(error).__name__
            cache.warn_once(
                f"twocats kernel cache entry of {self._py_func.__qualname__} refused "
                f"({detail:.300}); it compiles afresh"
            )
        return None

    def flush(self) -> None:
        """Forget every entry of this kernel (numba's ``recompile`` calls it)."""
        try:
            self._cache_file.flush()
        except (OSError, cache.RefusedError) as error:
            _not_written(error)

    def _save_overload(self, sig: Any, data: Any) -> None:
        try:
            super()._save_overload(sig, data)  # type: ignore[no-untyped-call]
        except (OSError, cache.RefusedError) as error:
            # An unwritable cache costs compile time on the next run, never correctness.
            _not_written(error)


def _not_written(error: OSError | cache.RefusedError) -> None:
    """Warn once that a kernel could not be written to the cache, naming the setting."""
    detail = error.strerror if isinstance(error, OSError) else str(error)
    cache.warn_once(
        f"twocats: the kernel cache {cache_root()} cannot be written ({detail}); kernels compile "
        f"again in every process (set {cache.CACHE_ENV} to a folder this user may write)"
    )


class NotCachedError(BackendError):
    """A kernel that :func:`cached_only` forbade to compile is not in the kernel cache."""


class _CachedOnly(threading.local):
    """Whether the calling thread may only load kernels from the cache (see cached_only)."""

    active = False


_cached_only = _CachedOnly()


@contextlib.contextmanager
def cached_only() -> Iterator[None]:
    """Forbid compiling in the calling thread for the block: a kernel that is not in the disk
    cache raises :class:`NotCachedError` instead (for a process that must never compile)."""
    saved = _cached_only.active
    _cached_only.active = True
    try:
        yield
    finally:
        _cached_only.active = saved


# The values last given to LLVM's loop vectorizer options (LLVM offers no way to read them back),
# with their defaults: 0 and 0 let the cost model choose, 1 forces no epilogue width.
_forced = {
    "-force-vector-width": 0,
    "-force-vector-interleave": 0,
    "-epilogue-vectorization-force-VF": 1,
}


def _force(values: dict[str, int]) -> None:
    for option, value in values.items():
        if _forced[option] != value:
            llvm.set_option("", f"{option}={value}")
            _forced[option] = value


def _forced_by(mode: Build) -> dict[str, int]:
    """The loop vectorizer options of ``mode``: with vectors interleaved, the iterations left
    over run in a vector epilogue of the forced width."""
    return {
        "-force-vector-width": mode.vector_width,
        "-force-vector-interleave": mode.interleave,
        "-epilogue-vectorization-force-VF": mode.vector_width if mode.interleave > 1 else 1,
    }


@contextlib.contextmanager
def _vectorizers(mode: Build) -> Iterator[None]:
    """Set numba's vectorizer switches for the compilations that run inside the block."""
    # numba re-reads its whole configuration from the environment when a NUMBA_ variable has
    # changed since it last looked, and it looks while compiling: a pending re-read there would
    # reset these switches, so it happens first.
    config.reload_config()
    saved = (config.LOOP_VECTORIZE, config.SLP_VECTORIZE, dict(_forced))
    config.LOOP_VECTORIZE = int(mode.loop_vectorize)
    config.SLP_VECTORIZE = int(mode.slp_vectorize)
    _force(_forced_by(mode))
    try:
        yield
    finally:
        config.LOOP_VECTORIZE, config.SLP_VECTORIZE = saved[:2]
        _force(saved[2])


class _ModeDispatcher(CPUDispatcher):
    """A CPU dispatcher that compiles under a fixed vectorizer mode, cached in the project cache."""

    twocats_mode: Build

    def compile(self, sig: Any) -> Any:
        # The compiler lock is re-entrant; holding it keeps other threads' compilations out of the
        # window in which the global vectorizer switches are changed.
        with global_compiler_lock, _vectorizers(self.twocats_mode):
            return super().compile(sig)


def _set_noalias(flags: Any) -> Any:
    flags.noalias = True
    return flags


def _reached(build: Any) -> list[Any]:
    """The project kernels ``build``'s code calls, directly or not, callees first, then it."""
    order: list[Any] = []
    seen: set[int] = set()

    def visit(disp: Any) -> None:
        if id(disp) in seen:
            return
        seen.add(id(disp))
        func = disp.py_func
        names = set(_code_names(func.__code__))
        for name in names:
            value = func.__globals__.get(name)
            if isinstance(value, types.ModuleType) and value.__name__.startswith("twocats."):
                values = [getattr(value, attribute, None) for attribute in names]
            else:
                values = [value]
            for callee in values:
                if isinstance(callee, _ModeDispatcher):
                    visit(callee)
        order.append(disp)

    visit(build)
    return order


def afresh(build: Any) -> None:
    """Compile ``build`` and every project kernel it calls again, ignoring the disk cache.

    For a build that failed its known-answer check: nothing of it is loaded from the cache again
    in this process (a damaged callee's entry would be linked in again), its entries there are
    replaced by the fresh builds where the cache may be written, and the callees compile before
    their callers.
    """
    with global_compiler_lock:
        kernels = _reached(build)
        for disp in kernels:
            disp._cache.afresh = True
        for disp in kernels:
            if disp.overloads:
                disp.recompile()


def _dispatcher(func: types.FunctionType, mode: Build, options: dict[str, Any]) -> Any:
    targetoptions = {**_DEFAULT_OPTIONS, **options}
    noalias = targetoptions.pop("noalias", False)
    disp: Any = _ModeDispatcher(py_func=func, locals={}, targetoptions=targetoptions)
    disp.twocats_mode = mode
    disp._cache = _KernelCache(func, mode)
    if noalias:
        # numba has this compiler flag but no decorator option for it; it marks every array
        # argument's data pointer noalias, so the vectorizer needs no runtime overlap checks.
        disp._compiler._customize_flags = _set_noalias
    return disp


def _check_mode(mode: str) -> Build:
    try:
        return BUILDS[mode]
    except KeyError:
        allowed = ", ".join(BUILDS)
        raise ValueError(f"mode must be one of {allowed}, not {mode!r}") from None


@overload
def jit(func: F, /) -> F: ...


@overload
def jit(*, mode: str = "scalar", vector_width: int = 0, **options: Any) -> Callable[[F], F]: ...


def jit(
    func: F | None = None, /, *, mode: str = "scalar", vector_width: int = 0, **options: Any
) -> Any:
    """Compile ``func`` lazily as one cached nopython kernel under vectorizer ``mode``.

    ``vector_width`` forces the loop vectorizer's factor in the vectorizing modes (0: LLVM's cost
    model, which on some CPUs picks a narrow width for big loop bodies).
    """
    chosen = _check_mode(mode).with_width(vector_width)

    def wrap(inner: F) -> F:
        if config.DISABLE_JIT:
            return inner
        if not isinstance(inner, types.FunctionType):
            raise TypeError("jit decorates plain Python functions")
        return _dispatcher(inner, chosen, options)  # type: ignore[no-any-return]

    return wrap if func is None else wrap(func)


def _renamed_copy(
    source: types.FunctionType, suffix: str, namespace: dict[str, Any]
) -> types.FunctionType:
    """A copy of ``source`` named with ``suffix`` (also in the disk cache) over ``namespace``."""
    name = f"{source.__name__}{suffix}"
    clone = types.FunctionType(
        source.__code__.replace(co_name=name),
        namespace,
        name,
        source.__defaults__,
        source.__closure__,
    )
    clone.__qualname__ = f"{source.__qualname__}{suffix}"
    clone.__module__ = source.__module__
    clone.__kwdefaults__ = source.__kwdefaults__
    return clone


class Variants:
    """One kernel source compiled as a ``simd`` and a ``scalar`` build, each built on first use."""

    def __init__(
        self,
        func: types.FunctionType,
        slp: bool,
        vector_width: int,
        interleave: int,
        vectorize: bool,
        options: dict[str, Any],
    ) -> None:
        self.py_func = func
        simd = BUILDS["simd+slp" if slp else "simd"].with_width(vector_width)
        simd = simd.with_interleave(interleave)
        if not vectorize:
            simd = BUILDS["scalar"]
        self._modes = {"simd": simd, "scalar": BUILDS["scalar"]}
        self._options = options
        self._builds: dict[str, Any] = {}
        self._specialised: dict[str, Variants] = {}
        self._settings = (slp, vector_width, interleave, vectorize)
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__
        self.__doc__ = func.__doc__

    def __repr__(self) -> str:
        return f"<twocats kernel variants {self.py_func.__module__}.{self.py_func.__qualname__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Inside a variants kernel a call to another variants kernel is resolved to one build at
        # compile time; from Python the build must be chosen explicitly.
        raise TypeError(
            f"{self.py_func.__qualname__} has a simd and a scalar build: call .simd, .scalar "
            "or .get(backend)"
        )

    @property
    def simd(self) -> Any:
        """The build with the vectorizers on."""
        return self.get("simd")

    @property
    def scalar(self) -> Any:
        """The build with every vectorizer off."""
        return self.get("scalar")

    def get(self, backend: str) -> Any:
        """Return the build for ``backend`` ("simd" or "scalar"), creating it if needed."""
        build = self._builds.get(backend)
        if build is not None:
            return build
        mode = self._modes.get(backend)
        if mode is None:
            raise ValueError(f"backend must be 'simd' or 'scalar', not {backend!r}")
        with global_compiler_lock:
            build = self._builds.get(backend)
            if build is None:
                build = self._build(backend, mode)
        return build

    def specialise(self, tag: str, **bindings: Any) -> Variants:
        """Return this kernel with some module globals rebound, as a kernel of its own.

        The copy is named ``<name>_<tag>`` (also in the disk cache) and sees ``bindings`` in
        place of the module's globals of those names, for example the callee or the constants of
        one hash type; each ``tag`` must always come with the same bindings.
        """
        found = self._specialised.get(tag)
        if found is not None:
            return found
        with global_compiler_lock:
            found = self._specialised.get(tag)
            if found is None:
                found = self._specialised[tag] = self._specialise(tag, bindings)
        return found

    def _specialise(self, tag: str, bindings: dict[str, Any]) -> Variants:
        source = self.py_func
        clone = _renamed_copy(source, f"_{tag}", {**source.__globals__, **bindings})
        return Variants(clone, *self._settings, self._options)

    def _build(self, backend: str, mode: Build) -> Any:
        source = self.py_func
        namespace = dict(source.__globals__)
        clone = _renamed_copy(source, f"__{backend}", namespace)
        # Without the JIT the build is the plain clone, still with its callees resolved.
        build = clone if config.DISABLE_JIT else _dispatcher(clone, mode, self._options)
        self._builds[backend] = build
        # Callees that are themselves variants resolve to the build of the same backend (linked
        # into this one, whose own check covers them).
        for key, value in source.__globals__.items():
            if isinstance(value, PerBackend):
                # A per-backend global takes this backend's value (a kernel's, as below).
                value = namespace[key] = value.get(backend)
            if value is self:
                namespace[key] = build
            elif isinstance(value, Variants):
                namespace[key] = value.get(backend)
        return build


@dataclass(frozen=True)
class PerBackend:
    """A global of a ``variants`` kernel with one value in the simd build and another in the
    scalar build: a kernel (vector intrinsics belong in the simd build only) or a constant."""

    simd: Any
    scalar: Any

    def get(self, backend: str) -> Any:
        """The value of ``backend`` ("simd" or "scalar")."""
        if backend not in ("simd", "scalar"):
            raise ValueError(f"backend must be 'simd' or 'scalar', not {backend!r}")
        return self.simd if backend == "simd" else self.scalar


@overload
def variants(func: types.FunctionType, /) -> Variants: ...


@overload
def variants(
    *,
    slp: bool = False,
    vector_width: int = 0,
    interleave: int = 0,
    vectorize: bool = True,
    **options: Any,
) -> Callable[[types.FunctionType], Variants]: ...


def variants(
    func: types.FunctionType | None = None,
    /,
    *,
    slp: bool = False,
    vector_width: int = 0,
    interleave: int = 0,
    vectorize: bool = True,
    **options: Any,
) -> Any:
    """Declare a kernel built twice: ``simd`` (with SLP if ``slp``) and ``scalar``.

    ``vector_width`` forces the loop vectorizer's factor in the simd build (0: LLVM's cost model),
    and ``interleave`` the vectors in flight per iteration (for loops bound by the latency of one
    vector's chain of operations; see :meth:`Build.with_interleave`).  ``vectorize=False``
    compiles the simd build's own loops with the vectorizers off too; its callees still resolve
    to their simd builds (for drivers whose loops vectorize badly).
    """

    def wrap(inner: types.FunctionType) -> Variants:
        if not isinstance(inner, types.FunctionType):
            raise TypeError("variants decorates plain Python functions")
        return Variants(inner, slp, vector_width, interleave, vectorize, options)

    return wrap if func is None else wrap(func)


def kernel_asm(kernel: Any, *args: Any) -> str:
    """Return the assembly of a project kernel for the types of ``args`` (nothing is run).

    ``kernel`` is a ``jit`` kernel or one build of a ``variants`` kernel; it is compiled or loaded
    from the disk cache for that signature.  numba refuses to print code loaded from its cache, but
    a cached entry keeps the optimised LLVM module for linking; that module is turned into
    assembly again by this process's target machine, the one that produced the cached code.
    """
    from numba import typeof

    signature = tuple(typeof(arg) for arg in args)  # type: ignore[no-untyped-call]
    kernel.compile(signature)
    return library_asm(kernel.overloads[signature].library)[0]
