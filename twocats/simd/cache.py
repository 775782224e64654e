"""Where compiled kernels are cached, which cache files are trusted, and how they are written.

``cache_root()`` is ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``.  Below it,
:mod:`twocats.simd._jit` keeps one folder per numba version, target ISA and vectorizer mode, and
:mod:`twocats.simd.aot` keeps the ahead-of-time artefacts.  Importing this module imports no numba.

A cache holds machine code that this process runs, so one rule, :func:`trust_problem`, decides for
every folder and every file before it is used: it must be owned by this user or by root and be
writable by neither group nor others (root's files are what the system already runs).  Files are
read through the descriptor that was checked (:func:`read_checked`), and written atomically and
private whatever the umask (:func:`write_private`): files 0600 and folders 0700, or 0644 and 0755
after :func:`share`, which ``twocats warmup --shared`` runs so that a cache warmed by root serves
other users read-only.

Everything that goes wrong with the cache (a refused or damaged entry, a folder that cannot be
written) costs compile time, never a result, and is told once per process (:func:`warn_once`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

from twocats.exceptions import BackendError

__all__ = [
    "AOT_ENV",
    "CACHE_ENV",
    "RefusedError",
    "cache_root",
    "jit_disabled",
    "make_private_dirs",
    "prepare_folder",
    "read_checked",
    "root_problem",
    "share",
    "trust_problem",
    "untrusted_reason",
    "warn_once",
    "write_private",
]

#: The environment variable that moves the kernel cache.
CACHE_ENV = "TWOCATS_CACHE_DIR"

#: Set to 0 to use numba's builds only: no ahead-of-time artefact is read or written
#: (:mod:`twocats.simd.aot`).
AOT_ENV = "TWOCATS_AOT"

# The modes of what this module creates: private, and what share() gives a shared cache.
_FILE_MODE, _FOLDER_MODE = 0o600, 0o700
_SHARED_FILE_MODE, _SHARED_FOLDER_MODE = 0o644, 0o755


class RefusedError(BackendError):
    """A cache file or folder that exists but failed a check (the kernel compiles instead)."""


def jit_disabled() -> bool:
    """Whether numba runs the kernels' Python source (``NUMBA_DISABLE_JIT``), read without numba."""
    return os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def cache_root() -> Path:
    """Return the kernel cache root: ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "twocats"


def trust_problem(path: Path, info: os.stat_result) -> str | None:
    """The one trust rule of the kernel cache, for folders and files alike.

    ``path`` (whose ``lstat`` or ``fstat`` is ``info``) is trusted when this user or root owns it
    and neither group nor others may write to it; returns why not, or None.
    """
    if info.st_uid not in (os.geteuid(), 0):
        return f"{path} is owned by another user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by group or others ('chmod go-w' it to use it)"
    return None


def untrusted_reason(path: Path, *, below: Path | None = None) -> str | None:
    """Return why the folder ``path`` is not trusted, or None if it is.

    A folder is trusted when it is a real folder (not a link) that :func:`trust_problem` accepts.
    With ``below``, every folder from ``below`` down to ``path`` is checked.
    """
    folders = [path]
    if below is not None:
        relative = path.relative_to(below)
        folders = [
            below,
            *(below / Path(*relative.parts[: i + 1]) for i in range(len(relative.parts))),
        ]
    for folder in folders:
        try:
            info = os.lstat(folder)
        except OSError as error:
            return f"{folder} cannot be read ({error.strerror})"
        if not stat.S_ISDIR(info.st_mode):
            return f"{folder} is not a folder"
        problem = trust_problem(folder, info)
        if problem is not None:
            return problem
    return None


def root_problem(root: Path) -> str | None:
    """Return why ``root`` cannot be a cache root at all, or None.

    The file system's root folder is never one (a cache there would put twocats' folders in
    ``/``), and neither is anything that exists but is not a folder (``/dev/null``, a file).
    """
    try:
        resolved = root.resolve()
    except (OSError, RuntimeError) as error:
        return f"{root} cannot be resolved ({error})"
    if resolved == Path(resolved.anchor):
        return f"{root} is the file system's root folder"
    if resolved.exists() and not resolved.is_dir():
        return f"{root} is not a folder"
    for parent in resolved.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is not a folder"
            break
    return None


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents, readable and writable by this user only."""
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=_FOLDER_MODE)


def prepare_folder(folder: Path, below: Path | None) -> None:
    """Create ``folder`` for writing cache files; raise if it or the cache root is refused.

    Nothing is created unless ``below`` (the cache root above ``folder``), or ``folder`` itself
    without one, may be a cache root (:func:`root_problem`); then every folder from ``below`` down
    to ``folder`` must be trusted.  Raises :class:`RefusedError` for a refused place and
    :class:`OSError` if a folder cannot be made.
    """
    problem = root_problem(below if below is not None else folder)
    if problem is not None:
        raise RefusedError(problem)
    make_private_dirs(folder)
    reason = untrusted_reason(folder, below=below)
    if reason is not None:
        raise RefusedError(reason)


@contextlib.contextmanager
def read_checked(path: Path, limit: int) -> Iterator[tuple[int, bytes]]:
    """Open ``path`` (no link), check it by :func:`trust_problem`, read at most ``limit`` bytes.

    Yields the open descriptor and the bytes read through it, so that what was checked is what is
    used.  Raises :class:`FileNotFoundError` when there is no such file and
    :class:`RefusedError` for anything else wrong.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise RefusedError(f"{path} cannot be opened ({error.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RefusedError(f"{path} is not a regular file")
        problem = trust_problem(path, info)
        if problem is not None:
            raise RefusedError(problem)
        if info.st_size > limit:
            raise RefusedError(f"{path} is larger than {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise RefusedError(f"{path} is larger than {limit} bytes")
        yield fd, b"".join(chunks)
    finally:
        os.close(fd)


def write_private(path: Path, data: bytes, *, shared: bool = False) -> None:
    """Write ``data`` to ``path`` atomically as a file only this user may read or write.

    The bytes go to a temporary file beside ``path`` (mode 0600 whatever the umask, or 0644 for a
    ``shared`` file such as a wheel's kernel), are flushed to disk and renamed over ``path``; if
    anything fails, the temporary file is removed.
    """
    mode = _SHARED_FILE_MODE if shared else _FILE_MODE
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, mode)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def share(root: Path) -> int:
    """Make the cache under ``root`` readable by every user; return the entries changed.

    Folders this user owns become 0755 and files 0644 (links are left alone), so that a cache
    that root warmed serves a service user read-only: :func:`trust_problem` accepts root's files
    that no one else may write.
    """
    changed = 0
    if root_problem(root) is not None or not root.is_dir():
        return changed
    entries = [(root, _SHARED_FOLDER_MODE)]
    for folder, subfolders, files in os.walk(root):
        entries += [(Path(folder) / name, _SHARED_FOLDER_MODE) for name in subfolders]
        entries += [(Path(folder) / name, _SHARED_FILE_MODE) for name in files]
    for path, mode in entries:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if stat.S_IMODE(info.st_mode) != mode:
            os.chmod(path, mode)
            changed += 1
    return changed


# Whether this process has already warned about the kernel cache.
_warned = [False]
_warned_lock = threading.Lock()


def warn_once(message: str, *, stacklevel: int = 3) -> None:
    """Warn about the kernel cache with a :class:`RuntimeWarning`, once per process."""
    with _warned_lock:
        if _warned[0]:
            return
        _warned[0] = True
    warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)
