"""twocats sum: digests equal hashlib, and coreutils accept what it writes and vice versa."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from tests.support.environment import need
from twocats.cli import main
from twocats.cli.checksum import escape_name, parse_check_line, unescape_name
from twocats.lanes import file_digests
from twocats.lanes.file_digests import COREUTILS

# Lengths around the block boundaries of both hash families, and an empty file.
SIZES = [0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1000, 4096, 70000]

# The coreutils command that checks each algorithm's lines, where one exists.
TOOLS = {
    "sha256": ["sha256sum"],
    "sha512": ["sha512sum"],
    "blake2b": ["b2sum"],
    "blake2b-256": ["b2sum", "-l", "256"],
}


def paint(size: int, seed: int = 0) -> bytes:
    """Return `size` bytes of the i % 251 pattern, shifted by `seed`."""
    return bytes((i + seed) % 251 for i in range(size))


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Create files of many sizes in a fresh directory and make it the working directory."""
    monkeypatch.chdir(tmp_path)
    names = []
    for index, size in enumerate(SIZES):
        name = f"file {index:02d}.bin"
        Path(name).write_bytes(paint(size, index))
        names.append(name)
    return names


def run(*args: str, stdin: bytes | None = None) -> Result:
    """Invoke the CLI."""
    return CliRunner().invoke(main, list(args), input=stdin)


def hashlib_digest(algorithm: str, data: bytes) -> str:
    """Return the hex digest hashlib computes for `algorithm`."""
    hasher = COREUTILS[algorithm].new()
    hasher.update(data)
    return str(hasher.hexdigest())


@pytest.mark.parametrize("algorithm", sorted(COREUTILS))
def test_digests_equal_hashlib(files: list[str], algorithm: str) -> None:
    """Every line is '<hashlib digest>  <name>' in command-line order."""
    result = run("sum", "-a", algorithm, *files)
    assert result.exit_code == 0, result.output
    expected = "".join(
        f"{hashlib_digest(algorithm, Path(name).read_bytes())}  {name}\n" for name in files
    )
    assert result.stdout == expected


@pytest.mark.parametrize("algorithm", sorted(TOOLS))
def test_coreutils_accept_our_lines(files: list[str], algorithm: str) -> None:
    """sha256sum -c (sha512sum, b2sum, b2sum -l 256) accepts every line twocats sum writes."""
    tool = TOOLS[algorithm]
    if shutil.which(tool[0]) is None:
        need(f"coreutils' {tool[0]}")
    Path("SUMS").write_bytes(run("sum", "-a", algorithm, *files).stdout_bytes)
    done = subprocess.run([*tool, "--strict", "-c", "SUMS"], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(b": OK\n") == len(files)


@pytest.mark.parametrize("algorithm", sorted(TOOLS))
def test_we_check_coreutils_lines(files: list[str], algorithm: str) -> None:
    """twocats sum --check accepts what the coreutils tool writes."""
    tool = TOOLS[algorithm]
    if shutil.which(tool[0]) is None:
        need(f"coreutils' {tool[0]}")
    sums = subprocess.run([*tool, *files], capture_output=True, check=True).stdout
    Path("SUMS").write_bytes(sums)
    result = run("sum", "-a", algorithm, "--check", "SUMS")
    assert result.exit_code == 0, result.output
    assert result.stdout == "".join(f"{name}: OK\n" for name in files)


def test_awkward_names_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names with backslashes and newlines are escaped the coreutils way, in both directions."""
    monkeypatch.chdir(tmp_path)
    names = ["back\\slash", "new\nline", "plain name", "star*", "carriage\rreturn"]
    for index, name in enumerate(names):
        Path(name).write_bytes(paint(100, index))
    ours = run("sum", *names).stdout_bytes
    assert ours.startswith(b"\\")
    Path("SUMS").write_bytes(ours)
    checked = run("sum", "--check", "SUMS")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.count(": OK\n") == len(names)
    if shutil.which("sha256sum") is None:
        need("coreutils' sha256sum")
    done = subprocess.run(["sha256sum", "--strict", "-c", "SUMS"], capture_output=True)
    assert done.returncode == 0, done.stderr
    Path("THEIRS").write_bytes(subprocess.run(["sha256sum", *names], capture_output=True).stdout)
    theirs = run("sum", "--check", "THEIRS")
    assert theirs.exit_code == 0, theirs.output
    assert theirs.stdout == checked.stdout


def test_check_reports_mismatch_and_missing(files: list[str]) -> None:
    """A changed file is FAILED, a missing one FAILED open or read, and the exit status is 1."""
    Path("SUMS").write_bytes(run("sum", *files[:3]).stdout_bytes)
    Path(files[1]).write_bytes(b"changed")
    os.remove(files[2])
    result = run("sum", "--check", "SUMS")
    assert result.exit_code == 1
    assert result.stdout == (
        f"{files[0]}: OK\n{files[1]}: FAILED\n{files[2]}: FAILED open or read\n"
    )
    assert "1 computed checksum did NOT match" in result.stderr
    assert "1 listed file could not be read" in result.stderr
    quiet = run("sum", "--check", "--quiet", "SUMS")
    assert f"{files[0]}: OK" not in quiet.stdout


def test_check_improper_lines(files: list[str]) -> None:
    """Improperly formatted lines are counted; a file with none that parse is an error."""
    good = run("sum", files[0]).stdout_bytes
    Path("SUMS").write_bytes(b"garbage\n" + good + b"abc  short-digest\n")
    result = run("sum", "--check", "SUMS")
    assert result.exit_code == 0
    assert "2 lines are improperly formatted" in result.stderr
    Path("BAD").write_bytes(b"nothing useful\n")
    bad = run("sum", "--check", "BAD")
    assert bad.exit_code == 1
    assert bad.stderr == "twocats sum: BAD: no properly formatted checksum lines found\n"
    assert "Traceback" not in bad.output


def test_missing_file_and_directory(files: list[str]) -> None:
    """Unreadable arguments are reported on stderr, the others still hashed, and the status is 1."""
    Path("adir").mkdir()
    result = run("sum", files[0], "missing.bin", "adir")
    assert result.exit_code == 1
    assert result.stdout.count("\n") == 1
    assert "missing.bin: No such file or directory" in result.stderr
    assert "adir: Is a directory" in result.stderr


def test_large_files_are_streamed(files: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Files above the batch limit go through streaming hashlib and give the same digests."""
    whole = run("sum", *files).stdout
    monkeypatch.setattr(file_digests, "SMALL_FILE", 100)
    monkeypatch.setattr(file_digests, "CHUNK", 7)
    monkeypatch.setattr(file_digests, "BATCH_BYTES", 500)
    assert run("sum", *files).stdout == whole


def test_stdin(files: list[str]) -> None:
    """'-' (or no file at all) hashes standard input."""
    data = paint(5000)
    expected = f"{hashlib.sha256(data).hexdigest()}  -\n"
    assert run("sum", "-", stdin=data).stdout == expected
    assert run("sum", stdin=data).stdout == expected


def test_json(files: list[str]) -> None:
    """--json gives one document listing every file's digest or error."""
    result = run("sum", "--json", files[0], "missing.bin")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["files"][0] == {
        "name": files[0],
        "digest": hashlib.sha256(Path(files[0]).read_bytes()).hexdigest(),
    }
    assert document["files"][1]["name"] == "missing.bin"
    Path("SUMS").write_bytes(run("sum", files[0]).stdout_bytes)
    checked = json.loads(run("sum", "--check", "--json", "SUMS").stdout)
    assert checked["files"] == [{"name": files[0], "status": "OK"}]
    assert checked["mismatched"] == 0


def test_many_files_share_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More files than lanes, of mixed lengths, all come out right and in order."""
    monkeypatch.chdir(tmp_path)
    names = []
    for index in range(67):
        name = f"f{index}"
        Path(name).write_bytes(paint((index * 37) % 300, index))
        names.append(name)
    result = run("sum", "-a", "blake2s", *names)
    lines = result.stdout.splitlines()
    assert lines == [
        f"{hashlib.blake2s(Path(name).read_bytes()).hexdigest()}  {name}" for name in names
    ]


@given(st.text(max_size=40))
def test_escape_round_trip(name: str) -> None:
    """Escaping and unescaping a name gives it back."""
    prefix, escaped = escape_name(name)
    assert "\n" not in escaped
    assert (unescape_name(escaped) if prefix else escaped) == name


@given(st.binary(max_size=200))
def test_parse_check_line_never_raises(line: bytes) -> None:
    """Any bytes either parse into a digest and name or are reported as improper (None)."""
    parsed = parse_check_line(line, 32)
    if parsed is not None:
        assert len(parsed.digest) == 32
