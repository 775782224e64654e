"""Passwords and secret files read by the twocats commands, bounded and never shown.

Nothing here imports numpy or numba: ``twocats --help`` and argument parsing must stay instant.
"""

from __future__ import annotations

import codecs
import locale
import os
import select
import sys
from typing import Any, BinaryIO, Final

import click

from twocats._bounded_io import read_file_bounded
from twocats._units import format_size
from twocats.cli._common import EXIT_INTERRUPTED, F, UsageFailure, info

#: What a refused command line says instead of its words.
_READ_ELSEWHERE: Final = (
    "not shown, in case it is a password); passwords are read from the hidden prompt or with "
    "--password-stdin, never from the command line"
)


class NoEchoCommand(click.Command):
    """A command that reads a password, whose usage errors never repeat a word it was not given.

    click names the surplus words of a command line ("Got unexpected extra argument (hunter2)")
    and an unknown option ("No such option '--hunter2'"), and a password typed there by mistake
    would be printed back, to a terminal, a log or a CI transcript.  Here surplus words are
    counted, not shown, and an unknown option is named only when click takes it for a misspelling
    of one of the command's options.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", {})["allow_extra_args"] = True
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            rest = super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            if error.possibilities:
                raise
            raise click.UsageError(f"got an unknown option ({_READ_ELSEWHERE}", ctx) from None
        if ctx.args:
            count = len(ctx.args)
            words = "an unexpected argument" if count == 1 else f"{count} unexpected arguments"
            raise click.UsageError(f"got {words} ({_READ_ELSEWHERE}", ctx)
        return rest


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
    except click.Abort as abort:
        # click turns Ctrl-C at the prompt into Abort ("Aborted!", exit status 1); an interrupt
        # ends the command with 130, as everywhere else.  End of input (Ctrl-D) stays an abort.
        if not isinstance(abort.__context__, KeyboardInterrupt):
            raise
        info("interrupted")
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
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
