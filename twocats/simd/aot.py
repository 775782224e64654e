"""Ahead-of-time artefacts: a kernel's machine code built once, checked, and loaded without numba.

Usage (through :func:`twocats.simd.family.ready`, which decides when)::

    kernel = aot.load(FAMILY, key)                  # None: no usable artefact, use numba's build
    aot.build(FAMILY, key, numba_build)             # imports numba; stores the artefact

An artefact holds one kernel behind a C entry point that :func:`build` makes from the family's
signature (each array a pointer and its dimensions, then the integers), under the kernel's own
vectorizer mode: a shared object (``.so``) where a C compiler links one, loaded by the dynamic
loader, and otherwise a relocatable object (``.o``) that llvmlite's MCJIT loads from the checked
bytes (this imports llvmlite, never numba).  A loaded artefact is an :class:`Entry`, called like
numba's build.  Scratch arrays are arguments, so the code calls nothing of numba's runtime; a
module that would still need any symbol but a few of the C library's is refused.  The build reads
private attributes of numba, so it runs only on the releases in :data:`BUILD_NUMBA`.

Artefacts live in ``<cache root>/aot`` with an index, ``index.json``, written atomically.  An
entry is keyed on the kernel's name, the numba and llvmlite versions and this machine's CPU (its
``/proc/cpuinfo`` identity and feature flags, see :func:`cpu_key`); it records the SHA-256 of the
artefact and of every source file the kernel was built from.  Before a kernel is used: the
folders, the index and the file pass the cache's one trust rule
(:func:`twocats.simd.cache.trust_problem`), the package's prebuilt kernels included; the file read
through the opened descriptor has the recorded SHA-256, and the same descriptor is what the
dynamic loader opens (``/proc/self/fd/N``; MCJIT takes the bytes read), so the checked file cannot
be swapped; finally the kernel passes its family's known-answer check.

An artefact that does not exist yet, or was built from other sources, numba or CPU, is simply not
used: that is the normal first run, not a fault.  One that exists but fails a check is refused
with one :class:`RuntimeWarning` per process (:func:`twocats.simd.cache.warn_once`), and the
family builds it again.  Importing this module imports neither numba nor numpy.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from twocats.exceptions import BackendError
from twocats.simd import cache
from twocats.simd.cache import AOT_ENV, RefusedError, cache_root
from twocats.simd.isa import X86_64_LEVELS

__all__ = [
    "AOT_DIR_ENV",
    "BUILD_NUMBA",
    "OBJECT",
    "PREBUILT_DIR",
    "SHARED",
    "Argument",
    "Declared",
    "Entry",
    "adopt",
    "aot_dir",
    "arguments",
    "build",
    "compiler",
    "cpu_key",
    "enabled",
    "host_levels",
    "load",
    "store",
]


class Declared(Protocol):
    """What an artefact needs of its kernel's family (:class:`twocats.simd.family.Family`): the
    kernel's arguments in numba's spelling, its known-answer check, and the files beyond the
    kernel's own source that its machine code depends on."""

    @property
    def signature(self) -> Callable[[Any], str]: ...

    @property
    def check(self) -> Callable[[Callable[..., None], Any], bool]: ...

    @property
    def sources(self) -> tuple[str, ...]: ...


#: Moves the artefacts out of the kernel cache root.
AOT_DIR_ENV = "TWOCATS_AOT_DIR"

#: numba releases whose private code-library attributes the build is tested with.
BUILD_NUMBA = frozenset({"0.68.1"})

#: The C symbol of every artefact's kernel.
ENTRY = "twocats_kernel"

#: The suffixes of a shared object and of an object for MCJIT.
SHARED, OBJECT = ".so", ".o"

#: Symbols an artefact's code may leave to the C library (LLVM lowers some loops to them).
LIBC_SYMBOLS = frozenset({"memcpy", "memmove", "memset"})

#: The folder of the artefacts a platform wheel carries (``twocats warmup --wheel``).
PREBUILT_DIR = Path(__file__).resolve().parent / "_prebuilt"

_PACKAGE = Path(__file__).resolve().parent.parent

# These bound what is read: the index and one artefact.
_INDEX_BYTES = 1 << 20
_ARTEFACT_BYTES = 16 << 20

# The name of every artefact: the SHA-256 of its bytes, and its kind.
_ARTEFACT_NAME = re.compile(r"[0-9a-f]{64}\.(so|o)")

# The longest a link may take: a compiler that hangs must not hang the hash that started it.
_LINK_SECONDS = 120

# The prefix numba gives the C wrapper of a compiled function.
_WRAPPER_PREFIX = "cfunc."

# The element types a signature may name, with their sizes in bytes.
_ELEMENTS = {"uint8": 1, "uint32": 4, "uint64": 8, "int64": 8}
_ARGUMENT = re.compile(r"(uint8|uint32|uint64|int64)(?:\[(:(?:, *:)*)\])?")


@dataclass(frozen=True)
class Argument:
    """One argument of a kernel: an integer (``ndim`` 0) or a C-contiguous array."""

    element: str
    ndim: int


@functools.cache
def arguments(signature: str) -> tuple[Argument, ...]:
    """Parse a kernel's signature, in numba's spelling: ``"uint32[:], uint64[:, :], int64"``."""
    found = []
    for part in re.split(r",\s*(?![^\[]*\])", signature):
        match = _ARGUMENT.fullmatch(part.strip())
        if match is None:
            raise ValueError(f"a kernel argument must be an array or int64, not {part!r}")
        dims = match.group(2)
        found.append(Argument(match.group(1), 0 if dims is None else dims.count(":")))
    return tuple(found)


class Entry:
    """A loaded artefact's kernel, called like numba's build: the signature's arrays (numpy arrays
    or buffers of the same dimensions and element size) and integers, in order.

    Each array's dimensions go to the code with its address, so the code never reads past it;
    ctypes releases the GIL during the call.
    """

    def __init__(self, address: int, owner: object, signature: str) -> None:
        # ``owner`` holds the code: the loaded library or the MCJIT engine.
        self._owner = owner
        # Each argument's dimensions (0: an integer) and element size.
        self._kinds = [(a.ndim, _ELEMENTS[a.element]) for a in arguments(signature)]
        types: list[Any] = []
        for ndim, _size in self._kinds:
            types += [ctypes.c_void_p, *[ctypes.c_int64] * ndim] if ndim else [ctypes.c_int64]
        # numba's calling convention: a status is returned, and a result and an exception are
        # stored through the first two pointers (the kernel returns nothing and raises nothing).
        prototype = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, *types)
        self._function = prototype(address)

    def __call__(self, *args: Any) -> None:
        values: list[int] = []
        for (ndim, size), value in zip(self._kinds, args, strict=True):
            if not ndim:
                values.append(int(value))
                continue
            view = memoryview(value)
            if view.ndim != ndim or view.itemsize != size or not view.c_contiguous:
                raise TypeError(f"expected a C-contiguous {ndim}-D array of {size}-byte elements")
            if not view.nbytes:
                values.append(0)
            elif view.readonly:
                # ctypes takes the address of a writable buffer only; a read-only numpy array
                # tells its own.
                values.append(value.__array_interface__["data"][0])
            else:
                values.append(ctypes.addressof(ctypes.c_char.from_buffer(view)))
            values += view.shape or ()
        result, failure = ctypes.c_void_p(), ctypes.c_void_p()
        status = self._function(ctypes.byref(result), ctypes.byref(failure), *values)
        if status:
            raise BackendError(f"a compiled kernel failed (status {status})")


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


def _index_key(name: str, cpu: str, versions: str) -> str:
    return f"{name}|{versions}|cpu-{cpu}"


def _sources_match(sources: Mapping[str, str]) -> bool:
    for relative, digest in sources.items():
        path = _PACKAGE / relative
        if Path(relative).is_absolute() or ".." in Path(relative).parts or not path.is_file():
            return False
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            return False
    return bool(sources)


def _load_shared(name: str) -> tuple[int, object]:
    """Load a shared object; return the address of its entry point and the library."""
    library = ctypes.CDLL(name)
    address = ctypes.cast(getattr(library, ENTRY), ctypes.c_void_p).value
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


def _open_entry(family: Declared, folder: cache.Folder, entry: Any, key: Any) -> Entry | None:
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
            loaded = _load_object(data) if name.endswith(OBJECT) else _load_shared_fd(fd, path)
        except AttributeError:
            raise RefusedError(f"{path} has no entry point") from None
    kernel = Entry(*loaded, family.signature(key))
    if not family.check(kernel, key):
        raise RefusedError(f"{path} fails its known-answer check")
    return kernel


def _load_built(family: Declared, key: Any) -> Entry | None:
    """Load the artefact built here for this CPU and numba (the user's cache)."""
    cpu, versions = cpu_key(), _versions()
    if cpu is None or versions is None:
        return None
    try:
        folder = _open_aot_dir()
    except FileNotFoundError:
        return None
    with folder:
        entry = _read_index(folder).get(_index_key(key.name, cpu, versions))
        return _open_entry(family, folder, entry, key)


def _load_prebuilt(family: Declared, key: Any) -> Entry | None:
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
                return _open_entry(family, folder, entry, key)
    return None


def _refused(attempt: Callable[[], Entry | None]) -> tuple[Entry | None, str | None]:
    """Run ``attempt`` (a checked load); return its kernel, or None and why it was refused."""
    try:
        return attempt(), None
    except RefusedError as error:
        return None, str(error)
    except (OSError, ValueError, TypeError, AttributeError) as error:
        return None, f"a malformed index or artefact ({type(error).__name__})"
    except (ImportError, RuntimeError) as error:
        return None, f"llvmlite cannot load it ({type(error).__name__})"


def warn_once(message: str, using: str = "numba's build") -> None:
    """Warn that an artefact was refused or not built, and what runs instead (the kernel cache's
    one warning per process, :func:`twocats.simd.cache.warn_once`)."""
    cache.warn_once(f"twocats: {message}; using {using}", stacklevel=5)


def load(family: Declared, key: Any) -> Entry | None:
    """Return the checked artefact of ``key``, or None to use numba's build.

    The artefact built on this machine comes first, then the one of the best x86-64 level a
    platform wheel carries.  A refused artefact warns once per process (when this machine's is
    refused, the wheel's still serves); a missing or outdated one does not warn.
    """
    if not enabled():
        return None
    built, refusal = _refused(lambda: _load_built(family, key))
    if built is not None:
        return built
    prebuilt, refused = _refused(lambda: _load_prebuilt(family, key))
    if refusal is not None:
        warn_once(
            f"compiled kernel refused ({refusal})",
            "the kernel the package carries" if prebuilt is not None else "numba's build",
        )
    elif refused is not None:
        warn_once(f"compiled kernel refused ({refused})")
    return prebuilt


def adopt(family: Declared, key: Any, folder: Path) -> Entry | None:
    """Load the artefact of ``key`` that a child process built into ``folder``, or None.

    ``folder`` is this user's private folder (``$TWOCATS_AOT_DIR`` of the child that built the
    artefact); the artefact passes every check of :func:`load`.  A copy goes to this machine's
    artefacts where they may be written, for the next process (with one warning where they may
    not).
    """
    cpu, versions = cpu_key(), _versions()
    if not enabled() or cpu is None or versions is None:
        return None

    found: list[tuple[Entry, bytes, dict[str, Any]]] = []

    def attempt() -> Entry | None:
        with cache.open_folder(folder) as opened:
            entry = _read_index(opened).get(_index_key(key.name, cpu, versions))
            kernel = _open_entry(family, opened, entry, key)
            if kernel is not None and isinstance(entry, dict):
                found.append((kernel, opened.read(str(entry["file"]), _ARTEFACT_BYTES), entry))
            return kernel

    _kernel, refusal = _refused(attempt)
    if refusal is not None:
        warn_once(f"compiled kernel refused ({refusal})")
    if not found:
        return None
    kernel, data, entry = found[0]
    if hashlib.sha256(data).hexdigest() == entry.get("sha256"):
        try:
            store(key.name, data, entry["sources"], suffix=Path(entry["file"]).suffix)
        except (OSError, RefusedError) as error:
            detail = error.strerror if isinstance(error, OSError) else str(error)
            warn_once(f"could not keep the compiled kernel {key.name} ({detail})", "it here only")
    return kernel


def store(
    name: str,
    data: bytes,
    sources: dict[str, str],
    level: str | None = None,
    prebuilt: Path = PREBUILT_DIR,
    suffix: str = SHARED,
) -> Path:
    """Write the artefact of the kernel ``name`` and its index entry (both atomically); return
    the artefact's path.

    Without ``level`` the artefact is this machine's, in :func:`aot_dir`, keyed on this CPU and
    numba; with a ``level`` of :data:`twocats.simd.isa.X86_64_LEVELS` it goes to ``prebuilt``
    for a wheel.  ``suffix`` is :data:`SHARED` for a shared object and :data:`OBJECT` for an
    object for MCJIT.
    """
    if suffix not in (SHARED, OBJECT):
        raise ValueError(f"suffix must be {SHARED!r} or {OBJECT!r}")
    if level is None:
        cpu, versions = cpu_key(), _versions()
        if cpu is None or versions is None:
            raise RefusedError("this machine's CPU or numba version cannot be named")
        folder, index_key = _open_aot_dir(create=True), _index_key(name, cpu, versions)
    else:
        # A wheel's files are the package's: readable by everyone, like its code.
        folder, index_key = cache.open_folder(prebuilt, create=True), f"{name}|{level}"
        os.fchmod(folder.fd, 0o755)
    shared = level is not None
    digest = hashlib.sha256(data).hexdigest()
    file = f"{digest}{suffix}"
    with folder, folder.locked("index.lock", exclusive=True):
        folder.write(file, data, shared=shared)
        try:
            index = _read_index(folder)
        except RefusedError:
            index = {}
        index[index_key] = {"file": file, "sha256": digest, "sources": sources}
        text = json.dumps(index, indent=1, sort_keys=True)
        folder.write("index.json", text.encode(), shared=shared)
        # Artefacts that no entry names any more (replaced by newer builds) are removed.
        named = {str(value.get("file")) for value in index.values() if isinstance(value, dict)}
        for stale in folder.names():
            if _ARTEFACT_NAME.fullmatch(stale) and stale not in named:
                folder.remove(stale)
    return folder.path / file


def compiler() -> str | None:
    """Return the C compiler that links artefacts (``$CC``, else ``cc``), or None if absent."""
    return shutil.which(os.environ.get("CC") or "cc")


def build(
    family: Declared,
    key: Any,
    kernel: Any,
    level: str | None = None,
    prebuilt: Path = PREBUILT_DIR,
) -> Path | None:
    """Build and store the artefact of ``key`` from ``kernel``, numba's checked build of it.

    Returns None, building nothing, on an untested numba release or a machine whose CPU cannot be
    named without numba.  Without a C compiler the artefact is the object itself, for llvmlite's
    MCJIT.  :class:`~twocats.exceptions.BackendError` is raised, storing nothing, if the built
    code fails the family's check.  With ``level`` (a process whose numba targets that x86-64
    level) the artefact goes to ``prebuilt`` for a platform wheel instead of this machine's cache.
    """
    import llvmlite.binding as llvm
    import numba
    from numba.core.registry import cpu_target

    if numba.__version__ not in BUILD_NUMBA or cpu_key() is None:
        return None
    signature = family.signature(key)
    ir, entry = _entry_ir(kernel, signature)
    triple, cpu_name, features = cpu_target.target_context.codegen().magic_tuple()
    machine = llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu_name, features=features, opt=3, reloc="pic", codemodel="default"
    )
    obj = machine.emit_object(_reduce(ir, entry, machine))
    cc = compiler()
    data, suffix = (obj, OBJECT) if cc is None else (_link(cc, obj), SHARED)
    with tempfile.TemporaryDirectory(prefix="twocats-aot-") as work:
        path = Path(work) / f"check{suffix}"
        path.write_bytes(data)
        loaded = _load_object(data) if suffix == OBJECT else _load_shared(str(path))
        if not family.check(Entry(*loaded, signature), key):
            message = f"the ahead-of-time build of {key.name} fails its known-answer check"
            raise BackendError(message)
    sources = _sources(kernel, family.sources)
    return store(key.name, data, sources, level, prebuilt, suffix)


def _sources(kernel: Any, extra: tuple[str, ...]) -> dict[str, str]:
    """Return ``{path relative to the package: SHA-256}`` of the files ``kernel``'s machine code
    depends on: those numba's cache is keyed on (the kernel's and its callees' files and the JIT
    settings), the modules of the kernel's globals (numba's key misses intrinsics such as
    prefetches), this builder and ``extra``."""
    from twocats.simd import _jit

    files = _jit._source_files(kernel.py_func) | {_jit.__file__, __file__, *extra}
    for value in kernel.py_func.__globals__.values():
        module = sys.modules.get(getattr(value, "__module__", None) or "")
        if module is not None and module.__name__.startswith("twocats.") and module.__file__:
            files.add(module.__file__)
    found: dict[str, str] = {}
    for name in sorted(str(Path(file).resolve()) for file in files):
        relative = Path(name).relative_to(_PACKAGE).as_posix()
        found[relative] = hashlib.sha256(Path(name).read_bytes()).hexdigest()
    return found


def _entry_ir(kernel: Any, signature: str) -> tuple[str, str]:
    """Compile the C entry of ``kernel``: each array of ``signature`` a pointer and one length
    per dimension, each integer an int64.  Returns the linked LLVM IR and the symbol of the
    function inside numba's C wrapper."""
    from numba import cfunc, types
    from numba.core.compiler_lock import global_compiler_lock
    from numba.np.numpy_support import carray

    from twocats.simd import _jit

    parameters: list[str] = []
    passed: list[str] = []
    ctypes_of: list[Any] = []
    for index, argument in enumerate(arguments(signature)):
        element = getattr(types, argument.element)
        name = f"a{index}"
        if not argument.ndim:
            parameters.append(name)
            passed.append(name)
            ctypes_of.append(element)
            continue
        shape = [f"{name}_{dim}" for dim in range(argument.ndim)]
        parameters += [name, *shape]
        passed.append(f"carray({name}, ({', '.join(shape)},))")
        ctypes_of += [types.CPointer(element), *[types.int64] * argument.ndim]  # type: ignore[no-untyped-call]
    # The entry's source follows from the signature alone: one line that calls the kernel.
    source = f"def entry({', '.join(parameters)}):\n    kernel({', '.join(passed)})\n"
    namespace: dict[str, Any] = {"kernel": kernel, "carray": carray}
    exec(compile(source, f"<entry of {kernel.py_func.__qualname__}>", "exec"), namespace)
    with global_compiler_lock, _jit._vectorizers(kernel.twocats_mode):
        compiled = cfunc(types.void(*ctypes_of), error_model="numpy")(namespace["entry"])
    # The C wrapper numba puts around the entry turns a failure into a Python exception through
    # numba's helpers; the artefact exports the function inside it, which only returns a status.
    wrapper = compiled.native_name
    if not wrapper.startswith(_WRAPPER_PREFIX):
        raise BackendError(f"unexpected name of numba's C wrapper: {wrapper!r}")
    library: Any = compiled._library  # type: ignore[attr-defined]
    return library.get_llvm_str(), wrapper.removeprefix(_WRAPPER_PREFIX)


def _reduce(ir: str, entry: str, machine: Any) -> Any:
    """Parse ``ir``, keep only ``entry`` (renamed :data:`ENTRY`) and what it reaches, check imports.

    Every other definition becomes internal and is named by its place in the module, so that the
    same source gives the same bytes: numba's names count the functions the process compiled
    before (``B2v1`` in one process is ``B3v13`` in another).
    """
    import llvmlite.binding as llvm

    module = llvm.parse_assembly(ir)
    module.name = ENTRY
    internal = 0
    for function in module.functions:
        if function.name == entry:
            function.name = ENTRY
        elif not function.is_declaration:
            function.linkage = "internal"
            function.name = f"{ENTRY}.f{internal}"
            internal += 1
    for variable in module.global_variables:
        if not variable.is_declaration:
            variable.linkage = "internal"
            variable.name = f"{ENTRY}.v{internal}"
            internal += 1
    # With everything internal, interprocedural constant propagation sees that the arrays carry
    # no runtime object and that the kernel never fails, so numba's reference counting and error
    # paths are dead code; the vectorizers stay off, so the kernel's vectorizer mode is kept.
    passes = llvm.create_new_module_pass_manager()
    passes.add_ipsccp_pass()
    passes.add_global_opt_pass()
    passes.add_dead_arg_elimination_pass()
    passes.add_instruction_combine_pass()
    passes.add_simplify_cfg_pass()
    passes.add_aggressive_dce_pass()
    passes.add_global_dead_code_eliminate_pass()
    passes.add_strip_dead_prototype_pass()
    passes.run(module, llvm.create_pass_builder(machine, llvm.PipelineTuningOptions()))
    module.verify()
    imports = {
        f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")
    }
    imports |= {v.name for v in module.global_variables if v.is_declaration}
    if imports - LIBC_SYMBOLS:
        raise BackendError(f"the kernel's code still needs {sorted(imports - LIBC_SYMBOLS)}")
    return module


def _link(cc: str, obj: bytes) -> bytes:
    """Link the object code ``obj`` into a shared object with the C compiler ``cc``."""
    with tempfile.TemporaryDirectory(prefix="twocats-aot-") as work:
        source, shared = Path(work) / "kernel.o", Path(work) / "kernel.so"
        source.write_bytes(obj)
        subprocess.run(
            [cc, "-shared", "-Wl,-z,now", "-Wl,-z,noexecstack", "-o", str(shared), str(source)],
            check=True,
            capture_output=True,
            timeout=_LINK_SECONDS,
        )
        return shared.read_bytes()
