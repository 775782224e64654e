"""twocats sum reads every input with bounded memory: /dev/zero, FIFOs, huge sparse files and
hostile checksum files, each run in a subprocess under a memory limit."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.lanes import check_file, file_digests

#: Address-space limit of the subprocess: far below what reading an endless input whole takes.
MEMORY_LIMIT = 768 << 20

#: Peak resident memory a bounded run must stay under.
PEAK_LIMIT = 128 << 20

#: Peak resident memory of checking 400,000 lines (reading them whole would take several times
#: as much).
LINES_PEAK_LIMIT = 120 << 20

#: Seconds an endless input is read before the subprocess is stopped.
ENDLESS_SECONDS = 4.0

# The child reports the high-water mark of its own address space at exit.  (ru_maxrss from wait4
# would not do: a forked child starts with its parent's resident set, and the test process may be
# large.)  A child stopped by SIGKILL is measured by the parent just before the kill.
CHILD = """
import atexit, sys
def report():
    sys.stderr.write("\\npeak-kib %d\\n" % peak_kib("self"))
def peak_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
atexit.register(report)
from twocats.cli import main
main()
"""

COMMAND = [sys.executable, "-c", CHILD, "sum"]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _peak_kib(pid: int | str) -> int:
    """The VmHWM (peak resident set) of a live process, in KiB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def run_limited(
    args: list[str], *, seconds: float | None = None, feed: Path | None = None
) -> tuple[int | None, bytes, bytes, int]:
    """Run ``twocats sum ARGS`` under MEMORY_LIMIT; return (status, stdout, stderr, peak RSS).

    With ``seconds`` the run is stopped after that long and the status is None (it was still
    running); ``feed`` is a FIFO into which 256 MiB of zeros are written while the command reads.
    """
    process = subprocess.Popen(
        [*COMMAND, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limit_memory,
    )
    stdout, stderr = process.stdout, process.stderr
    assert stdout is not None
    assert stderr is not None
    outputs: dict[str, bytes] = {}
    readers = [
        threading.Thread(target=lambda: outputs.__setitem__("out", stdout.read())),
        threading.Thread(target=lambda: outputs.__setitem__("err", stderr.read())),
    ]
    if feed is not None:
        readers.append(threading.Thread(target=_feed_fifo, args=(feed,)))
    for reader in readers:
        reader.start()
    killed_peak: list[int] = []

    def stop() -> None:
        try:
            killed_peak.append(_peak_kib(process.pid))
        except OSError:
            return  # It has just ended by itself and reports its own peak.
        process.kill()

    stopper = threading.Timer(seconds or 120.0, stop)
    stopper.start()
    try:
        process.wait(timeout=(seconds or 120.0) + 60)
    finally:
        stopper.cancel()
    for reader in readers:
        reader.join()
    stdout.close()
    stderr.close()
    body, _, report = outputs["err"].rpartition(b"\npeak-kib ")
    if killed_peak:
        return None, outputs["out"], outputs["err"], killed_peak[0] << 10
    assert report, outputs["err"]
    return process.returncode, outputs["out"], body.rstrip(b"\n"), int(report) << 10


def _feed_fifo(path: Path) -> None:
    with path.open("wb") as fifo:
        for _ in range(256):
            fifo.write(bytes(1 << 20))


@pytest.mark.parametrize("algorithm", ["sha256", "blake2b"])
def test_dev_zero_is_streamed(algorithm: str) -> None:
    """`twocats sum /dev/zero` reads on in constant memory until stopped (no size from stat)."""
    status, stdout, stderr, peak = run_limited(
        ["-a", algorithm, "/dev/zero"], seconds=ENDLESS_SECONDS
    )
    assert status is None, stderr
    assert stdout == b""
    assert peak < PEAK_LIMIT


def test_fifo_is_streamed(tmp_path: Path) -> None:
    """A FIFO delivering 256 MiB is hashed in bounded memory, with the right digest."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    status, stdout, stderr, peak = run_limited([str(fifo)], feed=fifo)
    assert status == 0, stderr
    expected = hashlib.sha256()
    for _ in range(256):
        expected.update(bytes(1 << 20))
    assert stdout == f"{expected.hexdigest()}  {fifo}\n".encode()
    assert peak < PEAK_LIMIT


def test_check_file_naming_dev_zero(tmp_path: Path) -> None:
    """A hostile checksum file naming /dev/zero is checked in constant memory until stopped."""
    sums = tmp_path / "SUMS"
    sums.write_text(f"{'0' * 64}  /dev/zero\n")
    status, _, stderr, peak = run_limited(["--check", str(sums)], seconds=ENDLESS_SECONDS)
    assert status is None, stderr
    assert peak < PEAK_LIMIT


def test_check_file_that_is_dev_zero() -> None:
    """`sum --check /dev/zero` (one endless line) is read in constant memory until stopped."""
    status, _, stderr, peak = run_limited(["--check", "/dev/zero"], seconds=ENDLESS_SECONDS)
    assert status is None, stderr
    assert peak < PEAK_LIMIT


def test_endless_checksum_stream_through_a_fifo(tmp_path: Path) -> None:
    """400,000 valid lines through a FIFO are checked, and --json written, in bounded memory."""
    target = tmp_path / "small"
    target.write_bytes(b"checked many times")
    line = f"{hashlib.sha256(target.read_bytes()).hexdigest()}  {target}\n".encode()
    fifo = tmp_path / "sums"
    os.mkfifo(fifo)

    def write_lines() -> None:
        with fifo.open("wb") as handle:
            for _ in range(400):
                handle.write(line * 1000)

    writer = threading.Thread(target=write_lines)
    writer.start()
    status, stdout, stderr, peak = run_limited(["--check", "--json", str(fifo)])
    writer.join()
    assert status == 0, stderr
    document = json.loads(stdout)
    assert len(document["files"]) == 400_000
    assert document["mismatched"] == document["unreadable"] == 0
    assert peak < LINES_PEAK_LIMIT


def test_sparse_3_gib_file(tmp_path: Path) -> None:
    """A 3 GiB sparse file is hashed in bounded memory and gives hashlib's digest."""
    sparse = tmp_path / "sparse"
    with sparse.open("wb") as handle:
        handle.truncate(3 << 30)
    status, stdout, stderr, peak = run_limited(["-a", "blake2b", str(sparse)])
    assert status == 0, stderr
    expected = hashlib.blake2b()
    zeros = bytes(1 << 20)
    for _ in range(3 << 10):
        expected.update(zeros)
    assert stdout == f"{expected.hexdigest()}  {sparse}\n".encode()
    assert peak < PEAK_LIMIT


def test_lane_mode_without_streaming_caps_dev_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mode that reads files whole stops /dev/zero at its cap, checked while reading."""
    monkeypatch.setattr(file_digests, "WHOLE_FILE_LIMIT", 4 << 20)
    result = CliRunner().invoke(main, ["sum", "-a", "blake2sp", "/dev/zero"])
    assert result.exit_code == 1
    assert "/dev/zero: File too large: this algorithm has no streaming form" in result.stderr


@pytest.mark.parametrize("max_line", [80, 4096, 1 << 16])
def test_overlong_lines_are_skipped_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_line: int
) -> None:
    """A line over MAX_LINE counts as improper; the lines around it are still checked."""
    monkeypatch.chdir(tmp_path)
    # The line limit is also the read size: lines span reads, and long ones span several.
    monkeypatch.setattr(check_file, "MAX_LINE", max_line)
    Path("good").write_bytes(b"good")
    line = f"{hashlib.sha256(b'good').hexdigest()}  good".encode()
    long_line = b"x" * (3 * max_line + 5)
    Path("SUMS").write_bytes(line + b"\r\n" + long_line + b"\n" + line + b"\n" + long_line + line)
    result = CliRunner().invoke(main, ["sum", "--check", "SUMS"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "good: OK\ngood: OK\n"
    assert "2 lines are improperly formatted" in result.stderr


def test_endless_line_that_could_be_a_checksum_line_stops_at_the_longest(tmp_path: Path) -> None:
    """An endless `<digest>  aaa...` line through a FIFO is held up to MAX_LONG_LINE, then the
    file is left with one line and exit status 1, in bounded memory."""
    fifo = tmp_path / "sums"
    os.mkfifo(fifo)

    def write_line() -> None:
        with fifo.open("wb", buffering=0) as handle:
            handle.write(b"0" * 64 + b"  ")
            try:
                for _ in range(256):
                    handle.write(b"a" * (1 << 20))
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=write_line)
    writer.start()
    status, stdout, stderr, peak = run_limited(["--check", str(fifo)])
    writer.join()
    assert status == 1, stderr
    assert stdout == b""
    assert stderr == f"twocats sum: {fifo}: line 1 is longer than 1 MiB: not read".encode()
    assert peak < PEAK_LIMIT
