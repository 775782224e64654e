"""The lines of a checksum file as GNU coreutils writes them, parsed and read in bounded pieces.

A line is ``<hex digest><space><space or *><file name>`` (GNU) or ``<TAG> (<file name>) = <hex
digest>`` (BSD, ``--tag``); a name holding a backslash, a newline or a carriage return is written
after a leading backslash with those characters escaped as ``\\\\``, ``\\n`` and ``\\r``.
:class:`LineParser` reads both forms as coreutils' ``--check`` does (leading blanks, ``#``
comments, a digest and a name separated by one blank, as ``md5 -r`` writes them, when every line
is so); :func:`parsed_groups` hands ``twocats sum --check`` the properly formatted lines of one
checksum file in groups and counts the rest in a :class:`CheckTally`.
"""

from __future__ import annotations

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
    "READ_ERROR",
    "CheckLine",
    "CheckTally",
    "LineParser",
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

#: Checksum lines longer than this (a digest and the longest escaped path name fit many times)
#: are improperly formatted; they are skipped without being held in memory.
MAX_LINE: Final = 64 << 10

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

    def parse(self, line: bytes) -> CheckLine | None:
        """Parse one line (without its newline); None if it is not properly formatted.

        A name holding a NUL byte is not properly formatted: no file can have such a name.  This
        never raises, whatever the bytes.
        """
        if b"\0" in line:
            return None
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
        """Parse ``<name>) = <digest>``, the name ending at the last ``)``."""
        end = rest.rfind(b")")
        if end < 0:
            return None
        tail = rest[end + 1 :].lstrip(_BLANKS)
        if not tail.startswith(b"="):
            return None
        hex_digest = tail[1:].lstrip(_BLANKS)
        if len(hex_digest) != self._hex_size or not _HEX.fullmatch(hex_digest):
            return None
        return _checked(hex_digest, rest[:end], escaped)


def _checked(hex_digest: bytes, raw_name: bytes, escaped: bool) -> CheckLine | None:
    """The parsed line, its name unescaped if it was escaped; None for an unknown escape."""
    name = os.fsdecode(raw_name)
    if escaped:
        unescaped = unescape_name(name)
        if unescaped is None:
            return None
        name = unescaped
    return CheckLine(bytes.fromhex(hex_digest.decode("ascii")), name)


def parse_check_line(line: bytes, digest_size: int) -> CheckLine | None:
    """Parse one GNU checksum line (without its newline); None if it is not properly formatted."""
    return LineParser(digest_size).parse(line)


def read_lines(read: Callable[[int], bytes]) -> Iterator[bytes | None]:
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


def check_file_lines(sum_file: str) -> Iterator[bytes | None]:
    """The lines of one checksum file (``-``: standard input), read in bounded pieces.

    A file that cannot be opened raises its ``OSError``; one that fails later (a directory, say)
    raises an ``OSError`` whose message is coreutils' :data:`READ_ERROR`.
    """
    if sum_file == "-":
        read = stdin_reader()
    else:
        descriptor = os.open(sum_file, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        read = partial(os.read, descriptor)
    try:
        yield from read_lines(read)
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
    sum_file: str,
    parser: LineParser,
    tally: CheckTally,
    on_improper: Callable[[int], None],
) -> Iterator[list[CheckLine]]:
    """The properly formatted lines of one checksum file, CHECK_GROUP (or CHECK_GROUP_BYTES of
    names) at a time; ``tally`` counts the others and ``on_improper`` hears their line numbers.

    Lines starting with ``#`` and empty lines are skipped; a file that cannot be read raises.
    """
    group: list[CheckLine] = []
    group_bytes = 0
    for number, raw in enumerate(check_file_lines(sum_file), start=1):
        if raw is not None and raw.startswith(b"#"):
            continue
        line = raw[:-1] if raw is not None and raw.endswith(b"\r") else raw
        if line == b"":
            continue
        parsed = None if line is None else parser.parse(line)
        if parsed is None or (sum_file == "-" and parsed.name == "-"):
            tally.improper += 1
            if tally.first_improper is None:
                tally.first_improper = line
            on_improper(number)
            continue
        group.append(parsed)
        group_bytes += len(parsed.name)
        if len(group) >= CHECK_GROUP or group_bytes >= CHECK_GROUP_BYTES:
            yield group
            group, group_bytes = [], 0
    if group:
        yield group
