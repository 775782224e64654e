"""The lines of a checksum file as GNU coreutils writes them, parsed and read in bounded pieces.

A line is ``<hex digest><space><space or *><file name>``; a name holding a backslash, a newline or
a carriage return is written after a leading backslash with those characters escaped as ``\\\\``,
``\\n`` and ``\\r``.  :func:`parsed_groups` hands ``twocats sum --check`` the properly formatted
lines in groups and counts the rest in a :class:`CheckTally`.
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
    "CheckLine",
    "CheckTally",
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
    """The lines of one checksum file (``-``: standard input), read in bounded pieces."""
    if sum_file == "-":
        yield from read_lines(stdin_reader())
        return
    descriptor = os.open(sum_file, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        yield from read_lines(partial(os.read, descriptor))
    finally:
        os.close(descriptor)


@dataclass
class CheckTally:
    """What ``--check`` has found so far."""

    improper: int = 0
    mismatched: int = 0
    unreadable: int = 0
    checked: int = 0
    unopened: int = 0
    #: The first improperly formatted line, kept to suggest the algorithm it may belong to.
    first_improper: bytes | None = None


def parsed_groups(
    sum_files: list[str],
    digest_size: int,
    tally: CheckTally,
    on_error: Callable[[str, OSError], None],
) -> Iterator[list[CheckLine]]:
    """The properly formatted lines of every checksum file, CHECK_GROUP (or CHECK_GROUP_BYTES
    of names) at a time; ``tally`` counts the others and ``on_error`` hears of unopened files."""
    group: list[CheckLine] = []
    group_bytes = 0
    for sum_file in sum_files:
        try:
            for raw in check_file_lines(sum_file):
                line = raw[:-1] if raw is not None and raw.endswith(b"\r") else raw
                if line == b"":
                    continue
                parsed = None if line is None else parse_check_line(line, digest_size)
                if line is None or parsed is None:
                    tally.improper += 1
                    if tally.first_improper is None:
                        tally.first_improper = line
                    continue
                group.append(parsed)
                group_bytes += len(line)
                if len(group) >= CHECK_GROUP or group_bytes >= CHECK_GROUP_BYTES:
                    yield group
                    group, group_bytes = [], 0
        except OSError as exc:
            tally.unopened += 1
            on_error(sum_file, exc)
    if group:
        yield group
