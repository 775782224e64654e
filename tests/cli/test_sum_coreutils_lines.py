"""twocats sum --check against the real sha256sum and b2sum on odd checksum lines: lines over
64 KiB, -w line numbers after them, NUL bytes in names and digests.  Standard output, standard
error and the exit status must be the same bytes, from a file and from standard input."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.lanes.check_file import MAX_LINE, MAX_LONG_LINE

#: The coreutils tools print names from their own locale; this one keeps UTF-8 names readable.
COREUTILS_ENV = {**os.environ, "LC_ALL": "C.UTF-8"}

pytestmark = pytest.mark.skipif(
    shutil.which("sha256sum") is None or shutil.which("b2sum") is None,
    reason="sha256sum and b2sum (GNU coreutils) are not installed",
)

EMPTY = hashlib.sha256(b"").hexdigest().encode()
B2_EMPTY = hashlib.blake2b(b"").hexdigest().encode()
#: Names longer than any path: over MAX_LINE, and over two reads of MAX_LINE.
LONG = b"a" * (MAX_LINE + 4465)
LONGER = b"b" * (3 * MAX_LINE + 5)
#: A file name with characters coreutils escapes or quotes (a carriage return twocats quotes where
#: coreutils prints it: see twocats.cli._sum_output).
ODD = b"it's a \\ name\nwith all:\t$"
ESCAPED_ODD = ODD.replace(b"\\", b"\\\\").replace(b"\n", b"\\n")

#: Checksum files (of SHA-256 lines), by what they hold.  The files "e" and "ab" exist, empty.
CASES: dict[str, bytes] = {
    "a long name": EMPTY + b"  " + LONG + b"\n" + EMPTY + b"  e\n",
    "a longer name": EMPTY + b"  " + LONGER + b"\n",
    "a long name, no newline at the end": EMPTY + b"  e\n" + EMPTY + b"  " + LONG,
    "a long name and a carriage return": EMPTY + b"  " + LONG + b"\r\n",
    "a long name, quoted in messages": EMPTY + b"  " + LONG + b" it's\n",
    "a long escaped name": b"\\" + EMPTY + b"  " + LONG + b"\\n\\\\\n",
    "a long name, a bad escape": b"\\" + EMPTY + b"  " + LONG + b"\\q\n" + EMPTY + b"  e\n",
    "a long escaped name, a NUL": b"\\" + EMPTY + b"  " + LONG + b"\0\n" + EMPTY + b"  e\n",
    "a long name after a NUL": EMPTY + b"  e\0" + LONG + b"\n",
    "a long BSD name": b"SHA256 (" + LONG + b") = " + EMPTY + b"\n",
    "a long BSD line, blanks": b"SHA256 (e) =" + b" " * (2 * MAX_LINE) + EMPTY + b"\n",
    "long leading blanks": b" " * (2 * MAX_LINE) + EMPTY + b"  e\n",
    "only blanks, long": b" " * (2 * MAX_LINE) + b"\n" + EMPTY + b"  e\n",
    "a long comment": b"#" + LONGER + b"\n" + EMPTY + b"  e\n",
    "long garbage then lines": b"x" * (3 * MAX_LINE + 5) + b"\nnot a line\n" + EMPTY + b"  e\n",
    "long NULs then a bad line": b"\0" * (3 * MAX_LINE) + b"\n" + EMPTY + b"  ?\nbad\n",
    "a long improper digest": EMPTY[:-1] + b"x  " + LONG + b"\nbad\n" + EMPTY + b"  e\n",
    "a NUL in a name": EMPTY + b"  ab\0cd\n" + EMPTY + b"  e\n",
    "a NUL ending a name": EMPTY + b"  e\0\n",
    "a NUL for a name": EMPTY + b"  \0\n",
    "one blank, then a NUL": EMPTY + b" \0ab\n",
    "a NUL in a digest": EMPTY[:10] + b"\0" + EMPTY[11:] + b"  e\n" + EMPTY + b"  e\n",
    "a NUL first": b"\0" + EMPTY + b"  e\n" + EMPTY + b"  e\n",
    "a NUL in an escaped name": b"\\" + EMPTY + b"  e\0x\n" + EMPTY + b"  e\n",
    "a NUL in a BSD name": b"SHA256 (e\0x) = " + EMPTY + b"\n",
    "a NUL after a BSD digest": b"SHA256 (e) = " + EMPTY + b"\0\n" + EMPTY + b"  e\n",
    "a NUL in an escaped BSD name": b"\\SHA256 (e\0x) = " + EMPTY + b"\n" + EMPTY + b"  e\n",
    "an odd name": b"\\" + EMPTY + b"  " + ESCAPED_ODD + b"\n",
}  # fmt: skip

#: The options of each run of each file.
RUNS = [["-w"], ["--status"], ["--quiet", "--strict"], ["--ignore-missing", "-w"]]


def _same(
    tool: str, args: list[str], stdin: bytes | None = None, algorithm: str = "sha256"
) -> None:
    """twocats sum -a `algorithm` and the coreutils tool give the same bytes and exit status."""
    done = subprocess.run(
        [tool, *args], input=stdin, capture_output=True, env=COREUTILS_ENV, check=False
    )
    mine = CliRunner().invoke(main, ["sum", "-a", algorithm, *args], input=stdin)
    name = tool.encode()
    assert mine.stdout_bytes == done.stdout
    assert mine.stderr_bytes == done.stderr.replace(name + b": ", b"twocats sum: ")
    assert mine.exit_code == done.returncode


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with the empty files "e" and "ab"."""
    monkeypatch.chdir(tmp_path)
    for name in ("e", "ab"):
        (tmp_path / name).write_bytes(b"")
    return tmp_path


@pytest.mark.parametrize("lines", CASES.values(), ids=CASES.keys())
def test_check_equals_sha256sum(folder: Path, lines: bytes) -> None:
    """Each odd checksum file is checked as sha256sum checks it, from a file and from stdin."""
    (folder / "SUMS").write_bytes(lines)
    for options in RUNS:
        _same("sha256sum", ["--check", *options, "SUMS"])
    _same("sha256sum", ["--check", "-w", "-"], stdin=lines)


def test_check_of_long_lines_equals_b2sum(folder: Path) -> None:
    """Long and NUL-holding BLAKE2b lines, GNU and BSD, are checked as b2sum checks them."""
    (folder / "SUMS").write_bytes(
        B2_EMPTY + b"  " + LONG + b"\n"
        + b"BLAKE2b (" + LONGER + b") = " + B2_EMPTY + b"\n"
        + B2_EMPTY + b"  e\0" + LONG + b"\n"
        + b"#" + LONG + b"\n"
        + b"x" * (2 * MAX_LINE) + b"\n"
        + B2_EMPTY + b"  ab\n"
    )  # fmt: skip
    for options in RUNS:
        _same("b2sum", ["--check", *options, "SUMS"], algorithm="blake2b")


def test_warn_numbers_every_line_after_long_ones(folder: Path) -> None:
    """-w names each improperly formatted line by its number after lines of every length."""
    lines = []
    for length in (10, MAX_LINE - 1, MAX_LINE, MAX_LINE + 1, 2 * MAX_LINE, 5 * MAX_LINE + 3):
        lines += [b"y" * length, b"bad " + str(length).encode(), EMPTY + b"  e"]
    (folder / "SUMS").write_bytes(b"\n".join(lines) + b"\n")
    _same("sha256sum", ["--check", "-w", "SUMS"])
    result = CliRunner().invoke(main, ["sum", "--check", "-w", "SUMS"])
    warnings = [line for line in result.stderr.splitlines() if line.endswith("checksum line")]
    numbers = [line.split(": ")[2] for line in warnings]
    assert numbers == [
        str(number) for number in range(1, 3 * 6, 3) for number in (number, number + 1)
    ]


def test_a_line_over_the_longest_read_stops_the_check(folder: Path) -> None:
    """A line over MAX_LONG_LINE that could be properly formatted is not held: the file is
    reported and left, exit status 1 (where coreutils would hold it all, or run out of memory);
    a comment or an improper line as long are read past."""
    (folder / "SUMS").write_bytes(
        b"#" * (MAX_LONG_LINE + 1) + b"\n"
        + b"z" * (MAX_LONG_LINE + 1) + b"\n"
        + EMPTY + b"  e\n"
        + EMPTY + b"  " + b"c" * MAX_LONG_LINE + b"\n"
    )  # fmt: skip
    result = CliRunner().invoke(main, ["sum", "--check", "SUMS"])
    assert result.exit_code == 1
    assert result.stdout == "e: OK\n"
    assert result.stderr == "twocats sum: SUMS: line 4 is longer than 1 MiB: not read\n"
