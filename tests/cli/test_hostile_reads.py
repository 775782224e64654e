"""Every file and stream the CLI reads is capped while reading: /dev/zero, a FIFO, a sparse file.

Each reader runs in a real ``twocats`` process under an address-space limit far below what reading
the input whole would take, and must refuse it with one ``Error:`` line and exit status 2.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import resource
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats import _bounded_io
from twocats.cli import main
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST

#: The address-space limit of each run: enough for Python, numpy and numba, far from 2 GiB.
ADDRESS_SPACE: int = 1536 << 20

#: Arguments that need no work beyond reading (the cheapest parameters).
TINY = ["--profile", "cheapest", "--insecure"]

SECRET_CAP = "longer than the limit of 1 MiB"


def _readers(stored: str) -> dict[str, tuple[list[str], str]]:
    """Every reader: its arguments with PATH standing for the input, and its expected error."""
    return {
        "hash --pepper-file": (
            ["hash", *TINY, "--pepper-file", "PATH", "--password-stdin"],
            f"Error: cannot read the pepper file PATH: {SECRET_CAP}",
        ),
        "verify --pepper-file": (
            ["verify", stored, "--pepper-file", "PATH", "--password-stdin"],
            f"Error: cannot read the pepper file PATH: {SECRET_CAP}",
        ),
        "derive --salt-file": (
            ["derive", *TINY, "--salt-file", "PATH", "--password-stdin"],
            f"Error: cannot read the salt file PATH: {SECRET_CAP}",
        ),
        "derive --data-file": (
            ["derive", *TINY, "--salt", "salty salt", "--data-file", "PATH", "--password-stdin"],
            f"Error: cannot read the data file PATH: {SECRET_CAP}",
        ),
        "selftest --vectors": (
            ["selftest", "--vectors", "PATH"],
            "Error: PATH: cannot be read (longer than the limit of 64 MiB)",
        ),
    }


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _twocats(args: list[str], stdin: int | bytes) -> subprocess.CompletedProcess[bytes]:
    """Run the installed ``twocats`` under the address-space limit."""
    program = shutil.which("twocats")
    assert program is not None
    keywords: dict[str, object] = {"input": stdin} if isinstance(stdin, bytes) else {"stdin": stdin}
    return subprocess.run(
        [program, *args],
        capture_output=True,
        preexec_fn=_limit_memory,
        timeout=300,
        check=False,
        **keywords,  # type: ignore[arg-type]
    )


@contextlib.contextmanager
def _endless_fifo(path: Path) -> Iterator[Path]:
    """A FIFO at `path` that a thread fills with zeros until its reader goes away."""
    os.mkfifo(path)

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), open(path, "wb") as pipe:
            while True:
                pipe.write(bytes(1 << 16))

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        if writer.is_alive():
            # Nobody opened the FIFO: open it once so that the writer's open returns.
            with contextlib.suppress(OSError), open(path, "rb"):
                pass
        writer.join(timeout=30)


@contextlib.contextmanager
def _source(kind: str, tmp_path: Path) -> Iterator[Path]:
    """The input of one kind: /dev/zero, an endless FIFO or a 2 GiB sparse file."""
    if kind == "/dev/zero":
        yield Path("/dev/zero")
    elif kind == "fifo":
        with _endless_fifo(tmp_path / "fifo") as path:
            yield path
    else:
        path = tmp_path / "sparse.bin"
        with path.open("wb") as handle:
            handle.truncate(2 << 30)
        yield path


KINDS = ("/dev/zero", "fifo", "sparse 2 GiB")


@pytest.fixture(scope="module")
def stored() -> str:
    """A stored hash at the cheapest parameters."""
    return PasswordHasher.from_params(CHEAPEST).hash("pw")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "reader",
    [
        "hash --pepper-file",
        "verify --pepper-file",
        "derive --salt-file",
        "derive --data-file",
        "selftest --vectors",
    ],
)
def test_every_file_reader_refuses_endless_input(
    reader: str, kind: str, tmp_path: Path, stored: str
) -> None:
    """Each file reader refuses the input at its cap, within the memory limit, exit status 2."""
    args, expected = _readers(stored)[reader]
    with _source(kind, tmp_path) as path:
        done = _twocats([str(path) if a == "PATH" else a for a in args], b"pw\n")
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode().strip().splitlines()[-1] == expected.replace("PATH", str(path))


@pytest.mark.parametrize("kind", KINDS)
def test_password_stdin_refuses_an_endless_line(kind: str, tmp_path: Path) -> None:
    """--password-stdin reads at most 1 MiB of a line that never ends, within the memory limit."""
    with _source(kind, tmp_path) as path, path.open("rb") as stdin:
        done = _twocats(["hash", *TINY, "--password-stdin"], stdin.fileno())
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode().strip() == (
        "Error: the password on standard input is longer than the limit of 1 MiB"
    )


def test_the_bounded_reader_stops_one_chunk_past_the_cap() -> None:
    """read_bounded asks for no more than the cap plus one byte of an endless stream."""
    stream = io.BytesIO(bytes(1000))
    with pytest.raises(OSError, match="longer than the limit of 100 bytes") as caught:
        _bounded_io.read_bounded(stream, 100, "zeros")
    assert stream.tell() == 101
    assert (caught.value.errno, caught.value.filename) == (errno.EFBIG, "zeros")


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_password_stdin_takes_exactly_the_cap(ending: bytes) -> None:
    """A password of exactly 1 MiB is read whole, whatever its line ending; one byte more is not."""
    cap = 1 << 20
    at_cap = CliRunner().invoke(
        main, ["hash", *TINY, "--password-stdin"], input=b"p" * cap + ending
    )
    assert at_cap.exit_code == 0, at_cap.output
    assert PasswordHasher.from_params(CHEAPEST).verify(at_cap.stdout.strip(), b"p" * cap)
    over = CliRunner().invoke(
        main, ["hash", *TINY, "--password-stdin"], input=b"p" * (cap + 1) + ending
    )
    assert over.exit_code == 2
    assert (
        over.stderr == "Error: the password on standard input is longer than the limit of 1 MiB\n"
    )
