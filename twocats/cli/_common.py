"""Helpers shared by the twocats commands: errors, JSON, passwords, sizes, durations, parameters.

Nothing here imports numpy or numba: ``twocats --help`` and argument parsing must stay instant.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import locale
import os
import re
import select
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO, Final, TypeVar

import click

from twocats._bounded_io import read_file_bounded
from twocats.exceptions import (
    BackendError,
    InvalidHashError,
    InvalidParametersError,
    TwoCatsError,
    VerifyMismatchError,
)
from twocats.kdf.limits import StoredLimits, format_size
from twocats.params import BOUNDS, HASH_TYPES, VARIANTS, Params
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
    """Add ``--password-stdin`` and ``--allow-empty`` (never a password in argv)."""
    function = click.option(
        "--allow-empty",
        is_flag=True,
        help="Accept an empty password (refused by default: usually a mistake in a script).",
    )(function)
    return click.option(
        "--password-stdin",
        is_flag=True,
        help="Read the password from the first line of standard input instead of prompting "
        "(the line ending is removed; every other byte is used as it is).",
    )(function)


def terminal_input() -> bool:
    """Return True if standard input is a terminal, which the hidden prompt needs."""
    return sys.stdin.isatty()


#: The most bytes the command line reads as a password, a pepper, a salt or associated data.
MAX_SECRET_BYTES: Final = 1 << 20


def _more_input_follows(stream: BinaryIO) -> bool:
    """Return True if `stream` holds more bytes now, without waiting for a slow writer."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None:
        if os.isatty(fd):
            return False
        # A pipe whose writer is still open and silent has nothing to say yet: do not wait.
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            return False
    return bool(stream.read1(1)) if hasattr(stream, "read1") else bool(stream.read(1))


def _stdin_password() -> bytes:
    """Return the first line of standard input without its line ending."""
    stream = sys.stdin.buffer
    # Room for the longest password and its line ending, and one byte more to tell it is longer.
    line = stream.readline(MAX_SECRET_BYTES + 3)
    if not line:
        raise UsageFailure("no password on standard input")
    if line.endswith(b"\n"):
        line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
    if len(line) > MAX_SECRET_BYTES:
        raise UsageFailure(
            "the password on standard input is longer than the limit of "
            f"{format_size(MAX_SECRET_BYTES)}"
        )
    if _more_input_follows(stream):
        info(
            "note: more input follows the first line of standard input; only the first line "
            "is the password"
        )
    return line


def _prompt_password(confirm: bool, allow_empty: bool) -> bytes:
    """Return the password typed at the hidden prompt, as the terminal's bytes."""
    if not terminal_input():
        # getpass would fall back to an echoing prompt (and a warning) without a terminal.
        raise UsageFailure("no terminal for the hidden password prompt; use --password-stdin")
    encoding = locale.getpreferredencoding(False)
    password: bytes | None
    try:
        text = click.prompt(
            "Password",
            hide_input=True,
            confirmation_prompt=confirm,
            err=True,
            show_default=False,
            default="" if allow_empty else None,
        )
        # Encoding back with the terminal's codec gives the bytes typed, as --password-stdin would.
        password = str(text).encode(encoding, "surrogateescape")
    except UnicodeError:
        # The codec's error holds the typed bytes: it is dropped here, outside the handler, so
        # that no exception raised later carries it as its context.
        password = None
    if password is None:
        # End the prompt's line, which the interrupted prompt left open.
        click.echo(err=True)
        raise UsageFailure(
            f"the password typed is not valid text in the terminal's encoding "
            f"({codecs.lookup(encoding).name}); "
            "use a UTF-8 locale (e.g. LC_ALL=C.UTF-8) or --password-stdin"
        )
    return password


def read_password(from_stdin: bool, *, confirm: bool, allow_empty: bool = False) -> bytes:
    """Return the password from standard input's first line or from a hidden prompt.

    An empty password is refused unless `allow_empty`.
    """
    password = _stdin_password() if from_stdin else _prompt_password(confirm, allow_empty)
    if not password and not allow_empty:
        raise UsageFailure(
            "the password is empty (a bare newline on standard input?); pass --allow-empty "
            "if an empty password is really meant"
        )
    return password


def read_secret_file(path: str | None, what: str) -> bytes:
    """Return the bytes of a secret file (empty if `path` is None); the contents are never shown.

    The file is read up to :data:`MAX_SECRET_BYTES` and no further, whatever it is (a pipe,
    ``/dev/zero``); a longer file and an empty one are refused.
    """
    if path is None:
        return b""
    try:
        data = read_file_bounded(path, MAX_SECRET_BYTES)
    except OSError as exc:
        raise UsageFailure(f"cannot read the {what} file {path}: {exc.strerror}") from None
    if not data:
        raise UsageFailure(
            f"the {what} file {path} is empty; a failed deployment of the secret must not pass "
            f"unnoticed (leave out --{what}-file for none)"
        )
    return data


# Limits on stored and file-supplied parameters -------------------------------------------------


def verify_limits(max_memory: int | None, max_work: int | None = None) -> StoredLimits:
    """Return the limits ``twocats verify`` applies to stored or file-supplied parameters.

    They are exactly those of a :class:`~twocats.PasswordHasher` with the default profile and
    `max_memory` and `max_work` (None: its defaults), so that the command line accepts what such a
    server accepts, with the same messages.
    """
    from twocats.profiles import DEFAULT

    return StoredLimits.relative_to(DEFAULT, max_memory=max_memory, max_work=max_work)


def verify_options(params: Params) -> list[str]:
    """Return the options ``twocats verify`` needs for hashes of `params` ([] if none).

    The options come from :func:`twocats.hasher.verify_limits_for`, rounded up to what the
    options accept; ``--max-work`` is named only where ``--max-memory`` alone is not enough.
    """
    from twocats.exceptions import HashLimitError, HashMemoryLimitError
    from twocats.hasher import verify_limits_for

    memory, work = verify_limits_for(params)
    options: list[str] = []
    max_memory = None
    if memory > verify_limits(None).max_memory:
        options += ["--max-memory", size_argument(memory)]
        max_memory = _MIB * -(-memory // _MIB)
    try:
        verify_limits(max_memory).check(params)
    except HashMemoryLimitError:
        # More than this machine can give: no option helps here.
        pass
    except HashLimitError:
        options += ["--max-work", work_argument(work)]
    return options


def size_argument(nbytes: int) -> str:
    """Return `nbytes` as a ``--max-memory`` argument, rounded up to whole MiB."""
    return f"{-(-nbytes // _MIB)}MiB"


def work_argument(units: int) -> str:
    """Return work `units` (CPU nanoseconds) as a ``--max-work`` argument, rounded up to ms."""
    return f"{-(-units // _NS_PER_MS)}ms"


# Sizes and durations ---------------------------------------------------------------------------

_MIB: Final = 1 << 20
_NS_PER_MS: Final = 1_000_000

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


class WorkType(_IntParam):
    """An estimated work as CPU time (``250ms``, ``2s``); the value is in work units (CPU ns)."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        return max(1, round(DurationType().convert(value, param, ctx) * 1e9))


SIZE: Final = SizeType()
DURATION: Final = DurationType()
WORK: Final = WorkType()


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


def stored_limits_options(what: str) -> Callable[[F], F]:
    """Add ``--max-memory`` and ``--max-work``, the limits of :func:`verify_limits`, for `what`."""
    from twocats.kdf.limits import MEMORY_RATIO, WORK_RATIO, format_work

    default = verify_limits(None)

    def decorate(function: F) -> F:
        function = click.option(
            "--max-work",
            type=WORK,
            default=None,
            help=f"Refuse {what} whose work is estimated above this CPU time, e.g. 2s (default: "
            f"{format_work(default.max_work)}, {WORK_RATIO:g} times the work of the default "
            "profile, or of a default-profile hash at --max-memory where that is more).",
        )(function)
        return click.option(
            "--max-memory",
            type=SIZE,
            default=None,
            help=f"Refuse {what} needing more memory than this, e.g. 2GiB (default: "
            f"{format_size(default.max_memory)}, {MEMORY_RATIO:g} times the memory of the default "
            "profile).",
        )(function)

    return decorate


# Parameters ------------------------------------------------------------------------------------

# The options take any integer and show the static range from the one bounds table; Params checks
# the value, and its message names the parameter and its allowed range.

_PARAM_OPTIONS: Final = (
    ("variant", "--variant", click.Choice(VARIANTS), "Algorithm version."),
    ("hash_type", "--hash-type", click.Choice(HASH_TYPES), "Hash function."),
    ("mem_cost", "--mem-cost", click.INT, "Memory is 2**N KiB (20 = 1 GiB)."),
    ("start_mem_cost", "--start-mem-cost", click.INT, "First memory level (up to --mem-cost)."),
    ("time_cost", "--time-cost", click.INT, "Repetitions 2**N (2014 variants)."),
    ("multiplies", "--multiplies", click.INT, "Serial multiplies per lane word."),
    ("lanes", "--lanes", click.INT, "SIMD lanes: a power of two (16 for 64-bit hashes only)."),
    ("parallelism", "--parallelism", click.INT, "Threads (memory regions)."),
    ("block_size", "--block-size", click.INT, "Block size in bytes (power of two)."),
    ("sub_block_size", "--sub-block-size", click.INT, "Sub-block size in bytes (power of two)."),
    ("overwrite_cost", "--overwrite-cost", click.INT, "Overwrite levels (2015, 2014)."),
    ("hash_size", "--hash-size", click.INT, "Output bytes (2014-03 only)."),
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
        bounds = BOUNDS.get(name)
        metavar = None if bounds is None else f"{bounds[0]}-{bounds[1]}"
        function = click.option(flag, name, type=kind, default=None, metavar=metavar, help=text)(
            function
        )
    function = click.option(
        "--insecure",
        is_flag=True,
        help="Allow the cheapest profile, which offers no protection at all (for tests only).",
    )(function)
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
    insecure = options.pop("insecure", False)
    changes = {name: options.pop(name, None) for name in _PARAM_NAMES}
    changes = {name: value for name, value in changes.items() if value is not None}
    if profile is not None and phc_params is not None:
        raise UsageFailure("--profile and --params cannot be used together")
    if profile is not None and profile.lower() == "cheapest" and not insecure:
        raise UsageFailure(
            "the cheapest profile offers no protection at all and is meant for tests; pass "
            "--insecure to use it anyway"
        )
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
