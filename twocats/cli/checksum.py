"""``twocats sum``: checksums of many files at once, through hashlib or multi-buffer lanes.

The lines written are those of GNU coreutils, so ``sha256sum -c``, ``sha512sum -c``, ``b2sum -c``
and ``b2sum -l 256 -c`` accept them, and ``twocats sum --check`` reads theirs:
``<hex digest><space><space or *><file name>``, and for a name holding a backslash, a newline or a
carriage return, a leading backslash with those characters escaped as ``\\\\``, ``\\n`` and ``\\r``.

Error messages quote file names as coreutils does (:func:`quote_name`).  So do the status lines
of ``--check`` for a name holding a character no terminal should receive (a control character
other than tab and newline, or a byte that is not UTF-8): where coreutils prints such a name raw,
terminal escape sequences from a hostile checksum file would reach the terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import click

from twocats.cli._common import backend_option, info, json_option, progress_wanted
from twocats.cli._file_digests import (
    ALGORITHMS,
    LaneLoader,
    file_digests,
    method_for,
    stdin_reader,
)

__all__ = [
    "ALGORITHMS",
    "MAX_LINE",
    "CheckLine",
    "display_name",
    "escape_name",
    "parse_check_line",
    "quote_name",
    "sum_command",
    "unescape_name",
]

#: Checksum lines longer than this (a digest and the longest escaped path name fit many times)
#: are improperly formatted; they are skipped without being held in memory.
MAX_LINE: Final = 64 << 10

#: Checksum lines read and checked together: this many, or lines of this many bytes in all.
CHECK_GROUP: Final = 16384
CHECK_GROUP_BYTES: Final = 4 << 20

#: Output is written in pieces of this many bytes, or after this many seconds.
OUTPUT_BUFFER: Final = 64 << 10
OUTPUT_DELAY: Final = 0.1

if TYPE_CHECKING:
    # click.ParamType is generic only from click 8.2 on; subscript it for the type checker only.
    _StrParam = click.ParamType[str]
else:
    _StrParam = click.ParamType


class _AlgorithmType(_StrParam):
    """A ``--algorithm`` value; the lane modes are looked up only when the option is used."""

    name = "ALGORITHM"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text in ALGORITHMS:
            return text
        from twocats.simd.modes import MODES

        if text not in MODES:
            allowed = ", ".join([*ALGORITHMS, *MODES])
            self.fail(f"{text!r} is not one of {allowed}", param, ctx)
        return text


_ESCAPES: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r"}
_UNESCAPES: Final = {"\\\\": "\\", "\\n": "\n", "\\r": "\r"}
_LINE: Final = re.compile(rb"(\\?)([0-9a-fA-F]+) ([ *])(.+)", re.DOTALL)


def escape_name(name: str) -> tuple[str, str]:
    """Return (prefix, name) as coreutils writes them; the prefix is ``\\`` for escaped names."""
    if "\\" not in name and "\n" not in name and "\r" not in name:
        return "", name
    return "\\", "".join(_ESCAPES.get(char, char) for char in name)


def unescape_name(name: str) -> str | None:
    """Undo :func:`escape_name`; None if the name holds an unknown escape."""
    out: list[str] = []
    index = 0
    while index < len(name):
        if name[index] != "\\":
            out.append(name[index])
            index += 1
            continue
        pair = name[index : index + 2]
        if pair not in _UNESCAPES:
            return None
        out.append(_UNESCAPES[pair])
        index += 2
    return "".join(out)


# Characters that make the shell read a name differently; ``#`` and ``~`` only at the start,
# ``{`` and ``}`` only alone, but any of these four rules out double quotes.
_SHELL_SPECIAL: Final = frozenset(" !\"$&'()*;<=>?[\\^`|")
_NOT_IN_DOUBLE_QUOTES: Final = (_SHELL_SPECIAL - {"'", " "}) | frozenset("#~{}")
_C_ESCAPES: Final = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v"}


def _unprintable(char: str) -> bool:
    """True for C0 and C1 control characters, DEL and bytes that are not UTF-8 (surrogates)."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF


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
    if not unprintable and "'" in name and not any(c in _NOT_IN_DOUBLE_QUOTES for c in name):
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
    others raw; a name holding any other control character but tab (one that could start a
    terminal escape sequence, or a carriage return that could overprint the line) is quoted as in
    messages instead.
    """
    if any(_unprintable(char) and char not in "\t\n" for char in name):
        return quote_name(name)
    if "\n" not in name:
        return name
    prefix, shown = escape_name(name)
    return prefix + shown


@dataclass(frozen=True)
class CheckLine:
    """One parsed line of a checksum file."""

    digest: bytes
    name: str


def parse_check_line(line: bytes, digest_size: int) -> CheckLine | None:
    """Parse one checksum line (without its newline); None if it is not properly formatted.

    A name holding a NUL byte is not properly formatted: no file can have such a name.  This never
    raises, whatever the bytes.
    """
    match = _LINE.fullmatch(line)
    if match is None:
        return None
    escaped, hex_digest, _, raw_name = match.groups()
    if len(hex_digest) != 2 * digest_size or b"\0" in raw_name:
        return None
    name = os.fsdecode(raw_name)
    if escaped:
        unescaped = unescape_name(name)
        if unescaped is None:
            return None
        name = unescaped
    return CheckLine(bytes.fromhex(hex_digest.decode("ascii")), name)


def _error_text(exc: OSError) -> str:
    return exc.strerror or str(exc)


class _Output:
    """Lines on standard output, gathered into writes of up to OUTPUT_BUFFER bytes (standard
    output may be unbuffered, e.g. with PYTHONUNBUFFERED, and a write per line is a system call);
    written out at least every OUTPUT_DELAY seconds, and before every message on standard error
    so that the two stay in order."""

    def __init__(self) -> None:
        self._stream = sys.stdout.buffer
        self._lines: list[bytes] = []
        self._size = 0
        self._written = time.monotonic()

    def line(self, text: str) -> None:
        """Add one line; names that are not UTF-8 keep their original bytes."""
        data = os.fsencode(text + "\n")
        self._lines.append(data)
        self._size += len(data)
        if self._size >= OUTPUT_BUFFER or time.monotonic() - self._written >= OUTPUT_DELAY:
            self.flush()

    def error(self, name: str, exc: OSError) -> None:
        """Report a file that could not be read, its name quoted as coreutils does."""
        self.flush()
        info(f"twocats sum: {quote_name(name)}: {_error_text(exc)}")

    def flush(self) -> None:
        """Write out the gathered lines."""
        if self._lines:
            self._stream.write(b"".join(self._lines))
            self._lines, self._size = [], 0
        self._stream.flush()
        self._written = time.monotonic()


class _JsonDocument:
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
        if not self._started:
            click.echo(f'{{"algorithm": {json.dumps(self._algorithm)}, "files": [', nl=False)
        tail = "".join(f", {json.dumps(key)}: {value}" for key, value in totals.items())
        click.echo(f"\n]{tail}}}")


class _SumCommand(click.Command):
    """A command whose file arguments are split from its options in one pass.

    click's parser takes arguments off the front of a list one at a time, which is quadratic in
    their number; ``sum`` gets hundreds of thousands of file names from a shell glob.  Options
    may still come anywhere, and ``--`` ends them, as with coreutils.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        valued = {
            name
            for param in self.params
            if isinstance(param, click.Option) and not param.is_flag and not param.count
            for name in (*param.opts, *param.secondary_opts)
        }
        options: list[str] = []
        names: list[str] = []
        rest = iter(args)
        for arg in rest:
            if arg == "--":
                names.extend(rest)
            elif arg.startswith("-") and arg != "-":
                options.append(arg)
                if arg in valued or (
                    not arg.startswith("--") and _short_cluster_wants_value(arg, valued)
                ):
                    value = next(rest, None)
                    if value is None:
                        # Let click report the missing value.
                        return super().parse_args(ctx, options)
                    options.append(value)
            else:
                names.append(arg)
        return super().parse_args(ctx, [*options, "--", *names] if names else options)


def _short_cluster_wants_value(arg: str, valued: set[str]) -> bool:
    """True if a cluster of short options (``-cqa``) ends in one that takes the next argument."""
    for position, letter in enumerate(arg[1:], start=1):
        if f"-{letter}" in valued:
            return position == len(arg) - 1
    return False


class _NoProgress:
    """Stands in for a progress bar when standard error is not a terminal."""

    def update(self, _: int) -> None:
        """Ignore progress."""


def _progress(total: int) -> contextlib.AbstractContextManager[Any]:
    """A byte-counting progress bar on standard error when it is a terminal, else a no-op."""
    if not progress_wanted():
        return contextlib.nullcontext(_NoProgress())
    return click.progressbar(length=max(total, 1), label="hashing", file=sys.stderr)


@click.command("sum", cls=_SumCommand)
@click.argument("files", nargs=-1)
@click.option(
    "-a",
    "--algorithm",
    type=_AlgorithmType(),
    default="sha256",
    show_default=True,
    help="Hash function: sha256 (like sha256sum), sha512 (sha512sum), blake2b (b2sum), "
    "blake2b-256 (b2sum -l 256), blake2s, or a lane mode: sha3-224/256/384/512, shake128, "
    "shake256, turboshake128/256, kt128, kt256, parallelhash128/256, blake2sp, blake2bp, "
    "mh-sha256, jlanes-sha256-4/8/16, lsh-256-224/256, lsh-512-224/256/384/512, "
    "sha1 (legacy). Lane modes without a streaming form read each file whole (up to 1 GiB).",
)
@click.option(
    "-c",
    "--check",
    "check",
    is_flag=True,
    help="Read checksum lines from the FILES (- or none: standard input) and check them.",
)
@click.option("--quiet", is_flag=True, help="With --check, do not print OK lines.")
@backend_option
@json_option
def sum_command(
    files: tuple[str, ...],
    algorithm: str,
    check: bool,
    quiet: bool,
    backend: str | None,
    as_json: bool,
) -> None:
    """Print or check checksums of FILES, many files hashed at once.

    The output is line for line what sha256sum (or sha512sum, b2sum) prints, and --check reads
    their files.  Files are hashed by hashlib, and by SIMD lanes when the job is large enough to
    repay loading them (--backend: lanes from the start).  Every input is read in pieces, its
    size never taken from the file system: inputs (files, pipes, devices, standard input) that
    end within 1 MiB are hashed together in batches of up to 8 MiB, longer ones are streamed, so
    memory use stays bounded whatever the inputs, /dev/zero included.  Exit status 1 if any file
    cannot be read or, with --check, does not match.
    """
    names = list(files) or ["-"]
    if check:
        _check(names, algorithm, quiet, backend, as_json)
        return
    sizes = [_size_or_zero(name) for name in names] if progress_wanted() else [0] * len(names)
    failed = 0
    document = _JsonDocument(as_json, algorithm)
    out = _Output()
    with _progress(sum(sizes)) as bar:
        outcomes = file_digests(names, algorithm, backend)
        for size, (name, outcome) in zip(sizes, outcomes, strict=True):
            bar.update(size)
            if isinstance(outcome, OSError):
                failed += 1
                out.error(name, outcome)
                document.entry({"name": name, "error": _error_text(outcome)})
            elif as_json:
                document.entry({"name": name, "digest": outcome.hex()})
            else:
                prefix, shown = escape_name(name)
                out.line(f"{prefix}{outcome.hex()}  {shown}")
    out.flush()
    document.close()
    if failed:
        raise click.exceptions.Exit(1)


def _size_or_zero(name: str) -> int:
    """The size of a file for the progress bar only (0 if unknown); reads are never sized."""
    try:
        return 0 if name == "-" else os.stat(name).st_size
    except OSError:
        return 0


def _lines(read: Callable[[int], bytes]) -> Iterator[bytes | None]:
    """Yield each line of a stream without its newline, or None for a line over MAX_LINE bytes.

    At most MAX_LINE bytes and one read are held at a time, whatever the stream.
    """
    carry = b""
    skipping = False
    while chunk := read(MAX_LINE):
        lines = (carry + chunk).split(b"\n")
        carry = lines.pop()
        if lines and skipping:
            skipping = False
            lines[0] = b""
            yield None
        for line in lines:
            yield None if len(line) > MAX_LINE else line
        if skipping or len(carry) > MAX_LINE:
            skipping, carry = True, b""
    if skipping:
        yield None
    elif carry:
        yield carry


def _check_lines(sum_file: str) -> Iterator[bytes | None]:
    """The lines of one checksum file (``-``: standard input), read in bounded pieces."""
    if sum_file == "-":
        yield from _lines(stdin_reader())
        return
    descriptor = os.open(sum_file, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        yield from _lines(partial(os.read, descriptor))
    finally:
        os.close(descriptor)


@dataclass
class _Tally:
    """What ``--check`` has found so far."""

    improper: int = 0
    mismatched: int = 0
    unreadable: int = 0
    checked: int = 0
    unopened: int = 0


def _parsed_groups(
    sum_files: list[str], digest_size: int, tally: _Tally, out: _Output
) -> Iterator[list[CheckLine]]:
    """The properly formatted lines of every checksum file, CHECK_GROUP (or CHECK_GROUP_BYTES
    of names) at a time."""
    group: list[CheckLine] = []
    group_bytes = 0
    for sum_file in sum_files:
        try:
            for raw in _check_lines(sum_file):
                line = raw[:-1] if raw is not None and raw.endswith(b"\r") else raw
                if line == b"":
                    continue
                parsed = None if line is None else parse_check_line(line, digest_size)
                if line is None or parsed is None:
                    tally.improper += 1
                    continue
                group.append(parsed)
                group_bytes += len(line)
                if len(group) >= CHECK_GROUP or group_bytes >= CHECK_GROUP_BYTES:
                    yield group
                    group, group_bytes = [], 0
        except OSError as exc:
            tally.unopened += 1
            out.error(sum_file, exc)
    if group:
        yield group


def _check(
    sum_files: list[str], algorithm: str, quiet: bool, backend: str | None, as_json: bool
) -> None:
    """Check the lines of every file in `sum_files`; exit status 1 on any failure."""
    method = method_for(algorithm)
    # One loader for every group, so that the lanes load at most once.
    loader = LaneLoader(method, backend)
    tally = _Tally()
    document = _JsonDocument(as_json, algorithm)
    out = _Output()
    for group in _parsed_groups(sum_files, method.digest_size, tally, out):
        names = [item.name for item in group]
        outcomes = file_digests(names, algorithm, backend, loader=loader)
        for item, (name, outcome) in zip(group, outcomes, strict=True):
            tally.checked += 1
            if isinstance(outcome, OSError):
                tally.unreadable += 1
                status = "FAILED open or read"
                out.error(name, outcome)
            elif outcome == item.digest:
                status = "OK"
            else:
                tally.mismatched += 1
                status = "FAILED"
            document.entry({"name": name, "status": status})
            if not as_json and not (quiet and status == "OK"):
                out.line(f"{display_name(name)}: {status}")
    out.flush()
    if not tally.checked and not tally.unopened:
        raise click.ClickException(f"no properly formatted {algorithm} checksum lines found")
    if tally.improper:
        lines = _count(tally.improper, "line is", "lines are")
        info(f"twocats sum: WARNING: {lines} improperly formatted")
    if tally.unreadable:
        listed = _count(tally.unreadable, "listed file", "listed files")
        info(f"twocats sum: WARNING: {listed} could not be read")
    if tally.mismatched:
        computed = _count(tally.mismatched, "computed checksum", "computed checksums")
        info(f"twocats sum: WARNING: {computed} did NOT match")
    document.close(
        mismatched=tally.mismatched,
        unreadable=tally.unreadable,
        improperly_formatted=tally.improper,
    )
    if tally.mismatched or tally.unreadable or tally.unopened:
        raise click.exceptions.Exit(1)


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"
