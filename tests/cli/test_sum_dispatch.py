"""twocats sum chooses hashlib or the lanes per job: small jobs never import numba."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.exceptions import BackendError
from twocats.lanes import file_digests as engine
from twocats.lanes.file_digests import LaneLoader, Slices, file_digests, method_for

# Runs `twocats sum` in a fresh interpreter, then reports whether numba and numpy were imported.
PROBE = """
import sys
from twocats.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    assert not exit.code, exit.code
print("numba" in sys.modules, "numpy" in sys.modules, file=sys.stderr)
"""


def probe(*args: str) -> tuple[bytes, str]:
    """Run the CLI in a subprocess; return its output and the modules report."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "sum", *args], capture_output=True, check=True
    )
    return done.stdout, done.stderr.decode().strip()


@pytest.fixture
def few(tmp_path: Path) -> list[str]:
    """A handful of small files."""
    names = []
    for index in range(5):
        path = tmp_path / f"f{index}"
        path.write_bytes(bytes(range(index * 40)))
        names.append(str(path))
    return names


@pytest.mark.parametrize("algorithm", ["sha256", "blake2b", "blake2s", "sha512"])
def test_small_job_imports_neither_numba_nor_numpy(few: list[str], algorithm: str) -> None:
    """A few files are hashed by hashlib alone: no numba import, no kernel load."""
    stdout, modules = probe("-a", algorithm, *few)
    assert modules == "False False"
    expected = [f"{hashlib.new(algorithm, Path(n).read_bytes()).hexdigest()}  {n}" for n in few]
    assert stdout.decode().splitlines() == expected


def test_backend_option_uses_the_lanes(few: list[str]) -> None:
    """--backend asks for the lane kernels from the first batch."""
    stdout, modules = probe("--backend", "simd", *few)
    assert modules == "True True"
    assert stdout.decode().split()[0] == hashlib.sha256(Path(few[0]).read_bytes()).hexdigest()


class RecordingLoader(LaneLoader):
    """The real loader, recording whether it was started and how many batches it hashed."""

    started = False
    batches = 0

    def start(self) -> None:
        """Record the start and load synchronously, so that the next batch goes to lanes."""
        type(self).started = True
        self._load()

    def hash(self, messages: Slices) -> list[bytes]:
        """Count and hash in lanes."""
        type(self).batches += 1
        return super().hash(messages)


@pytest.mark.parametrize(("threshold", "lanes_used"), [(1 << 40, False), (1, True)])
def test_lanes_are_loaded_when_the_job_repays_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int, lanes_used: bool
) -> None:
    """The extrapolated job size against LANES_PAY_BYTES decides; digests are right either way."""
    monkeypatch.setattr(engine, "LANES_PAY_BYTES", {"blake2s": threshold})
    monkeypatch.setattr(engine, "BATCH_FILES", 8)
    monkeypatch.setattr(RecordingLoader, "started", False)
    monkeypatch.setattr(RecordingLoader, "batches", 0)
    names = []
    for index in range(40):
        path = tmp_path / f"f{index}"
        path.write_bytes(bytes((i * index) % 256 for i in range(index * 13)))
        names.append(str(path))
    loader = RecordingLoader(method_for("blake2s"), None)
    got = dict(file_digests(names, "blake2s", loader=loader))
    assert got == {name: hashlib.blake2s(Path(name).read_bytes()).digest() for name in names}
    assert RecordingLoader.started is lanes_used
    # The load itself hashes one empty message; the batches after the first go to the lanes.
    assert (RecordingLoader.batches > 1) is lanes_used


@pytest.mark.parametrize("built", [False, True])
def test_a_scheduler_built_ahead_of_time_takes_the_lower_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built: bool
) -> None:
    """With the scheduler's artefact the lanes start at LANES_PAY_BYTES_BUILT, else not."""
    monkeypatch.setattr(engine, "LANES_PAY_BYTES", {"blake2s": 1 << 40})
    monkeypatch.setattr(engine, "LANES_PAY_BYTES_BUILT", {"blake2s": 1})
    monkeypatch.setattr(engine, "BATCH_FILES", 8)
    monkeypatch.setattr(RecordingLoader, "started", False)
    monkeypatch.setattr(RecordingLoader, "built", lambda self: built)
    names = []
    for index in range(40):
        path = tmp_path / f"f{index}"
        path.write_bytes(bytes((i * index) % 256 for i in range(index * 13)))
        names.append(str(path))
    got = dict(file_digests(names, "blake2s", loader=RecordingLoader(method_for("blake2s"), None)))
    assert got == {name: hashlib.blake2s(Path(name).read_bytes()).digest() for name in names}
    assert RecordingLoader.started is built


class BrokenLoader(LaneLoader):
    """A loader whose kernels cannot be loaded (as without numba, or with a broken cache)."""

    def hash(self, messages: Slices) -> list[bytes]:
        """Fail as a missing backend would."""
        raise BackendError("the lane kernels are not available here")


def test_failed_lane_loading_leaves_hashlib_in_charge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the background load fails, every batch is still hashed, by hashlib, with no error."""
    monkeypatch.setattr(engine, "LANES_PAY_BYTES", {"sha256": 1})
    monkeypatch.setattr(engine, "BATCH_FILES", 2)
    names = []
    for index in range(9):
        path = tmp_path / f"f{index}"
        path.write_bytes(bytes(index * 100))
        names.append(str(path))
    loader = BrokenLoader(method_for("sha256"), None)
    got = dict(file_digests(names, "sha256", loader=loader))
    loader.start()
    loader._load()
    assert not loader.ready()
    assert got == {name: hashlib.sha256(Path(name).read_bytes()).digest() for name in names}


def test_options_anywhere_and_double_dash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Options may follow the files, `--` makes the rest file names, values attach either way."""
    monkeypatch.chdir(tmp_path)
    Path("-a").write_bytes(b"a file named -a")
    Path("plain").write_bytes(b"plain")
    blake = hashlib.blake2b(b"plain").hexdigest()
    runner = CliRunner()
    assert runner.invoke(main, ["sum", "plain", "-a", "blake2b"]).stdout == f"{blake}  plain\n"
    assert runner.invoke(main, ["sum", "--algorithm=blake2b", "plain"]).stdout.startswith(blake)
    assert runner.invoke(main, ["sum", "-ablake2b", "plain"]).stdout.startswith(blake)
    dashed = runner.invoke(main, ["sum", "--", "-a", "plain"])
    assert dashed.stdout.splitlines()[0] == f"{hashlib.sha256(b'a file named -a').hexdigest()}  -a"
    Path("SUMS").write_text(f"{blake}  plain\n")
    assert runner.invoke(main, ["sum", "-ca", "blake2b", "SUMS"]).stdout == "plain: OK\n"
    missing = runner.invoke(main, ["sum", "plain", "-a"])
    assert missing.exit_code == 2
    assert "requires an argument" in missing.stderr


def test_background_loader_hands_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real loader, started by a large-looking job, loads on its thread; digests stay right
    before, during and after the hand-over."""
    monkeypatch.setattr(engine, "LANES_PAY_BYTES", {"blake2b": 1})
    monkeypatch.setattr(engine, "BATCH_FILES", 3)
    names = []
    for index in range(30):
        path = tmp_path / f"f{index}"
        path.write_bytes(bytes((i + index) % 256 for i in range(2048 + index * 7)))
        names.append(str(path))
    expected = {name: hashlib.blake2b(Path(name).read_bytes()).digest() for name in names}
    loader = LaneLoader(method_for("blake2b"), None)
    assert dict(file_digests(names, "blake2b", loader=loader)) == expected
    # The load takes a second or so; poll for it (a generous bound, not a timing assertion).
    for _ in range(1200):
        if loader.ready():
            break
        time.sleep(0.1)
    assert loader.ready()
    assert dict(file_digests(names, "blake2b", loader=loader)) == expected
