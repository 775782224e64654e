"""Where compiled kernels are cached, and whether a cache folder is trusted; imports no numba.

``cache_root()`` is ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``.  Below it,
:mod:`twocats.simd._jit` keeps one folder per numba version, target ISA and vectorizer mode, and
:mod:`twocats.simd.aot` keeps the ahead-of-time artefacts.

A cache holds machine code that this process runs, so a folder is used only if this user owns it
and nobody else may write to it (:func:`untrusted_reason`); folders are created private.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_root", "make_private_dirs", "untrusted_reason"]

#: The environment variable that moves the kernel cache.
CACHE_ENV = "TWOCATS_CACHE_DIR"


def cache_root() -> Path:
    """Return the kernel cache root: ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "twocats"


def untrusted_reason(path: Path, *, below: Path | None = None) -> str | None:
    """Return why the folder ``path`` is not trusted, or None if it is.

    A folder is trusted when it is a real folder (not a link) owned by this user and not
    writable by group or others.  With ``below``, every folder from ``below`` down to ``path``
    is checked.
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
        if info.st_uid != os.geteuid():
            return f"{folder} is owned by another user"
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{folder} is writable by group or others ('chmod go-w' it to use it)"
    return None


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents, readable and writable by this user only."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
