"""Where compiled kernels are cached, which cache files are trusted, and how they are touched.

``cache_root()`` is ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``.  Below it,
:mod:`twocats.simd._jit` keeps one folder per numba version, target ISA and vectorizer mode, and
:mod:`twocats.simd.aot` keeps the ahead-of-time artefacts.  Importing this module imports no numba.

A cache holds machine code that this process runs, so one rule, :func:`trust_problem`, decides for
every folder and every file before it is used: it must be owned by this user or by root and be
writable by neither group nor others (root's files are what the system already runs).

Every file and folder of the cache is reached through a :class:`Folder`, a descriptor opened
without following a link (``O_NOFOLLOW``) from the cache root down, each one checked by
:func:`trust_problem` on its ``fstat``: no name at or under the cache root can be redirected by a
link or swapped between the check and the use.  Files are opened non-blocking and must be regular
files, read up to a limit through the descriptor that was checked, and written atomically and
private whatever the umask: files 0600 and folders 0700, or 0644 and 0755 after :func:`share`,
which ``twocats warmup --shared`` runs so that a cache warmed by root serves other users
read-only.  Only a folder this process owns is locked, and no lock is waited for longer than
:data:`LOCK_SECONDS` (then the cache is read without it, or not written).

Everything that goes wrong with the cache (a refused or damaged entry, a folder that cannot be
opened or written, a lock held too long) costs compile time, never a result, and is told once per
process (:func:`warn_once`); a refused folder's message names the setting that moves the cache.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from twocats.exceptions import BackendError

__all__ = [
    "AOT_ENV",
    "CACHE_ENV",
    "LOCK_SECONDS",
    "Folder",
    "RefusedError",
    "Shared",
    "cache_root",
    "jit_disabled",
    "open_folder",
    "share",
    "trust_problem",
    "warn_once",
]

#: The environment variable that moves the kernel cache.
CACHE_ENV = "TWOCATS_CACHE_DIR"

#: Set to 0 to use numba's builds only: no ahead-of-time artefact is read or written
#: (:mod:`twocats.simd.aot`).
AOT_ENV = "TWOCATS_AOT"

#: The longest a lock of the cache is waited for; then the cache is left alone for that load or
#: write (the kernel compiles, or is not saved), with one warning.
LOCK_SECONDS: Final = 5.0

# The modes of what this module creates: private, and what share() gives a shared cache.
_FILE_MODE, _FOLDER_MODE = 0o600, 0o700
_SHARED_FILE_MODE, _SHARED_FOLDER_MODE = 0o644, 0o755

# How folders and files of the cache are opened: never through a link, never blocking (a FIFO
# planted where a file should be is refused by its fstat instead of hanging the open).
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


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


def _is_link(name: str | Path, dir_fd: int | None = None) -> bool:
    """Whether ``name`` (relative to ``dir_fd``, if given) is a symbolic link."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _refusal(path: Path, error: OSError, setting: str | None, link: bool) -> RefusedError:
    """The refusal of a folder that could not be opened or made, naming ``setting`` if any."""
    if link or error.errno == errno.ELOOP:
        problem = f"{path} is a symbolic link"
    elif error.errno == errno.ENOTDIR:
        problem = f"{path} is not a folder"
    else:
        problem = f"{path} cannot be used ({error.strerror})"
    hint = f"; set {setting} to a folder of this user's" if setting else ""
    return RefusedError(problem + hint)


def _check_name(name: str) -> None:
    """Refuse anything but one name of a folder's entries (no path, no ``..``)."""
    if not name or "/" in name or name in (".", ".."):
        raise RefusedError(f"{name[:80]!r} is not a file name of the kernel cache")


@dataclass
class Folder:
    """A folder of the kernel cache, open by a descriptor that passed :func:`trust_problem`.

    Every name is opened relative to the descriptor without following a link, so what is read,
    written, locked or shared is what was checked.  ``path`` names the folder in messages only.
    Use it as a context manager, which closes the descriptor.
    """

    fd: int
    path: Path
    info: os.stat_result = field(repr=False)

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        os.close(self.fd)

    @property
    def writable(self) -> bool:
        """Whether this process may write here: it owns the folder (root's shared cache is
        read-only to everyone else, and never locked by them)."""
        return self.info.st_uid == os.geteuid()

    @classmethod
    def _opened(cls, fd: int, path: Path) -> Folder:
        """Check the folder open at ``fd`` and hold it; close ``fd`` if it is refused."""
        info = os.fstat(fd)
        problem = trust_problem(path, info)
        if problem is not None:
            os.close(fd)
            raise RefusedError(problem)
        return cls(fd, path, info)

    def sub(self, name: str, *, create: bool = False) -> Folder:
        """Open the folder ``name`` here (made private first when missing and ``create``)."""
        _check_name(name)
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, _FOLDER_MODE, dir_fd=self.fd)
        try:
            fd = os.open(name, _FOLDER_FLAGS, dir_fd=self.fd)
        except FileNotFoundError:
            raise
        except OSError as error:
            link = _is_link(name, self.fd)
            raise _refusal(self.path / name, error, None, link) from None
        return Folder._opened(fd, self.path / name)

    def names(self) -> list[str]:
        """The names in this folder."""
        return os.listdir(self.fd)

    def exists(self, name: str) -> bool:
        """Whether anything (a link included) is called ``name`` here."""
        try:
            os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def _open_file(self, name: str, flags: int = _READ_FLAGS, mode: int = _FILE_MODE) -> int:
        """Open the regular file ``name`` here without following a link or blocking."""
        _check_name(name)
        try:
            fd = os.open(name, flags, mode, dir_fd=self.fd)
        except FileNotFoundError:
            raise
        except OSError as error:
            reason = "is a symbolic link" if error.errno == errno.ELOOP else "cannot be opened"
            raise RefusedError(f"{self.path / name} {reason} ({error.strerror})") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise RefusedError(f"{self.path / name} is not a regular file")
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def opened(self, name: str, limit: int) -> Iterator[tuple[int, bytes]]:
        """Open the file ``name``, check it by :func:`trust_problem`, read at most ``limit`` bytes.

        Yields the open descriptor and the bytes read through it, so that what was checked is
        what is used.  Raises :class:`FileNotFoundError` when there is no such file and
        :class:`RefusedError` for anything else wrong.
        """
        fd = self._open_file(name)
        path = self.path / name
        try:
            info = os.fstat(fd)
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

    def read(self, name: str, limit: int) -> bytes:
        """The checked bytes of the file ``name``, as :meth:`opened` reads them."""
        with self.opened(name, limit) as (_fd, data):
            return data

    def write(self, name: str, data: bytes, *, shared: bool = False) -> None:
        """Write ``data`` to the file ``name`` atomically, readable by this user only.

        The bytes go to a temporary file beside it (mode 0600 whatever the umask, or 0644 for a
        ``shared`` file such as a wheel's kernel), are flushed to disk and renamed over ``name``;
        if anything fails, the temporary file is removed.
        """
        _check_name(name)
        mode = _SHARED_FILE_MODE if shared else _FILE_MODE
        temporary = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, mode, dir_fd=self.fd)
        try:
            try:
                os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self.fd)
            raise

    def remove(self, name: str) -> None:
        """Remove the file ``name`` here, if it is there."""
        _check_name(name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    @contextlib.contextmanager
    def locked(self, name: str, *, exclusive: bool) -> Iterator[None]:
        """Hold the lock file ``name`` for the block, shared or ``exclusive``.

        A folder this process does not own is not locked at all: it is read-only here, and its
        owner's writers replace files atomically.  A lock not had within :data:`LOCK_SECONDS`
        (or at once, after one such wait in this process) is given up: a writer raises
        :class:`RefusedError`, a reader goes on without it (with one warning), since every file
        it reads is checked against its recorded SHA-256 anyway.
        """
        if not self.writable:
            yield
            return
        import fcntl

        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = self._open_file(name, flags)
        try:
            operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
            deadline = time.monotonic() + (0.0 if _lock_given_up[0] else LOCK_SECONDS)
            pause = 0.001
            while True:
                try:
                    fcntl.flock(fd, operation)
                    break
                except BlockingIOError:
                    if time.monotonic() < deadline:
                        time.sleep(pause)
                        pause = min(2 * pause, 0.1)
                        continue
                _lock_given_up[0] = True
                held = (
                    f"{self.path / name} was held by another process for more than "
                    f"{LOCK_SECONDS:g} s"
                )
                if exclusive:
                    raise RefusedError(held)
                warn_once(f"twocats: {held}; the kernel cache is read without it")
                break
            yield
        finally:
            os.close(fd)


# Whether a lock of the cache was given up in this process: later ones are not waited for.
_lock_given_up = [False]


def _make_parents(path: Path) -> None:
    """Create the missing folders above the cache root, readable and writable by this user only."""
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=_FOLDER_MODE)


def open_folder(
    path: Path, *, root: Path | None = None, create: bool = False, setting: str | None = None
) -> Folder:
    """Open the cache folder ``path``, every folder from ``root`` (default ``path``) down checked.

    ``root`` itself and each folder below it are opened without following a link, relative to
    the one above, and must pass :func:`trust_problem`; the file system's root folder is never a
    cache root.  With ``create`` the missing folders are made (private, and those above ``root``
    too).  Raises :class:`FileNotFoundError` for a missing folder (without ``create``) and
    :class:`RefusedError` for anything else, whose message names ``setting`` (the variable that
    moves ``root``) where the folder cannot be used at all.
    """
    top = root if root is not None else path
    parts = path.relative_to(top).parts
    try:
        if create and not os.path.lexists(top):
            _make_parents(top.parent)
            with contextlib.suppress(FileExistsError):
                top.mkdir(mode=_FOLDER_MODE)
        fd = os.open(top, _FOLDER_FLAGS)
    except OSError as error:
        if isinstance(error, FileNotFoundError) and not create:
            raise
        raise _refusal(top, error, setting, _is_link(top)) from None
    folder = Folder._opened(fd, top)
    if os.path.samestat(folder.info, os.stat("/")):
        folder.__exit__()
        raise RefusedError(f"{top} is the file system's root folder")
    try:
        for part in parts:
            inner = folder.sub(part, create=create)
            folder.__exit__()
            folder = inner
    except BaseException:
        folder.__exit__()
        raise
    return folder


# The records the cache keeps of what it wrote: the digest record of a numba kernel
# (``<kernel>.sha256``: {file name: SHA-256}) and the artefacts' index (``index.json``: {key:
# {"file": name, "sha256": SHA-256, ...}}).
_RECORD_SUFFIX, _INDEX = ".sha256", "index.json"
_RECORD_BYTES = 1 << 20
_SHARED_BYTES = 64 << 20


def _recorded(folder: Folder, name: str) -> dict[str, str]:
    """The files the record ``name`` of ``folder`` names, with their SHA-256 (empty: no record)."""
    try:
        record = json.loads(folder.read(name, _RECORD_BYTES))
    except (OSError, RefusedError, ValueError):
        return {}
    if not isinstance(record, dict):
        return {}
    if name == _INDEX:
        entries = [value for value in record.values() if isinstance(value, dict)]
        pairs = [(entry.get("file"), entry.get("sha256")) for entry in entries]
    else:
        pairs = list(record.items())
    return {
        file: digest for file, digest in pairs if isinstance(file, str) and isinstance(digest, str)
    }


@dataclass
class Shared:
    """What :func:`share` did: the entries whose mode it changed, and what it left alone."""

    changed: int = 0
    refused: list[str] = field(default_factory=list)


def share(root: Path) -> Shared:
    """Make the cache under ``root`` readable by every user: folders 0755, files 0644.

    Only what this cache wrote changes: its folders, its records and the files a record names
    with the SHA-256 they still have, each owned by this user and reached through descriptors
    without following a link.  A folder that is a link or is owned by someone else is left alone
    and named in :attr:`Shared.refused`; lock and temporary files stay private.  Raises
    :class:`RefusedError` when ``root`` itself is refused, changing nothing.
    """
    done = Shared()
    try:
        top = open_folder(root)
    except FileNotFoundError:
        return done
    with top:
        if top.info.st_uid != os.geteuid():
            raise RefusedError(f"{root} is owned by another user")
        _share_folder(top, done)
    return done


def _share_folder(folder: Folder, done: Shared) -> None:
    """Share ``folder``, the files its records name, and its folders (see :func:`share`)."""
    if stat.S_IMODE(folder.info.st_mode) != _SHARED_FOLDER_MODE:
        os.fchmod(folder.fd, _SHARED_FOLDER_MODE)
        done.changed += 1
    names = sorted(folder.names())
    records = [name for name in names if name == _INDEX or name.endswith(_RECORD_SUFFIX)]
    digests: dict[str, str] = {}
    for name in records:
        named = _recorded(folder, name)
        if named:
            digests |= named
            digests[name] = ""
    for name in names:
        info = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            done.refused.append(f"{folder.path / name} is a symbolic link")
        elif stat.S_ISDIR(info.st_mode):
            try:
                inner = folder.sub(name)
            except (OSError, RefusedError) as error:
                done.refused.append(str(error))
                continue
            with inner:
                if inner.info.st_uid != os.geteuid():
                    done.refused.append(f"{inner.path} is owned by another user")
                else:
                    _share_folder(inner, done)
        elif name in digests:
            _share_file(folder, name, digests[name], done)


def _share_file(folder: Folder, name: str, digest: str, done: Shared) -> None:
    """Make one recorded file 0644 if it is this user's and still has its recorded SHA-256."""
    try:
        with folder.opened(name, _SHARED_BYTES) as (fd, data):
            info = os.fstat(fd)
            if info.st_uid != os.geteuid():
                done.refused.append(f"{folder.path / name} is owned by another user")
            elif digest and hashlib.sha256(data).hexdigest() != digest:
                done.refused.append(f"{folder.path / name} does not have its recorded SHA-256")
            elif stat.S_IMODE(info.st_mode) != _SHARED_FILE_MODE:
                os.fchmod(fd, _SHARED_FILE_MODE)
                done.changed += 1
    except (OSError, RefusedError) as error:
        done.refused.append(str(error))


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
