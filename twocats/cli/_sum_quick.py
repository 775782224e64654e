"""``twocats sum`` of files in its everyday form, run without loading click.

The console script (:func:`twocats.cli.run`) offers ``twocats sum`` here first.  A command line of
file names, ``-`` and ``--``, ``-a``/``--algorithm`` naming a coreutils algorithm, ``-z``/``--zero``
and ``--backend`` is run here and writes what :func:`twocats.cli.checksum.sum_command` writes
for it; anything else (``--check``, ``--tag``, ``--json``, ``--help``, any other option or value,
a terminal on standard error, which gets a progress bar) goes to the click command.  Loading
click is a large share of hashing a few thousand small files.  An error that stops the run is
reported through :func:`twocats.cli._common.translate_errors`, as the click command reports it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

from twocats.cli._sum_output import Output, sum_line
from twocats.lanes.file_digests import COREUTILS, file_digests
from twocats.simd.registry import BACKENDS

__all__ = ["sum_quick"]

#: The options taken here that take a value, and those that do not.
_VALUED = ("-a", "--algorithm", "--backend")
_FLAGS = ("-z", "--zero")


def sum_quick(args: Sequence[str]) -> int | None:
    """Run ``twocats sum`` with ``args`` (the words after ``sum``) and return its exit status, or
    None, having done nothing, where the click command must run it."""
    parsed = _parse(args)
    if parsed is None or sys.stderr.isatty():
        return None
    names, algorithm, zero, backend = parsed
    try:
        return _write(names, algorithm, zero, backend)
    except (Exception, KeyboardInterrupt) as error:
        return _reported(error)


def _parse(args: Sequence[str]) -> tuple[list[str], str, bool, str | None] | None:
    """Names, algorithm, ``-z`` and backend of a command line this module runs, else None."""
    algorithm, zero, backend = "sha256", False, None
    names: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            names.extend(rest)
        elif arg == "-" or not arg.startswith("-"):
            names.append(arg)
        elif arg in _FLAGS:
            zero = True
        else:
            option, joined, value = arg.partition("=")
            if option not in _VALUED or (joined and not option.startswith("--")):
                return None
            given = value if joined else next(rest, None)
            if given is None:
                return None
            if option == "--backend":
                backend = given
            else:
                algorithm = given
    if algorithm not in COREUTILS or (backend is not None and backend not in BACKENDS):
        return None
    return names or ["-"], algorithm, zero, backend


def _write(names: list[str], algorithm: str, zero: bool, backend: str | None) -> int:
    """Write the digest lines and the read errors; 1 if a file could not be read, else 0."""
    out = Output()
    end = "\0" if zero else "\n"
    failed = False
    for name, outcome in file_digests(names, algorithm, backend):
        if isinstance(outcome, OSError):
            failed = True
            out.error(name, outcome)
        else:
            out.line(sum_line(outcome, name, zero), end)
    out.flush()
    return int(failed)


def _reported(error: BaseException) -> int:
    """Report an error that stopped the run as the click command does; return the exit status."""
    import click

    from twocats.cli._common import translate_errors

    def again() -> NoReturn:
        raise error

    try:
        translate_errors(again)
    except click.ClickException as failure:
        failure.show()
        return failure.exit_code
    except click.exceptions.Exit as done:
        return done.exit_code
    raise AssertionError("translate_errors raises for every error")
