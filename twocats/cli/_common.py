"""Helpers shared by the twocats commands: errors and exit statuses, JSON, messages, progress.

Nothing here imports numpy or numba: ``twocats --help`` and argument parsing must stay instant.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from twocats.exceptions import (
    BackendError,
    InvalidHashError,
    InvalidParametersError,
    TwoCatsError,
    VerifyMismatchError,
)
from twocats.simd.registry import BACKENDS

if TYPE_CHECKING:
    from twocats.params import Params

#: A command function; the option decorators return it with its type unchanged.
F = TypeVar("F", bound=Callable[..., Any])

#: Exit status of a run interrupted with Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED: Final = 130

#: Exit status of a job that ran but left something needing attention (rows that failed, need
#: the password, or changed meanwhile).  0 means everything reachable is at the target, 2 bad
#: input refused before anything was done, 3 a run aborted midway.
EXIT_ATTENTION: Final = 1

#: Seconds between two progress lines on standard error when it is not a terminal.
PROGRESS_INTERVAL: Final = 10.0


class UsageFailure(click.ClickException):
    """Bad input on the command line: one ``Error:`` line and exit status 2."""

    exit_code = 2


class Failure(click.ClickException):
    """The work failed or the password did not match: one ``Error:`` line and exit status 1."""

    exit_code = 1


def translate_errors(run: Callable[[], Any]) -> Any:
    """Run `run`, turning every error into one ``Error:`` line and the documented exit status.

    Exit status 2 means bad input (options, parameters, a malformed hash string), 1 a mismatch or a
    failure, 130 an interruption.  Set ``TWOCATS_DEBUG=1`` to see the traceback of an unexpected
    error.  Messages come from the library's exceptions, which never contain secrets.
    """
    try:
        return run()
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    except VerifyMismatchError as exc:
        raise Failure(str(exc)) from None
    except (InvalidParametersError, InvalidHashError, BackendError) as exc:
        raise UsageFailure(str(exc)) from None
    except TwoCatsError as exc:
        raise Failure(str(exc)) from None
    except MemoryError:
        raise Failure("out of memory") from None
    except BrokenPipeError:
        # The reader went away (e.g. `twocats sum * | head`): stop quietly, as coreutils do.
        # Standard output is pointed at /dev/null so that flushing it at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise click.exceptions.Exit(1) from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise Failure(f"{where}{exc.strerror or exc}") from None
    except Exception as exc:
        if os.environ.get("TWOCATS_DEBUG"):
            traceback.print_exc()
        raise Failure(
            f"unexpected {type(exc).__name__}; set TWOCATS_DEBUG=1 to see the details"
        ) from None


def emit_json(document: object) -> None:
    """Write `document` as the one JSON document on standard output."""
    click.echo(json.dumps(document, indent=2))


def info(message: str) -> None:
    """Write a human-readable line to standard error."""
    click.echo(message, err=True)


def progress_wanted() -> bool:
    """Return True if progress should be shown (standard error is a terminal)."""
    return sys.stderr.isatty()


class ProgressLines:
    """Writes progress lines to standard error: the first at once, then one per `interval` s.

    For logs and pipes, where a progress bar cannot redraw itself.
    """

    def __init__(self, interval: float = PROGRESS_INTERVAL) -> None:
        self._interval = interval
        self._due = 0.0

    def __call__(self, message: str) -> None:
        now = time.monotonic()
        if now >= self._due:
            self._due = now + self._interval
            info(message)


def params_document(params: Params) -> dict[str, Any]:
    """Return `params` as a JSON-ready dict, with the memory size added."""
    document = dataclasses.asdict(params)
    # strict only says how Params was validated; every parameter set shown here is strict.
    del document["strict"]
    document["memory_bytes"] = params.memory_bytes
    return document


def backend_option(function: F) -> F:
    """Add ``--backend``."""
    return click.option(
        "--backend",
        type=click.Choice(BACKENDS),
        default=None,
        help="Compute backend (default: $TWOCATS_BACKEND, else simd).",
    )(function)


def json_option(function: F) -> F:
    """Add ``--json``."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Write one JSON document to standard output (everything else goes to standard error).",
    )(function)
