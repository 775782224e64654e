"""Ahead-of-time kernels of any registered set: find, check and load them without numba or numpy.

Usage::

    from twocats.simd import aot

    kernel = aot.load(KERNELS, key)     # None: no usable artefact, use numba's build

A set of kernels registers as a :class:`KernelSet`: its name, the C symbol of its entry point, how
a loaded entry becomes a callable and how that callable checks itself against the set's reference
(the password hash's fill registers in :mod:`twocats.kdf.fill.aot`).  An artefact is built by
:mod:`twocats.simd.aotcompile` with that single entry point: a shared object (``.so``) where a C
compiler links one, loaded by the dynamic loader, and otherwise a relocatable object (``.o``) that
llvmlite's MCJIT loads from the checked bytes (this imports llvmlite, never numba).  Artefacts live
in ``<cache root>/aot`` with an index, ``index.json``, written atomically.  The index entry of a
kernel is keyed on the kernel's name, the numba and llvmlite versions and this machine's CPU (its
``/proc/cpuinfo`` identity and feature flags, see :func:`cpu_key`); it records the SHA-256 of the
artefact and of every source file the kernel was built from.

Before a kernel is used: the cache folders, the index and the file must pass the cache's one
trust rule (:func:`twocats.simd.cache.trust_problem`: owned by this user or root, writable by
neither group nor others), the package's prebuilt kernels included; the file read through the
opened descriptor must have the recorded SHA-256, and the same descriptor is what the dynamic
loader opens (``/proc/self/fd/N``; MCJIT takes the bytes read), so the checked file cannot be
swapped; finally the kernel must pass its set's known-answer check.

An artefact another process built for this one (the compile child of a stored hash's new kernel
shape) is taken from the private folder it wrote it to by :func:`adopt`, with the same checks.

An artefact that does not exist yet, or was built from other sources, numba or CPU, is simply not
used (numba compiles, and writes a new artefact): that is the normal first run, not a fault.  An
artefact that exists but fails a check is refused with one :class:`RuntimeWarning` per process
(:func:`twocats.simd.cache.warn_once`, shared with numba's cache), numba's build is used instead,
and the artefact is built again (:func:`claim_build`).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import re
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from twocats.simd import cache
from twocats.simd.cache import AOT_ENV, RefusedError, cache_root
from twocats.simd.isa import X86_64_LEVELS

__all__ = [
    "AOT_DIR_ENV",
    "LIBC_SYMBOLS",
    "OBJECT",
    "PREBUILT_DIR",
    "SHARED",
    "ArtefactKey",
    "KernelSet",
    "RefusedError",
    "adopt",
    "aot_dir",
    "claim_build",
    "cpu_key",
    "enabled",
    "forget",
    "host_levels",
    "kernel_sources",
    "load",
    "open_kernel",
    "store",
    "warn_once",
]

#: Moves the artefacts out of the kernel cache root.
AOT_DIR_ENV = "TWOCATS_AOT_DIR"

# Upper bounds on what is read: the index and one artefact.
_INDEX_BYTES = 1 << 20
_ARTEFACT_BYTES = 16 << 20

# The name of every artefact: the SHA-256 of its bytes, and its kind.
_ARTEFACT_NAME = re.compile(r"[0-9a-f]{64}\.(so|o)")

#: The suffixes of a shared object and of an object for MCJIT.
SHARED, OBJECT = ".so", ".o"

#: Symbols an artefact's code may leave to the C library (LLVM lowers some loops to them).
LIBC_SYMBOLS = frozenset({"memcpy", "memmove", "memset"})

_PACKAGE = Path(__file__).resolve().parent.parent

#: The folder of the artefacts a platform wheel carries (see :mod:`twocats.simd.aotbuild`).
PREBUILT_DIR = Path(__file__).resolve().parent / "_prebuilt"


class ArtefactKey(Hashable, Protocol):
    """One kernel of a set: hashable, and named uniquely across every set (the index's key)."""

    @property
    def name(self) -> str:
        """The kernel's name, e.g. ``fill_final_l8_blake2s__simd``."""
        ...


Key = TypeVar("Key", bound=ArtefactKey)


@dataclass(frozen=True)
class KernelSet(Generic[Key]):
    """A set of kernels that the artefact machinery builds, indexes, checks and loads.

    ``wrap`` makes the callable of a loaded entry point from its address, the object that holds
    the code (kept alive by the callable) and the kernel's key; ``check`` tells whether such a
    callable gives its reference's answers.  ``entry_ir`` compiles a key's C entry with numba and
    returns its linked LLVM IR and symbol, ``prepare`` returns numba's own checked build of the key
    before that, and ``sources`` lists the files the machine code depends on: these three import
    numba and run only when an artefact is built (:mod:`twocats.simd.aotcompile`).
    """

    name: str
    entry: str
    wrap: Callable[[int, object, Key], Any]
    check: Callable[[Any, Key], bool]
    entry_ir: Callable[[Key], tuple[str, str]]
    prepare: Callable[[Key], Any]
    sources: Callable[[Key], list[str]]


def enabled() -> bool:
    """Whether artefacts are used at all: ``$TWOCATS_AOT`` is not 0, and kernels are compiled.

    Under ``NUMBA_DISABLE_JIT`` (coverage runs) the kernels' Python source runs instead.
    """
    return os.environ.get(AOT_ENV, "1") != "0" and not cache.jit_disabled()


def aot_dir() -> Path:
    """Return the folder of the artefacts: ``$TWOCATS_AOT_DIR``, else ``aot`` in the cache root."""
    configured = os.environ.get(AOT_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return cache_root() / "aot"


def _open_aot_dir(*, create: bool = False) -> cache.Folder:
    """Open the artefacts' folder from the cache root down (or itself where
    ``$TWOCATS_AOT_DIR`` moved it), checked by :func:`twocats.simd.cache.open_folder`."""
    if os.environ.get(AOT_DIR_ENV):
        return cache.open_folder(aot_dir(), create=create, setting=AOT_DIR_ENV)
    return cache.open_folder(aot_dir(), root=cache_root(), create=create, setting=cache.CACHE_ENV)


@functools.cache
def _cpuinfo() -> dict[str, str]:
    """Return vendor, family, model and flags of the first processor of ``/proc/cpuinfo``."""
    wanted = ("vendor_id", "cpu family", "model", "flags")
    found: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break
                name, _, value = line.partition(":")
                if name.strip() in wanted:
                    found[name.strip()] = value.strip()
    except OSError:
        return {}
    return found


def cpu_key() -> str | None:
    """Return a digest of this CPU's identity and exact feature flags, or None if unknown.

    Read from the first processor of ``/proc/cpuinfo`` (vendor, family, model, flags) with the
    environment variables that change numba's target CPU; None where that file does not exist.
    """
    found = dict(_cpuinfo())
    if "flags" not in found:
        return None
    for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        found[name] = os.environ.get(name, "")
    text = "\n".join(f"{name}={value}" for name, value in sorted(found.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def host_levels() -> list[str]:
    """Return the levels of :data:`twocats.simd.isa.X86_64_LEVELS` this CPU runs, best first."""
    info = _cpuinfo()
    if info.get("vendor_id") not in ("GenuineIntel", "AuthenticAMD") or "flags" not in info:
        return []
    flags = set(info["flags"].split())
    return [level for level, needed in X86_64_LEVELS if flags.issuperset(needed)]


@functools.cache
def _versions() -> str | None:
    """Return the installed numba and llvmlite versions, or None if either cannot be told.

    They are read from the names of the ``.dist-info`` folders beside numba (llvmlite, its
    dependency, is installed next to it), which is much cheaper than ``importlib.metadata`` and
    imports neither package.
    """
    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.origin:
        return None
    try:
        entries = os.listdir(Path(spec.origin).parent.parent)
    except OSError:
        return None
    found: list[str] = []
    for name in ("numba", "llvmlite"):
        versions = [
            entry[len(name) + 1 : -len(".dist-info")]
            for entry in entries
            if entry.startswith(f"{name}-") and entry.endswith(".dist-info")
        ]
        if len(versions) != 1:
            return None
        found.append(f"{name}-{versions[0]}")
    return "+".join(found)


def _index_key(key: ArtefactKey, cpu: str, versions: str) -> str:
    return f"{key.name}|{versions}|cpu-{cpu}"


def kernel_sources(files: list[str]) -> dict[str, str]:
    """Return ``{path relative to the package: SHA-256}`` of the source files a kernel needs."""
    sources: dict[str, str] = {}
    for name in files:
        path = Path(name).resolve()
        relative = path.relative_to(_PACKAGE).as_posix()
        sources[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sources


def _sources_match(sources: Mapping[str, str]) -> bool:
    for relative, digest in sources.items():
        path = _PACKAGE / relative
        if Path(relative).is_absolute() or ".." in Path(relative).parts or not path.is_file():
            return False
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            return False
    return bool(sources)


def open_kernel(kernels: KernelSet[Key], path: Path, key: Key) -> Any:
    """Load the artefact at ``path`` without any check (for a file just built)."""
    if path.suffix == OBJECT:
        return kernels.wrap(*_load_object(path.read_bytes(), kernels.entry), key)
    return kernels.wrap(*_load_shared(str(path), kernels.entry), key)


def _load_shared(name: str, entry: str) -> tuple[int, object]:
    """Load a shared object; return the address of its ``entry`` and the library."""
    library = ctypes.CDLL(name)
    function = getattr(library, entry)
    address = ctypes.cast(function, ctypes.c_void_p).value
    assert address is not None
    return address, library


_mcjit_lock = threading.Lock()


def _load_object(data: bytes, entry_name: str) -> tuple[int, object]:
    """Load a relocatable object with llvmlite's MCJIT; return its entry's address and engine.

    The code may call the C library's :data:`LIBC_SYMBOLS` only (the build checked that).  The
    engine's empty module lives in an LLVM context of its own, so a numba compile running on
    another thread (in llvmlite's global context) is never touched.  Raises
    :class:`RefusedError` when the bytes are not an object, and :class:`AttributeError` when the
    object has no entry point.
    """
    import llvmlite.binding as llvm

    with _mcjit_lock:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        libc = ctypes.CDLL(None)
        for name in sorted(LIBC_SYMBOLS):
            address = ctypes.cast(getattr(libc, name), ctypes.c_void_p).value
            llvm.add_symbol(name, address)
        obj = llvm.ObjectFileRef.from_data(data)
        if not obj:
            raise RefusedError("an artefact is not an object file")
        machine = llvm.Target.from_default_triple().create_target_machine()
        module = llvm.parse_assembly("", context=llvm.create_context())
        engine = llvm.create_mcjit_compiler(module, machine)
        engine.add_object_file(obj)
        engine.finalize_object()
        entry = engine.get_function_address(entry_name)
    if not entry:
        raise AttributeError(entry_name)
    return entry, engine


def _read_index(folder: cache.Folder) -> dict[str, Any]:
    try:
        data = folder.read("index.json", _INDEX_BYTES)
    except FileNotFoundError:
        return {}
    try:
        index = json.loads(data)
    except ValueError:
        index = None
    if not isinstance(index, dict):
        raise RefusedError(f"{folder.path / 'index.json'} is not a valid index")
    return index


def _load(kernels: KernelSet[Key], key: Key) -> Any:
    """Return the checked artefact of ``key``; None when there is none for these sources.

    The artefact built on this machine comes first, then the one of the best x86-64 level a
    platform wheel carries.  When this machine's is refused, the wheel's still serves (with one
    warning); without one the refusal is raised.
    """
    try:
        kernel = _load_built(kernels, key)
    except RefusedError as refusal:
        kernel = _load_prebuilt(kernels, key)
        if kernel is None:
            raise
        warn_once(f"compiled kernel refused ({refusal})", using="the kernel the package carries")
        return kernel
    return kernel if kernel is not None else _load_prebuilt(kernels, key)


def _load_built(kernels: KernelSet[Key], key: Key) -> Any:
    """Load the artefact built here for this CPU and numba (the user's cache)."""
    cpu, versions = cpu_key(), _versions()
    if cpu is None or versions is None:
        return None
    try:
        folder = _open_aot_dir()
    except FileNotFoundError:
        return None
    with folder:
        entry = _read_index(folder).get(_index_key(key, cpu, versions))
        return _open_entry(kernels, folder, entry, key)


def _load_prebuilt(kernels: KernelSet[Key], key: Key) -> Any:
    """Load the artefact the installed package carries for the best level this CPU runs.

    The package's kernels pass the same trust rule as the cache's (owned by this user or root,
    writable by neither group nor others).
    """
    levels = host_levels()
    if not levels:
        return None
    try:
        folder = cache.open_folder(PREBUILT_DIR)
    except FileNotFoundError:
        return None
    with folder:
        index = _read_index(folder)
        for level in levels:
            entry = index.get(f"{key.name}|{level}")
            if entry is not None:
                return _open_entry(kernels, folder, entry, key)
    return None


def _load_shared_fd(fd: int, path: Path, entry: str) -> tuple[int, object]:
    """Load the shared object open at ``fd`` (read from ``path``) by that descriptor."""
    # The dynamic loader knows a library by the name it was opened under and returns the library
    # already loaded under a name seen before: the descriptor stays open as long as the process
    # lives, so that no other file is ever opened under the same name.
    kept = os.dup(fd)
    try:
        return _load_shared(f"/proc/self/fd/{kept}", entry)
    except OSError as error:
        os.close(kept)
        raise RefusedError(f"{path} cannot be loaded ({error})") from None


def _open_entry(kernels: KernelSet[Key], folder: cache.Folder, entry: Any, key: Key) -> Any:
    """Check and load the artefact an index ``entry`` names; None if it is for other sources."""
    if not isinstance(entry, dict):
        return None
    sources = entry.get("sources")
    if not isinstance(sources, dict) or not all(
        isinstance(path, str) and isinstance(digest, str) for path, digest in sources.items()
    ):
        raise RefusedError("the index holds a malformed entry")
    if not _sources_match(sources):
        return None
    name = entry.get("file")
    if not isinstance(name, str) or not _ARTEFACT_NAME.fullmatch(name):
        raise RefusedError(f"the index names an unexpected file {str(name)[:80]!r}")
    path = folder.path / name
    with folder.opened(name, _ARTEFACT_BYTES) as (fd, data):
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise RefusedError(f"{path} does not have its recorded SHA-256")
        try:
            if name.endswith(OBJECT):
                kernel = kernels.wrap(*_load_object(data, kernels.entry), key)
            else:
                kernel = kernels.wrap(*_load_shared_fd(fd, path, kernels.entry), key)
        except AttributeError:
            raise RefusedError(f"{path} has no {kernels.name} entry point") from None
    if not kernels.check(kernel, key):
        raise RefusedError(f"{path} fails its known-answer check")
    return kernel


_lock = threading.Lock()
_loaded: dict[ArtefactKey, Any] = {}
_missing: set[ArtefactKey] = set()


def warn_once(message: str, using: str = "numba's build") -> None:
    """Warn that an artefact was refused or not built, and what runs instead.

    This is the kernel cache's one warning per process (:func:`twocats.simd.cache.warn_once`).
    """
    cache.warn_once(f"twocats: {message}; using {using}", stacklevel=4)


def _refused(attempt: Callable[[], Any]) -> tuple[Any, str | None]:
    """Run ``attempt`` (a checked load); return its kernel, or None and why it was refused."""
    try:
        return attempt(), None
    except RefusedError as error:
        return None, str(error)
    except (OSError, ValueError, TypeError, AttributeError) as error:
        return None, f"a malformed index or artefact ({type(error).__name__})"
    except (ImportError, RuntimeError) as error:
        return None, f"llvmlite cannot load it ({type(error).__name__})"


def load(kernels: KernelSet[Key], key: Key) -> Any:
    """Return the checked artefact of one kernel of ``kernels``, or None to use numba's build.

    A refused artefact warns once per process and is built again (see :func:`claim_build`); a
    missing or outdated one does not warn.  The answer is kept for the process, until
    :func:`forget`.
    """
    with _lock:
        if key in _loaded:
            return _loaded[key]
    kernel, refusal = _refused(lambda: _load(kernels, key)) if enabled() else (None, None)
    with _lock:
        _loaded[key] = kernel
        if kernel is None and enabled():
            _missing.add(key)
    if refusal is not None:
        warn_once(f"compiled kernel refused ({refusal})")
    return kernel


def adopt(kernels: KernelSet[Key], key: Key, folder: Path) -> bool:
    """Load the artefact of ``key`` that a child process built into ``folder``; whether it did.

    ``folder`` is this user's private folder (``$TWOCATS_AOT_DIR`` of the child that built the
    artefact); the artefact passes every check of :func:`load` and is from then on what
    :func:`load` returns for ``key`` in this process.  A copy goes to this machine's artefacts
    where they may be written, for the next process (with one warning where they may not).
    """
    cpu, versions = cpu_key(), _versions()
    if not enabled() or cpu is None or versions is None:
        return False

    def attempt() -> tuple[Any, bytes, dict[str, Any]] | None:
        with cache.open_folder(folder) as opened:
            entry = _read_index(opened).get(_index_key(key, cpu, versions))
            kernel = _open_entry(kernels, opened, entry, key)
            if kernel is None or not isinstance(entry, dict):
                return None
            return kernel, opened.read(str(entry["file"]), _ARTEFACT_BYTES), entry

    found, refusal = _refused(attempt)
    if refusal is not None:
        warn_once(f"compiled kernel refused ({refusal})")
    if found is None:
        return False
    kernel, data, entry = found
    with _lock:
        _loaded[key] = kernel
        _missing.discard(key)
    if hashlib.sha256(data).hexdigest() == entry.get("sha256"):
        try:
            store(key, data, entry["sources"], suffix=Path(entry["file"]).suffix)
        except (OSError, RefusedError) as error:
            detail = error.strerror if isinstance(error, OSError) else str(error)
            warn_once(f"could not keep the compiled kernel {key.name} ({detail})", "it here only")
    return True


def claim_build(key: ArtefactKey) -> bool:
    """Whether the caller should build ``key``'s artefact: :func:`load` found none for these
    sources, or refused it, and no one in this process has tried yet (a failed build is not tried
    again)."""
    with _lock:
        if key not in _missing:
            return False
        _missing.discard(key)
        return True


def forget(key: ArtefactKey) -> None:
    """Drop what :func:`load` remembers of ``key``, so that the next call looks again."""
    with _lock:
        _loaded.pop(key, None)
        _missing.discard(key)


def store(
    key: ArtefactKey,
    data: bytes,
    sources: dict[str, str],
    level: str | None = None,
    prebuilt: Path = PREBUILT_DIR,
    suffix: str = SHARED,
) -> Path:
    """Write an artefact and its index entry (both atomically); return the artefact's path.

    Without ``level`` the artefact is this machine's, in :func:`aot_dir`, keyed on this CPU and
    numba; with a ``level`` of :data:`twocats.simd.isa.X86_64_LEVELS` it goes to ``prebuilt``
    for a wheel.
    ``suffix`` is :data:`SHARED` for a shared object and :data:`OBJECT` for an object for MCJIT.
    """
    if suffix not in (SHARED, OBJECT):
        raise ValueError(f"suffix must be {SHARED!r} or {OBJECT!r}")
    if level is None:
        cpu, versions = cpu_key(), _versions()
        if cpu is None or versions is None:
            raise RefusedError("this machine's CPU or numba version cannot be named")
        folder, index_key = _open_aot_dir(create=True), _index_key(key, cpu, versions)
    else:
        # A wheel's files are the package's: readable by everyone, like its code.
        folder, index_key = cache.open_folder(prebuilt, create=True), f"{key.name}|{level}"
        os.fchmod(folder.fd, 0o755)
    shared = level is not None
    digest = hashlib.sha256(data).hexdigest()
    name = f"{digest}{suffix}"
    with folder, folder.locked("index.lock", exclusive=True):
        folder.write(name, data, shared=shared)
        try:
            index = _read_index(folder)
        except RefusedError:
            index = {}
        index[index_key] = {"file": name, "sha256": digest, "sources": sources}
        text = json.dumps(index, indent=1, sort_keys=True)
        folder.write("index.json", text.encode(), shared=shared)
        # Artefacts that no entry names any more (replaced by newer builds) are removed.
        named = {str(value.get("file")) for value in index.values() if isinstance(value, dict)}
        for stale in folder.names():
            if _ARTEFACT_NAME.fullmatch(stale) and stale not in named:
                folder.remove(stale)
    return folder.path / name
