"""Helpers shared by the twocats commands: errors, JSON, passwords, sizes, durations, parameters.

Nothing here imports numpy or numba: ``twocats --help`` and argument parsing must stay instant.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
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
from twocats.params import HASH_TYPES, VARIANTS, Params
from twocats.simd.registry import BACKENDS

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    # click.ParamType is generic only from click 8.2 on; subscript it for the type checker only.
    _IntParam = click.ParamType[int]
    _FloatParam = click.ParamType[float]
else:
    _IntParam = _FloatParam = click.ParamType

#: Exit status of a run interrupted with Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED: Final = 130


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


def params_document(params: Params) -> dict[str, Any]:
    """Return `params` as a JSON-ready dict, with the memory size added."""
    document = dataclasses.asdict(params)
    # strict only says how Params was validated; every parameter set shown here is strict.
    del document["strict"]
    document["memory_bytes"] = params.memory_bytes
    return document


# Passwords -------------------------------------------------------------------------------------


def password_stdin_option(function: F) -> F:
    """Add ``--password-stdin`` (the only way besides the prompt: never a password in argv)."""
    return click.option(
        "--password-stdin",
        is_flag=True,
        help="Read the password from the first line of standard input instead of prompting "
        "(the line ending is removed; other bytes are used as they are).",
    )(function)


def terminal_input() -> bool:
    """Return True if standard input is a terminal, which the hidden prompt needs."""
    return sys.stdin.isatty()


def read_password(from_stdin: bool, *, confirm: bool) -> bytes:
    """Return the password from standard input's first line or from a hidden prompt."""
    if from_stdin:
        line = sys.stdin.buffer.readline()
        if not line:
            raise UsageFailure("no password on standard input")
        if line.endswith(b"\n"):
            line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
        return line
    if not terminal_input():
        # getpass would fall back to an echoing prompt (and a warning) without a terminal.
        raise UsageFailure("no terminal for the hidden password prompt; use --password-stdin")
    text = click.prompt(
        "Password", hide_input=True, confirmation_prompt=confirm, err=True, show_default=False
    )
    # Bytes the terminal's encoding could not decode come back as surrogate escapes; turning
    # them back into the bytes typed keeps such passwords usable (and out of error messages).
    return str(text).encode("utf-8", "surrogateescape")


#: The largest secret file read (the algorithm's 32-bit length fields bound every input).
MAX_SECRET_FILE_BYTES: Final = 0xFFFFFFFF


def read_secret_file(path: str | None, what: str) -> bytes:
    """Return the bytes of a secret file (empty if `path` is None); the contents are never shown.

    A file larger than :data:`MAX_SECRET_FILE_BYTES` is refused before it is read.
    """
    if path is None:
        return b""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_SECRET_FILE_BYTES:
                raise UsageFailure(
                    f"the {what} file {path} is {size} bytes long, more than the limit of "
                    f"{MAX_SECRET_FILE_BYTES} bytes"
                )
            data = handle.read(MAX_SECRET_FILE_BYTES + 1)
    except OSError as exc:
        raise UsageFailure(f"cannot read the {what} file {path}: {exc.strerror}") from None
    if len(data) > MAX_SECRET_FILE_BYTES:
        raise UsageFailure(
            f"the {what} file {path} is longer than the limit of {MAX_SECRET_FILE_BYTES} bytes"
        )
    return data


# Sizes and durations ---------------------------------------------------------------------------

_SIZE: Final = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")
_SIZE_UNITS: Final = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "kb": 1000,
    "m": 1 << 20,
    "mib": 1 << 20,
    "mb": 1000**2,
    "g": 1 << 30,
    "gib": 1 << 30,
    "gb": 1000**3,
    "t": 1 << 40,
    "tib": 1 << 40,
    "tb": 1000**4,
}
_DURATION: Final = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(us|ms|s)\s*")
_DURATION_UNITS: Final = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


class SizeType(_IntParam):
    """A byte count such as ``1GiB``, ``512MiB``, ``64M`` (binary) or ``2GB`` (decimal)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        match = _SIZE.fullmatch(str(value))
        unit = _SIZE_UNITS.get(match.group(2).lower()) if match else None
        if match is None or unit is None:
            self.fail("expected a size such as 1GiB, 512MiB or 2GB", param, ctx)
        size = int(float(match.group(1)) * unit)
        if size <= 0:
            self.fail("a size must be positive", param, ctx)
        return size


class DurationType(_FloatParam):
    """A duration with a unit: ``250ms``, ``0.5s`` or ``800us``; the value is in seconds."""

    name = "duration"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        match = _DURATION.fullmatch(str(value))
        if match is None:
            self.fail("expected a duration with a unit, such as 250ms or 0.5s", param, ctx)
        seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        if seconds <= 0:
            self.fail("a duration must be positive", param, ctx)
        return seconds


SIZE: Final = SizeType()
DURATION: Final = DurationType()


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


def max_memory_option(default_help: str) -> Callable[[F], F]:
    """Add ``--max-memory``."""
    return click.option(
        "--max-memory",
        type=SIZE,
        default=None,
        help=f"Refuse to use more memory than this, e.g. 4GiB (default: {default_help}).",
    )


# Parameters ------------------------------------------------------------------------------------

# The options only check that numbers are not negative: Params holds the one table of ranges, and
# its message names the parameter and its allowed range.

_PARAM_OPTIONS: Final = (
    ("variant", "--variant", click.Choice(VARIANTS), "Algorithm version."),
    ("hash_type", "--hash-type", click.Choice(HASH_TYPES), "Hash function."),
    ("mem_cost", "--mem-cost", click.IntRange(0), "Memory is 2**N KiB (20 = 1 GiB)."),
    ("start_mem_cost", "--start-mem-cost", click.IntRange(0), "First memory level."),
    ("time_cost", "--time-cost", click.IntRange(0), "Repetitions 2**N (2014 variants)."),
    ("multiplies", "--multiplies", click.IntRange(0), "Serial multiplies per lane word."),
    ("lanes", "--lanes", click.IntRange(0), "SIMD lanes: 1, 2, 4, 8 or 16."),
    ("parallelism", "--parallelism", click.IntRange(0), "Threads (memory regions)."),
    ("block_size", "--block-size", click.IntRange(0), "Block size in bytes (power of two)."),
    ("sub_block_size", "--sub-block-size", click.IntRange(0), "Sub-block size in bytes."),
    ("overwrite_cost", "--overwrite-cost", click.IntRange(0), "Overwrite levels (2015, 2014)."),
    ("hash_size", "--hash-size", click.IntRange(0), "Output bytes (2014-03 only)."),
)
_PARAM_NAMES: Final = (*(name for name, *_ in _PARAM_OPTIONS), "side_channel_resistant")
# Fields that exist only in some variants; switching variant resets them to the new one's default.
_VARIANT_FIELDS: Final = {
    "time_cost": None,
    "overwrite_cost": None,
    "hash_size": None,
    "side_channel_resistant": False,
}


def params_options(function: F) -> F:
    """Add ``--profile``, ``--params`` and one option per TwoCats parameter."""
    from twocats.profiles import PROFILES

    function = click.option(
        "--side-channel-resistant/--no-side-channel-resistant",
        default=None,
        help="Data-independent addressing in every slice (2015 only).",
    )(function)
    for name, flag, kind, text in reversed(_PARAM_OPTIONS):
        function = click.option(flag, name, type=kind, default=None, help=text)(function)
    function = click.option(
        "--params",
        "phc_params",
        metavar="PHC",
        default=None,
        help="Start from a PHC parameter string such as 'twocats tune' prints.",
    )(function)
    return click.option(
        "--profile",
        type=click.Choice(list(PROFILES), case_sensitive=False),
        default=None,
        help="Start from a named profile (default: moderate).",
    )(function)


def build_params(options: dict[str, Any]) -> Params:
    """Build Params from the options of :func:`params_options`, removing them from `options`."""
    from twocats.phc import decode_params
    from twocats.profiles import DEFAULT, PROFILES

    profile = options.pop("profile", None)
    phc_params = options.pop("phc_params", None)
    changes = {name: options.pop(name, None) for name in _PARAM_NAMES}
    changes = {name: value for name, value in changes.items() if value is not None}
    if profile is not None and phc_params is not None:
        raise UsageFailure("--profile and --params cannot be used together")
    if phc_params is not None:
        base = decode_params(phc_params)
    elif profile is not None:
        base = PROFILES[profile.lower()]
    else:
        base = DEFAULT
    fields = dataclasses.asdict(base)
    if changes.get("variant", base.variant) != base.variant:
        fields.update(_VARIANT_FIELDS)
    keeps_start = base.start_mem_cost == base.mem_cost
    if "mem_cost" in changes and "start_mem_cost" not in changes and keeps_start:
        fields["start_mem_cost"] = None
    fields.update(changes)
    return Params(**fields)
