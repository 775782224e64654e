"""Python child processes, isolated from files and settings that others may have planted.

Usage::

    from twocats import _child

    done = _child.run("import twocats; print(twocats.__version__)", timeout=60)
    process = _child.start("...", stdin=subprocess.PIPE)      # a long-lived child

Every Python process twocats starts (the compile child of a stored hash's kernel, the warm-up
and wheel-build workers, the benchmark's level processes) runs ``python -I`` in ``/``: no module
is imported from the working directory, the script's folder, the user's site folder or
``PYTHONPATH``, and no ``PYTHON*`` variable is read.  The child imports from the folders the
parent imports from (:func:`import_path`), less the working directory and any folder another
user may write to, and gets a minimal environment (:func:`environment`): the settings of numba
and twocats and what a compiler needs, never a secret such as a database URL.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["environment", "import_path", "python", "run", "start"]

#: The variables a child inherits: where things are, the locale, and the settings of twocats and
#: numba.  Every other variable (a database URL, a token, ``PYTHONPATH``) stays in the parent.
PASSED: Final = frozenset(
    {
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TMPDIR",
        "CC",
        "TWOCATS_CACHE_DIR",
        "TWOCATS_AOT",
        "TWOCATS_AOT_DIR",
        "TWOCATS_BACKEND",
        "TWOCATS_THREADS",
        "TWOCATS_EMULATED",
        "TWOCATS_DEBUG",
    }
)

#: Variables passed by prefix: numba's settings (its target CPU, its JIT switch).
PASSED_PREFIX: Final = "NUMBA_"

#: The working directory of every child.
WORKING_DIRECTORY: Final = "/"


def environment(settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: the parent's :data:`PASSED` variables, then ``settings``."""
    passed = {
        name: value
        for name, value in os.environ.items()
        if name in PASSED or name.startswith(PASSED_PREFIX)
    }
    return passed | dict(settings or {})


def _trusted(folder: str) -> bool:
    """Whether ``folder`` (an entry of ``sys.path``) is this user's or root's, and writable by
    neither group nor others."""
    try:
        info = os.stat(folder)
    except OSError:
        return False
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return info.st_uid in (os.geteuid(), 0) and not writable


def import_path() -> list[str]:
    """The folders a child imports from: the parent's ``sys.path`` less the working directory,
    the script's folder and every folder another user may write to."""
    entries = list(sys.path)
    if entries and not (sys.flags.isolated or getattr(sys.flags, "safe_path", False)):
        # The script's folder, or the working directory of ``-c`` and ``-m``.
        entries = entries[1:]
    cwd = os.getcwd()
    return [
        entry
        for entry in entries
        if os.path.isabs(entry) and os.path.realpath(entry) != cwd and _trusted(entry)
    ]


def python(code: str) -> list[str]:
    """The command line of an isolated Python that runs ``code`` with :func:`import_path`."""
    setup = f"import sys; sys.path[:] = {import_path()!r}\n"
    return [sys.executable, "-I", "-c", setup + code]


def run(
    code: str, *, settings: Mapping[str, str] | None = None, timeout: float, **options: Any
) -> subprocess.CompletedProcess[Any]:
    """Run ``code`` in an isolated child (see the module) and wait for it, at most ``timeout``.

    ``settings`` are added to the child's environment; ``options`` go to :func:`subprocess.run`
    (its standard input is empty unless they give one or its ``input``).  Raises
    :class:`subprocess.TimeoutExpired` after killing a child that ran too long.
    """
    if "input" not in options:
        options.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(
        python(code),
        env=environment(settings),
        cwd=WORKING_DIRECTORY,
        timeout=timeout,
        check=False,
        **options,
    )


def start(
    code: str, *, settings: Mapping[str, str] | None = None, **options: Any
) -> subprocess.Popen[Any]:
    """Start ``code`` in an isolated child (see the module), for a conversation through pipes."""
    return subprocess.Popen(
        python(code), env=environment(settings), cwd=WORKING_DIRECTORY, **options
    )
