"""The lines of a checksum file as GNU coreutils writes them, parsed and read in bounded pieces.

A line is ``<hex digest><space><space or *><file name>`` (GNU) or ``<TAG> (<file name>) = <hex
digest>`` (BSD, ``--tag``); a name holding a backslash, a newline or a carriage return is written
after a leading backslash with those characters escaped as ``\\\\``, ``\\n`` and ``\\r``.
:class:`LineParser` reads both forms as coreutils' ``--check`` does (leading blanks, ``#``
comments, a digest and a name separated by one blank, as ``md5 -r`` writes them, when every line
is so, and a name that ends at its first NUL byte unless it is escaped);
:func:`parsed_groups` hands ``twocats sum --check`` the properly formatted lines of one checksum
file in groups and counts the rest in a :class:`CheckTally`.

Lines are read in pieces of :data:`MAX_LINE` bytes.  A longer line is read in full, as coreutils
reads it, if its start can begin a properly formatted line (its file name is then longer than
any path a system opens), up to :data:`MAX_LONG_LINE` bytes, beyond which the checksum file is
not read further (where coreutils would run out of memory); any other long line is counted as
improperly formatted, or skipped as a comment, without being held.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Final

from twocats.lanes.file_digests import stdin_reader

__all__ = [
    "CHECK_GROUP",
    "CHECK_GROUP_BYTES",
    "MAX_LINE",
    "MAX_LONG_LINE",
    "READ_ERROR",
    "CheckLine",
    "CheckTally",
    "Cut",
    "LineParser",
    "LineTooLongError",
    "check_file_lines",
    "escape_name",
    "parse_check_line",
    "parsed_groups",
    "read_lines",
    "unescape_name",
]

#: Checksum lines read and checked together: this many, or lines of this many bytes in all.
CHECK_GROUP: Final = 16384
CHECK_GROUP_BYTES: Final = 4 << 20

#: Checksum lines are read this many bytes at a time; a line up to this long (a digest and the
#: longest escaped path name fit many times) is read as it comes.
MAX_LINE: Final = 64 << 10

#: The longest checksum line read in full, when its start can begin a properly formatted line.
MAX_LONG_LINE: Final = 1 << 20

_ESCAPES: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r"}
_UNESCAPES: Final = {"\\\\": "\\", "\\n": "\n", "\\r": "\r"}
_HEX: Final = re.compile(rb"[0-9a-fA-F]*")
_BLANKS: Final = b" \t"

#: The message for a checksum file that was opened but could not be read to its end.
READ_ERROR: Final = "read error"


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


@dataclass(frozen=True)
class CheckLine:
    """One parsed line of a checksum file."""

    digest: bytes
    name: str


class LineParser:
    """Parses checksum lines of one digest size (and BSD lines of one tag) as coreutils does.

    One parser reads every checksum file of a run: as in coreutils, the first GNU line decides
    whether a single blank between digest and name (``md5 -r``) is accepted from then on.
    """

    def __init__(self, digest_size: int, tag: str | None = None) -> None:
        self._hex_size = 2 * digest_size
        self._tag = None if tag is None else tag.encode("ascii")
        #: -1 undecided, 0 GNU lines, 1 lines with one blank between digest and name.
        self._reversed = -1

    def can_begin(self, head: bytes) -> bool:
        """Return False if no properly formatted line starts with `head`, the start of a line."""
        i = len(head) - len(head.lstrip(_BLANKS))
        i += head[i : i + 1] == b"\\"
        if len(head) - i <= self._hex_size + (0 if self._tag is None else len(self._tag) + 1):
            return True
        if self._tag is not None and head.startswith(self._tag, i):
            i += len(self._tag)
            return head[i : i + 1] == b"(" or head[i : i + 2] == b" ("
        return _HEX.fullmatch(head[i : i + self._hex_size]) is not None and (
            head[i + self._hex_size] in _BLANKS
        )

    def parse(self, line: bytes) -> CheckLine | None:
        """Parse one line (without its newline); None if it is not properly formatted.

        As with coreutils, a name ends at its first NUL byte, and an escaped name holding one is
        not properly formatted.  This never raises, whatever the bytes.
        """
        i = len(line) - len(line.lstrip(_BLANKS))
        escaped = line[i : i + 1] == b"\\"
        i += escaped
        if self._tag is not None and line.startswith(self._tag, i):
            i += len(self._tag)
            i += line[i : i + 1] == b" "
            if line[i : i + 1] != b"(":
                return None
            return self._bsd(line[i + 1 :], escaped)
        if len(line) - i < self._hex_size + 2:
            return None
        hex_digest = line[i : i + self._hex_size]
        i += self._hex_size
        if line[i] not in _BLANKS or not _HEX.fullmatch(hex_digest):
            return None
        i += 1
        if len(line) - i == 1 or line[i] not in b" *":
            if self._reversed == 0:
                return None
            self._reversed = 1
        elif self._reversed != 1:
            self._reversed = 0
            i += 1
        return _checked(hex_digest, line[i:], escaped)

    def _bsd(self, rest: bytes, escaped: bool) -> CheckLine | None:
        """Parse ``<name>) = <digest>``, the name ending at the last ``)`` and what follows it at
        its first NUL byte."""
        end = rest.rfind(b")")
        if end < 0:
            return None
        tail = rest[end + 1 :].partition(b"\0")[0].lstrip(_BLANKS)
        if not tail.startswith(b"="):
            return None
        hex_digest = tail[1:].lstrip(_BLANKS)
        if len(hex_digest) != self._hex_size or not _HEX.fullmatch(hex_digest):
            return None
        return _checked(hex_digest, rest[:end], escaped)


def _checked(hex_digest: bytes, raw_name: bytes, escaped: bool) -> CheckLine | None:
    """The parsed line, its name unescaped if it was escaped, else up to its first NUL byte (as
    coreutils reads it, a C string); None for an unknown escape or an escaped NUL."""
    if escaped:
        unescaped = None if b"\0" in raw_name else unescape_name(os.fsdecode(raw_name))
        if unescaped is None:
            return None
        name = unescaped
    else:
        name = os.fsdecode(raw_name.partition(b"\0")[0])
    return CheckLine(bytes.fromhex(hex_digest.decode("ascii")), name)


def parse_check_line(line: bytes, digest_size: int) -> CheckLine | None:
    """Parse one GNU checksum line (without its newline); None if it is not properly formatted."""
    return LineParser(digest_size).parse(line)


@dataclass(frozen=True)
class Cut:
    """A line over MAX_LINE bytes that was not held: `head` is its first MAX_LINE bytes."""

    head: bytes


class LineTooLongError(Exception):
    """A line over MAX_LONG_LINE bytes whose start can begin a properly formatted line."""


class _Line:
    """The line being read, in pieces: held in full, or cut once it is over MAX_LINE bytes and
    its start fails `keep`."""

    def __init__(self, keep: Callable[[bytes], bool]) -> None:
        self._keep = keep
        self._pieces: list[bytes] = []
        self._size = 0
        self._cut: Cut | None = None
        self._kept = False

    @property
    def empty(self) -> bool:
        return not self._pieces and self._cut is None

    def add(self, piece: bytes) -> None:
        if self._cut is not None or not piece:
            return
        self._pieces.append(piece)
        self._size += len(piece)
        if self._size > MAX_LINE and not self._kept:
            head = b"".join(self._pieces)[:MAX_LINE]
            if not self._keep(head):
                self._pieces, self._cut = [], Cut(head)
                return
            self._kept = True
        if self._size > MAX_LONG_LINE:
            raise LineTooLongError

    def end(self) -> bytes | Cut:
        line = self._cut if self._cut is not None else b"".join(self._pieces)
        self._pieces, self._size, self._cut, self._kept = [], 0, None, False
        return line


def _always(head: bytes) -> bool:
    return True


def read_lines(
    read: Callable[[int], bytes], keep: Callable[[bytes], bool] = _always
) -> Iterator[bytes | Cut]:
    """Yield each line of a stream without its newline, reading MAX_LINE bytes at a time.

    A line over MAX_LINE bytes is held in full if `keep` is true of its first MAX_LINE bytes,
    and raises :class:`LineTooLongError` once it is over MAX_LONG_LINE; otherwise it is yielded
    as a :class:`Cut` and the rest of it is read past.
    """
    line = _Line(keep)
    while chunk := read(MAX_LINE):
        *ended, rest = chunk.split(b"\n")
        for piece in ended:
            if line.empty:
                # The whole line is in this read.
                yield piece
            else:
                line.add(piece)
                yield line.end()
        line.add(rest)
    if not line.empty:
        yield line.end()


def check_file_lines(
    sum_file: str, keep: Callable[[bytes], bool] = _always
) -> Iterator[bytes | Cut]:
    """The lines of one checksum file (``-``: standard input), read as :func:`read_lines` says.

    A file that cannot be opened raises its ``OSError``; one that fails later (a directory, say)
    raises an ``OSError`` whose message is coreutils' :data:`READ_ERROR`.
    """
    if sum_file == "-":
        read = stdin_reader()
    else:
        descriptor = os.open(sum_file, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        read = partial(os.read, descriptor)
    try:
        yield from read_lines(read, keep)
    except OSError as exc:
        raise OSError(exc.errno, READ_ERROR, sum_file) from None
    finally:
        if sum_file != "-":
            os.close(descriptor)


@dataclass
class CheckTally:
    """What ``--check`` has found in one checksum file."""

    improper: int = 0
    mismatched: int = 0
    unreadable: int = 0
    #: Properly formatted lines, their files checked or (``--ignore-missing``) missing.
    checked: int = 0
    matched: int = 0
    #: The first improperly formatted line, kept to suggest the algorithm it may belong to.
    first_improper: bytes | None = None


def parsed_groups(
    sum_file: str, parser: LineParser, tally: CheckTally
) -> Iterator[list[CheckLine | int]]:
    """The lines of one checksum file, CHECK_GROUP (or CHECK_GROUP_BYTES of names) at a time, in
    order: each properly formatted one, and the number of each other one, which ``tally``
    counts.

    Lines starting with ``#`` and empty lines are skipped; a file that cannot be read raises,
    and so does one with a line over MAX_LONG_LINE bytes that could be properly formatted (an
    ``OSError`` saying so, after the group of the lines before it).
    """
    group: list[CheckLine | int] = []
    group_bytes = 0
    number = 0
    lines = check_file_lines(sum_file, lambda head: head[:1] != b"#" and parser.can_begin(head))
    while True:
        try:
            raw = next(lines, None)
        except LineTooLongError:
            if group:
                yield group
            message = f"line {number + 1} is longer than {MAX_LONG_LINE >> 20} MiB: not read"
            raise OSError(errno.EFBIG, message, sum_file) from None
        if raw is None:
            break
        number += 1
        head = raw.head if isinstance(raw, Cut) else raw
        if head.startswith(b"#"):
            continue
        line = None if isinstance(raw, Cut) else raw[:-1] if raw.endswith(b"\r") else raw
        if line == b"":
            continue
        parsed = None if line is None else parser.parse(line)
        if parsed is None or (sum_file == "-" and parsed.name == "-"):
            tally.improper += 1
            if tally.first_improper is None:
                tally.first_improper = line
            group.append(number)
        else:
            group.append(parsed)
            group_bytes += len(parsed.name)
        if len(group) >= CHECK_GROUP or group_bytes >= CHECK_GROUP_BYTES:
            yield group
            group, group_bytes = [], 0
    if group:
        yield group
