"""Ahead-of-time fill kernels: find, check and load them without numba or numpy.

Usage::

    from twocats.simd import aot

    kernel = aot.load_fill(8, "simd", 0, 0)     # None: no usable artefact, use numba's build
    if kernel is not None:
        kernel(mem, states, p_first, p_step, done, per_slice, ...)

An artefact is built by :mod:`twocats.simd.aotcompile` (``twocats warmup`` and the first numba build
of a kernel write one) with a single C entry point, :data:`ENTRY`: a shared object (``.so``) where a
C compiler links one, loaded by the dynamic loader, and otherwise a relocatable object (``.o``) that
llvmlite's MCJIT loads from the checked bytes (this imports llvmlite, never numba).  Artefacts live
in ``<cache root>/aot`` with an index, ``index.json``, written atomically.  The index entry of a
kernel is keyed on the kernel, the numba and llvmlite versions and this machine's CPU (its
``/proc/cpuinfo`` identity and feature flags, see :func:`cpu_key`); it records the SHA-256 of the
artefact and of every source file the kernel was built from.

Before a kernel is used: the cache folders, the index and the file must pass the cache's one
trust rule (:func:`twocats.simd.cache.trust_problem`: owned by this user or root, writable by
neither group nor others), the package's prebuilt kernels included; the file read through the
opened descriptor must have the recorded SHA-256, and the same descriptor is what the dynamic
loader opens (``/proc/self/fd/N``; MCJIT takes the bytes read), so the checked file cannot be
swapped; finally the kernel must fill a small known slice exactly like the pure-Python reference.

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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twocats.exceptions import BackendError
from twocats.hashes import HASHES
from twocats.kdf import words
from twocats.simd import cache
from twocats.simd.cache import RefusedError, cache_root
from twocats.simd.fillgen import CHAINS, SCRATCH, kernel_name

__all__ = [
    "AOT_DIR_ENV",
    "AOT_ENV",
    "ENTRY",
    "LEVELS",
    "LIBC_SYMBOLS",
    "OBJECT",
    "PREBUILT_DIR",
    "SHARED",
    "FillKey",
    "RefusedError",
    "aot_dir",
    "claim_build",
    "cpu_key",
    "enabled",
    "forget",
    "host_levels",
    "kernel_sources",
    "load_fill",
    "open_kernel",
    "run_check",
    "store",
    "warn_once",
]

#: The C symbol of every artefact's kernel.
ENTRY = "twocats_fill"

#: Set to 0 to use numba's builds only (no artefact is read or written).
AOT_ENV = "TWOCATS_AOT"

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

# The /proc/cpuinfo flags of x86-64-v3 (AVX2); "abm" is how Linux names LZCNT.
_V3_FLAGS = ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")

#: The x86-64 levels that prebuilt artefacts are built for, best first, with the
#: ``/proc/cpuinfo`` flags each needs: AVX-512, AVX2 and the x86-64 baseline (SSE2).
LEVELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("x86-64-v4", (*_V3_FLAGS, "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
    ("x86-64-v3", _V3_FLAGS),
    ("x86-64", ()),
)


@dataclass(frozen=True)
class FillKey:
    """One fill kernel: lane count, backend, hash code and block-hash variant."""

    lanes: int
    backend: str
    hash_type: int
    variant: int

    @property
    def name(self) -> str:
        """The kernel's name, e.g. ``fill_final_l8_blake2s__simd``."""
        base = kernel_name(CHAINS[self.variant], self.lanes)
        return f"{base}_{HASHES[self.hash_type].name}__{self.backend}"


def enabled() -> bool:
    """Whether artefacts are used at all: ``$TWOCATS_AOT`` is not 0, and kernels are compiled.

    Under ``NUMBA_DISABLE_JIT`` (coverage runs) the kernels' Python source runs instead.
    """
    plain = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
    return os.environ.get(AOT_ENV, "1") != "0" and not plain


def aot_dir() -> Path:
    """Return the folder of the artefacts: ``$TWOCATS_AOT_DIR``, else ``aot`` in the cache root."""
    configured = os.environ.get(AOT_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return cache_root() / "aot"


def _below() -> Path | None:
    """The cache root above the artefacts' folder, or None where ``$TWOCATS_AOT_DIR`` moved it."""
    return None if os.environ.get(AOT_DIR_ENV) else cache_root()


def _untrusted(folder: Path) -> str | None:
    """Return why ``folder`` is not trusted (the cache root down to it, by default), or None."""
    below = _below()
    return cache.root_problem(below or folder) or cache.untrusted_reason(folder, below=below)


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
    """Return the x86-64 levels of :data:`LEVELS` this CPU runs, best first ([] elsewhere)."""
    info = _cpuinfo()
    if info.get("vendor_id") not in ("GenuineIntel", "AuthenticAMD") or "flags" not in info:
        return []
    flags = set(info["flags"].split())
    return [level for level, needed in LEVELS if flags.issuperset(needed)]


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


def _index_key(key: FillKey, cpu: str, versions: str) -> str:
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


#: The C type of each scratch array's element type.
_SCRATCH_TYPES = {"uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64}


class _Kernel:
    """A loaded artefact, called like :class:`twocats.simd.fillkernels.NumbaFill`.

    ``mem`` and ``states`` are words of :mod:`twocats.kdf.words`; the scratch arrays are made
    for each call and zeroed after it.  The arguments are checked by the caller
    (:mod:`twocats.simd.fill` validates every slice), as for numba's build; ctypes releases the
    GIL during the call.
    """

    def __init__(self, address: int, owner: object, variant: int) -> None:
        # ``owner`` holds the code: the loaded library or the MCJIT engine.
        self._owner = owner
        chain = SCRATCH[CHAINS[variant]]
        self._scratch = [_SCRATCH_TYPES[kind] * count for _name, kind, count in chain]
        # numba's calling convention: a status is returned, and a result and an exception are
        # stored through the first two pointers (the kernel returns nothing and raises nothing).
        prototype = ctypes.CFUNCTYPE(
            ctypes.c_int32,
            *[ctypes.c_void_p, ctypes.c_void_p],
            *[ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64],
            *[ctypes.c_void_p] * len(self._scratch),
            *[ctypes.c_int64] * (10 + variant),
        )
        self._function = prototype(address)

    def __call__(self, mem: words.Words, states: words.Words, *ints: int) -> None:
        # The caller checked that states has two dimensions.
        rows, width = words.as_view(states).shape or (0, 0)
        scratch = [kind() for kind in self._scratch]
        result, failure = ctypes.c_void_p(), ctypes.c_void_p()
        try:
            status = self._function(
                ctypes.byref(result),
                ctypes.byref(failure),
                words.address(mem),
                words.as_view(mem).nbytes // 4,
                words.address(states),
                rows,
                width,
                *(ctypes.addressof(array) for array in scratch),
                *ints,
            )
        finally:
            # The scratch held words derived from the password.
            for array in scratch:
                ctypes.memset(array, 0, ctypes.sizeof(array))
        if status:
            raise BackendError(f"the compiled fill kernel failed (status {status})")


def open_kernel(path: Path, variant: int) -> Any:
    """Load the artefact at ``path`` without any check (for a file just built)."""
    if path.suffix == OBJECT:
        return _Kernel(*_load_object(path.read_bytes()), variant)
    return _Kernel(*_load_shared(str(path)), variant)


def _load_shared(name: str) -> tuple[int, object]:
    """Load a shared object; return its entry's address and the library."""
    library = ctypes.CDLL(name)
    function = getattr(library, ENTRY)
    address = ctypes.cast(function, ctypes.c_void_p).value
    assert address is not None
    return address, library


_mcjit_lock = threading.Lock()


def _load_object(data: bytes) -> tuple[int, object]:
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
        entry = engine.get_function_address(ENTRY)
    if not entry:
        raise AttributeError(ENTRY)
    return entry, engine


def run_check(kernel: Any, key: FillKey) -> bytes:
    """Fill a small known job with ``kernel`` and return the digest of memory and states.

    Two slices of two regions, the first data-independent and the second password-dependent with
    64-byte sub-blocks, so that every path of the kernel runs.
    """
    width = HASHES[key.hash_type].state_words
    blocklen = max(32, 2 * key.lanes)
    parallelism, bpt = 2, 4
    mem = words.allocate(parallelism * bpt * blocklen)
    states = words.rows(
        [[(i * 0x9E3779B1) & 0xFFFFFFFF for i in range(p * width, (p + 1) * width)]
         for p in range(parallelism)]
    )  # fmt: skip
    time_cost = (1,) if key.variant else ()
    for done, dependent in ((0, 0), (2, 1)):
        sub = 16 if dependent else blocklen
        kernel(mem, states, 0, 1, done, 2, bpt, blocklen, sub, parallelism, 2, dependent,
               *time_cost)  # fmt: skip
    return hashlib.sha256(mem.tobytes() + states.tobytes()).digest()


@functools.cache
def reference_check(key: FillKey) -> bytes:
    """Return :func:`run_check`'s digest computed by the pure-Python reference fill."""
    from twocats.kdf.geometry import SliceJob
    from twocats.kdf.reference import fill_slice

    def kernel(mem: words.Words, states: words.Words, *ints: int) -> None:
        _first, _step, done, per_slice, bpt, blocklen, sub, par, mult, dep, *rest = ints
        job = SliceJob(done, per_slice, bpt, blocklen, sub, par, key.lanes, mult, bool(dep),
                       key.hash_type, key.variant, rest[0] if rest else 0)  # fmt: skip
        fill_slice(mem, states, job)

    return run_check(kernel, key)


def _read_index(folder: Path) -> dict[str, Any]:
    path = folder / "index.json"
    if not os.path.lexists(path):
        return {}
    with cache.read_checked(path, _INDEX_BYTES) as (_fd, data):
        try:
            index = json.loads(data)
        except ValueError:
            raise RefusedError(f"{path} is not a valid index") from None
    if not isinstance(index, dict):
        raise RefusedError(f"{path} is not a valid index")
    return index


def _load(key: FillKey) -> Any:
    """Return the checked artefact of ``key``; None when there is none for these sources.

    The artefact built on this machine comes first, then the one of the best x86-64 level a
    platform wheel carries.  When this machine's is refused, the wheel's still serves (with one
    warning); without one the refusal is raised.
    """
    try:
        kernel = _load_built(key)
    except RefusedError as refusal:
        kernel = _load_prebuilt(key)
        if kernel is None:
            raise
        warn_once(f"compiled kernel refused ({refusal})", using="the kernel the package carries")
        return kernel
    return kernel if kernel is not None else _load_prebuilt(key)


def _load_built(key: FillKey) -> Any:
    """Load the artefact built here for this CPU and numba (the user's cache)."""
    cpu, versions = cpu_key(), _versions()
    folder = aot_dir()
    if cpu is None or versions is None or not folder.exists():
        return None
    reason = _untrusted(folder)
    if reason is not None:
        raise RefusedError(reason)
    entry = _read_index(folder).get(_index_key(key, cpu, versions))
    return _open_entry(folder, entry, key)


def _load_prebuilt(key: FillKey) -> Any:
    """Load the artefact the installed package carries for the best level this CPU runs.

    The package's kernels pass the same trust rule as the cache's (owned by this user or root,
    writable by neither group nor others).
    """
    folder = PREBUILT_DIR
    levels = host_levels()
    if not levels or not folder.exists():
        return None
    reason = cache.untrusted_reason(folder)
    if reason is not None:
        raise RefusedError(reason)
    index = _read_index(folder)
    for level in levels:
        entry = index.get(f"{key.name}|{level}")
        if entry is not None:
            return _open_entry(folder, entry, key)
    return None


def _load_shared_fd(fd: int, path: Path) -> tuple[int, object]:
    """Load the shared object open at ``fd`` (read from ``path``) by that descriptor."""
    # The dynamic loader knows a library by the name it was opened under and returns the library
    # already loaded under a name seen before: the descriptor stays open as long as the process
    # lives, so that no other file is ever opened under the same name.
    kept = os.dup(fd)
    try:
        return _load_shared(f"/proc/self/fd/{kept}")
    except OSError as error:
        os.close(kept)
        raise RefusedError(f"{path} cannot be loaded ({error})") from None


def _open_entry(folder: Path, entry: Any, key: FillKey) -> Any:
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
    with cache.read_checked(folder / name, _ARTEFACT_BYTES) as (fd, data):
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise RefusedError(f"{folder / name} does not have its recorded SHA-256")
        try:
            if name.endswith(OBJECT):
                kernel = _Kernel(*_load_object(data), key.variant)
            else:
                kernel = _Kernel(*_load_shared_fd(fd, folder / name), key.variant)
        except AttributeError:
            raise RefusedError(f"{folder / name} has no fill entry point") from None
    if run_check(kernel, key) != reference_check(key):
        raise RefusedError(f"{folder / name} fails its known-answer check")
    return kernel


_lock = threading.Lock()
_loaded: dict[FillKey, Any] = {}
_missing: set[FillKey] = set()


def warn_once(message: str, using: str = "numba's build") -> None:
    """Warn that an artefact was refused or not built, and what runs instead.

    This is the kernel cache's one warning per process (:func:`twocats.simd.cache.warn_once`).
    """
    cache.warn_once(f"twocats: {message}; using {using}", stacklevel=4)


def load_fill(lanes: int, backend: str, hash_type: int, variant: int) -> Any:
    """Return the checked artefact of one fill kernel, or None to use numba's build.

    A refused artefact warns once per process and is built again (see :func:`claim_build`); a
    missing or outdated one does not warn.  The answer is kept for the process, until
    :func:`forget`.
    """
    key = FillKey(lanes, backend, hash_type, variant)
    with _lock:
        if key in _loaded:
            return _loaded[key]
    kernel = None
    refusal = None
    if enabled():
        try:
            kernel = _load(key)
        except RefusedError as error:
            refusal = str(error)
        except (OSError, ValueError, TypeError, AttributeError) as error:
            refusal = f"a malformed index or artefact ({type(error).__name__})"
        except (ImportError, RuntimeError) as error:
            refusal = f"llvmlite cannot load it ({type(error).__name__})"
    with _lock:
        _loaded[key] = kernel
        if kernel is None and enabled():
            _missing.add(key)
    if refusal is not None:
        warn_once(f"compiled kernel refused ({refusal})")
    return kernel


def claim_build(key: FillKey) -> bool:
    """Whether the caller should build ``key``'s artefact: :func:`load_fill` found none for these
    sources, or refused it, and no one in this process has tried yet (a failed build is not tried
    again)."""
    with _lock:
        if key not in _missing:
            return False
        _missing.discard(key)
        return True


def forget(key: FillKey) -> None:
    """Drop what :func:`load_fill` remembers of ``key``, so that the next call looks again."""
    with _lock:
        _loaded.pop(key, None)
        _missing.discard(key)


def store(
    key: FillKey,
    data: bytes,
    sources: dict[str, str],
    level: str | None = None,
    prebuilt: Path = PREBUILT_DIR,
    suffix: str = SHARED,
) -> Path:
    """Write an artefact and its index entry (both atomically); return the artefact's path.

    Without ``level`` the artefact is this machine's, in :func:`aot_dir`, keyed on this CPU and
    numba; with an x86-64 ``level`` of :data:`LEVELS` it goes to ``prebuilt`` for a wheel.
    ``suffix`` is :data:`SHARED` for a shared object and :data:`OBJECT` for an object for MCJIT.
    """
    if suffix not in (SHARED, OBJECT):
        raise ValueError(f"suffix must be {SHARED!r} or {OBJECT!r}")
    import fcntl

    if level is None:
        cpu, versions = cpu_key(), _versions()
        if cpu is None or versions is None:
            raise RefusedError("this machine's CPU or numba version cannot be named")
        folder, index_key = aot_dir(), _index_key(key, cpu, versions)
        cache.prepare_folder(folder, _below())
    else:
        # A wheel's files are the package's: readable by everyone, like its code.
        folder, index_key = prebuilt, f"{key.name}|{level}"
        folder.mkdir(mode=0o755, exist_ok=True)
    shared = level is not None
    digest = hashlib.sha256(data).hexdigest()
    path = folder / f"{digest}{suffix}"
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    lock = os.open(folder / "index.lock", flags, 0o644 if shared else 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cache.write_private(path, data, shared=shared)
        try:
            index = _read_index(folder)
        except RefusedError:
            index = {}
        index[index_key] = {"file": path.name, "sha256": digest, "sources": sources}
        text = json.dumps(index, indent=1, sort_keys=True)
        cache.write_private(folder / "index.json", text.encode(), shared=shared)
        # Artefacts that no entry names any more (replaced by newer builds) are removed.
        named = {str(value.get("file")) for value in index.values() if isinstance(value, dict)}
        for stale in folder.iterdir():
            if _ARTEFACT_NAME.fullmatch(stale.name) and stale.name not in named:
                stale.unlink(missing_ok=True)
    finally:
        os.close(lock)
    return path
