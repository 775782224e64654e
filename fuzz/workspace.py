"""The working folder of a fuzz run: files the checksum seeds name, and vector files to test."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: File names the checksum seeds use: spaces, escapes, newlines, non-ASCII text, a folder.
CHECK_NAMES = (
    "plain.txt",
    "with space.txt",
    "back\\slash",
    "new\nline",
    "carriage\rreturn",
    "*star",
    "caf\u00e9",
    "dir/nested.bin",
    " leading",
)

# The folder of the run under way; empty outside a run.
_open: list[Path] = []


def workspace_open() -> bool:
    """Whether a run's working folder is open (the command-line targets need one)."""
    return bool(_open)


def workspace_folder() -> Path:
    """The working folder of the run under way."""
    return _open[0]


@contextlib.contextmanager
def workspace() -> Iterator[Path]:
    """Open a temporary folder holding the files the checksum seeds name, as the working folder."""
    with tempfile.TemporaryDirectory(prefix="twocats-fuzz-") as folder:
        root = Path(folder)
        (root / "dir").mkdir()
        for name in CHECK_NAMES:
            with contextlib.suppress(OSError):
                (root / name).write_bytes(name.encode("utf-8") * 3)
        previous = Path.cwd()
        os.chdir(root)
        _open.append(root)
        try:
            yield root
        finally:
            _open.clear()
            os.chdir(previous)
