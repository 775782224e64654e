"""What ``twocats sum`` writes: digest lines and file names quoted as coreutils writes them,
gathered output lines, one streamed JSON document and a progress bar.

Error messages quote file names as coreutils does (:func:`quote_name`).  So do the status lines
of ``--check`` for a name holding a character no terminal should receive (a control character
other than tab and newline): where coreutils prints such a name raw,
terminal escape sequences from a hostile checksum file would reach the terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any, Final

from twocats.lanes.check_file import escape_name

__all__ = [
    "OUTPUT_BUFFER",
    "OUTPUT_DELAY",
    "JsonDocument",
    "Output",
    "display_name",
    "error_text",
    "progress",
    "quote_name",
    "sum_line",
]

#: Output is written in pieces of this many bytes, or after this many seconds (looked at every
#: OUTPUT_LINES lines).
OUTPUT_BUFFER: Final = 64 << 10
OUTPUT_DELAY: Final = 0.1
OUTPUT_LINES: Final = 64

# Characters that make the shell read a name differently; ``#`` and ``~`` only at the start,
# ``{`` and ``}`` only alone, but any of these four rules out double quotes.
_SHELL_SPECIAL: Final = frozenset(" !\"$&'()*;<=>?[\\^`|")
_NOT_IN_DOUBLE_QUOTES: Final = (_SHELL_SPECIAL - {"'", " "}) | frozenset("{}")
# A name may start with "#" or "~" and still be double-quoted; elsewhere they keep it single-quoted.
_NOT_IN_DOUBLE_QUOTES_AFTER_FIRST: Final = _NOT_IN_DOUBLE_QUOTES | frozenset("#~")
_C_ESCAPES: Final = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v"}


def _unprintable(char: str) -> bool:
    """True for C0 and C1 control characters, DEL and bytes that are not UTF-8 (surrogates)."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF


def _control(char: str) -> bool:
    """True for C0 and C1 control characters and DEL (bytes that are not UTF-8 are not)."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F


def _c_escape(char: str) -> str:
    letter = _C_ESCAPES.get(char)
    if letter is not None:
        return "\\" + letter
    raw = os.fsencode(char)
    return "".join(f"\\{byte:03o}" for byte in raw)


def quote_name(name: str) -> str:
    """Quote a file name for a message as coreutils does (gnulib's shell-escape style).

    A name the shell reads as itself is left alone; otherwise it is single-quoted (double-quoted
    if it holds a ``'`` and nothing else special), with each unprintable character written as
    ``$'\\ooo'`` outside the quotes.  The result never holds a control character.
    """
    unprintable = any(_unprintable(char) for char in name)
    plain = not (
        unprintable
        or not name
        or ":" in name
        or name[0] in "#~"
        or name in ("{", "}")
        or any(char in _SHELL_SPECIAL for char in name)
    )
    if plain:
        return name
    if (
        not unprintable
        and "'" in name
        and name[0] not in _NOT_IN_DOUBLE_QUOTES
        and not any(c in _NOT_IN_DOUBLE_QUOTES_AFTER_FIRST for c in name[1:])
    ):
        return f'"{name}"'
    out = ["'"]
    escaping = False
    for char in name:
        if char == "'":
            out.append("'\\''")
            escaping = False
        elif _unprintable(char):
            out.append(_c_escape(char) if escaping else "'$'" + _c_escape(char))
            escaping = True
        else:
            out.append("''" + char if escaping else char)
            escaping = False
    out.append("'")
    return "".join(out)


def display_name(name: str) -> str:
    """A name as a ``--check`` status line shows it.

    coreutils escapes only names holding a newline there (as in checksum lines) and prints the
    others raw, bytes that are not UTF-8 included; a name holding any other control character but
    tab (one that could start a terminal escape sequence, or a carriage return that could
    overprint the line) is quoted as in messages instead.
    """
    if any(_control(char) and char not in "\t\n" for char in name):
        return quote_name(name)
    if "\n" not in name:
        return name
    prefix, shown = escape_name(name)
    return prefix + shown


def error_text(exc: OSError) -> str:
    return exc.strerror or str(exc)


def sum_line(digest: bytes, name: str, zero: bool, tag: str | None = None) -> str:
    """The line coreutils writes for one file, without its end: ``DIGEST  NAME``, or with ``tag``
    ``TAG (NAME) = DIGEST``; the name escaped (:func:`escape_name`) unless ``zero``."""
    prefix, shown = ("", name) if zero else escape_name(name)
    if tag is not None:
        return f"{prefix}{tag} ({shown}) = {digest.hex()}"
    return f"{prefix}{digest.hex()}  {shown}"


class Output:
    """Lines on standard output, gathered into writes of about OUTPUT_BUFFER bytes (standard
    output may be unbuffered, e.g. with PYTHONUNBUFFERED, and a write per line is a system call);
    written out at least every OUTPUT_DELAY seconds (looked at every OUTPUT_LINES lines), and
    before every message on standard error so that the two stay in order."""

    def __init__(self) -> None:
        self._stream = sys.stdout.buffer
        self._lines: list[str] = []
        self._size = 0
        self._written = time.monotonic()

    def line(self, text: str, end: str = "\n") -> None:
        """Add one line (ended by `end`); names that are not UTF-8 keep their original bytes."""
        self._lines.append(text + end)
        self._size += len(text) + 1
        if self._size >= OUTPUT_BUFFER or (
            not len(self._lines) % OUTPUT_LINES and time.monotonic() - self._written >= OUTPUT_DELAY
        ):
            self.flush()

    def error(self, name: str, exc: OSError) -> None:
        """Report a file that could not be read, its name quoted as coreutils does."""
        self.message(f"{quote_name(name)}: {error_text(exc)}")

    def message(self, text: str) -> None:
        """Write one message on standard error after the lines gathered so far."""
        self.flush()
        # Names in messages are quoted into plain characters (quote_name), so a message needs
        # none of click.echo's care for what a stream can take.
        sys.stderr.write(f"twocats sum: {text}\n")
        sys.stderr.flush()

    def flush(self) -> None:
        """Write out the gathered lines (encoded as a file name is, so that names that are not
        UTF-8 keep their bytes)."""
        if self._lines:
            self._stream.write(os.fsencode("".join(self._lines)))
            self._lines, self._size = [], 0
        self._stream.flush()
        self._written = time.monotonic()


class JsonDocument:
    """Writes one JSON document on standard output entry by entry, so that memory does not grow
    with the number of files; nothing is written until the first entry or the end."""

    def __init__(self, enabled: bool, algorithm: str) -> None:
        self._enabled = enabled
        self._algorithm = algorithm
        self._started = False

    def entry(self, item: dict[str, Any]) -> None:
        """Add one element of the ``files`` list."""
        if not self._enabled:
            return
        import click

        if self._started:
            click.echo(",")
        else:
            click.echo(f'{{"algorithm": {json.dumps(self._algorithm)}, "files": [')
            self._started = True
        click.echo("  " + json.dumps(item), nl=False)

    def close(self, **totals: int) -> None:
        """Close the ``files`` list and add the totals."""
        if not self._enabled:
            return
        import click

        if not self._started:
            click.echo(f'{{"algorithm": {json.dumps(self._algorithm)}, "files": [', nl=False)
        tail = "".join(f", {json.dumps(key)}: {value}" for key, value in totals.items())
        click.echo(f"\n]{tail}}}")


class _NoProgress:
    """Stands in for a progress bar when standard error is not a terminal."""

    def update(self, _: int) -> None:
        """Ignore progress."""


def progress(total: int) -> contextlib.AbstractContextManager[Any]:
    """A byte-counting progress bar on standard error when it is a terminal, else a no-op."""
    from twocats.cli._common import progress_wanted

    if not progress_wanted():
        return contextlib.nullcontext(_NoProgress())
    import click

    return click.progressbar(length=max(total, 1), label="hashing", file=sys.stderr)
