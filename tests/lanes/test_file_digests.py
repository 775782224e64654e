"""The file engine of ``twocats sum``: jobs on worker threads, standard input, and the files it
hands to hashlib rather than hold the lanes up with."""

from __future__ import annotations

import hashlib
import io
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from twocats.lanes import file_digests as engine
from twocats.lanes.file_digests import LaneLoader, Slices, _outlasting, file_digests, method_for
from twocats.lanes.registry import ALGORITHMS


def test_outlasting_hands_over_only_what_holds_the_lanes_up() -> None:
    """One message far longer than the others' share of the lanes goes to hashlib; equal or
    short messages, and fewer messages than lanes, stay in the lanes."""
    assert _outlasting([100] * 4, 16, 128) == set()
    assert _outlasting([8192] * 512, 16, 64) == set()
    assert _outlasting([1 << 20, *[3000] * 500], 16, 64) == {0}
    assert _outlasting([1 << 20, 3000, 600_000, *[3000] * 500], 16, 64) == {0, 2}
    # Just past the share, the lanes finish it about as soon as hashlib would.
    assert _outlasting([40_000, *[3000] * 200], 16, 64) == set()
    assert _outlasting([], 16, 64) == set()


class CountingLoader(LaneLoader):
    """The real lane kernels, recording the messages each batch held."""

    def __init__(self, algorithm: str) -> None:
        super().__init__(method_for(algorithm), "simd")
        self.batches: list[list[int]] = []

    def hash(self, messages: Slices) -> list[bytes]:
        """Record the lengths and hash in lanes."""
        self.batches.append(list(messages.lengths))
        return super().hash(messages)


@pytest.mark.parametrize("algorithm", ["sha1", "blake2b"])
def test_a_long_file_goes_to_hashlib_the_rest_to_the_lanes(tmp_path: Path, algorithm: str) -> None:
    """With the lanes in charge, a file that would outlast every other lane is hashed by
    hashlib; the digests are all hashlib's, in the order of the names."""
    names = []
    for index in range(60):
        path = tmp_path / f"f{index:02}"
        size = 900_000 if index == 7 else 1000 + 37 * index
        path.write_bytes(bytes((i * 7 + index) % 251 for i in range(size)))
        names.append(str(path))
    loader = CountingLoader(algorithm)
    got = list(file_digests(names, algorithm, "simd", loader=loader))
    expected = [(name, hashlib.new(algorithm, Path(name).read_bytes()).digest()) for name in names]
    assert got == expected
    assert loader.batches
    assert all(900_000 not in batch for batch in loader.batches)


def test_jobs_keep_the_order_of_the_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many short jobs on the worker threads, read errors among them: outcomes in name order."""
    monkeypatch.setattr(engine, "BATCH_FILES", 3)
    monkeypatch.setattr(engine, "FIRST_FILES", 1)
    names = []
    for index in range(50):
        path = tmp_path / f"f{index:02}"
        if index % 7:
            path.write_bytes(bytes(index * 11))
        names.append(str(path))
    got = list(file_digests(names, "sha256"))
    assert [name for name, _ in got] == names
    for name, outcome in got:
        if Path(name).exists():
            assert outcome == hashlib.sha256(Path(name).read_bytes()).digest()
        else:
            assert isinstance(outcome, FileNotFoundError)


def test_standard_input_named_twice_goes_to_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """As with coreutils, the first ``-`` reads the input and a second one finds it ended."""

    class Stdin:
        buffer = io.BytesIO(b"abc" * 5000)

    monkeypatch.setattr(engine, "BATCH_FILES", 1)
    monkeypatch.setattr(engine, "FIRST_FILES", 1)
    monkeypatch.setattr(sys, "stdin", Stdin())
    got = list(file_digests(["-", "-", "-"], "sha256"))
    assert got == [
        ("-", hashlib.sha256(b"abc" * 5000).digest()),
        ("-", hashlib.sha256(b"").digest()),
        ("-", hashlib.sha256(b"").digest()),
    ]


def test_an_input_that_arrives_in_pieces_is_read_to_its_end(tmp_path: Path) -> None:
    """A FIFO whose writer pauses between small pieces: reads come back short before the end,
    and the input is read on until it ends."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    pieces = [bytes([index]) * 1000 for index in range(4)]

    def feed() -> None:
        with fifo.open("wb") as pipe:
            for piece in pieces:
                pipe.write(piece)
                pipe.flush()
                time.sleep(0.05)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        got = list(file_digests([str(fifo)], "sha256"))
    finally:
        writer.join()
    assert got == [(str(fifo), hashlib.sha256(b"".join(pieces)).digest())]


STREAMED = sorted(name for name, row in ALGORITHMS.items() if row.stream is not None)


@pytest.mark.parametrize("algorithm", STREAMED)
def test_each_long_file_gets_a_stream_of_its_own(tmp_path: Path, algorithm: str) -> None:
    """Files past SMALL_FILE of a mode that streams each get their own digest (a stream is never
    shared between files)."""
    names = []
    for seed in range(3):
        path = tmp_path / f"long{seed}"
        path.write_bytes(bytes([seed]) * (engine.SMALL_FILE + 1000 * seed + 1))
        names.append(str(path))
    expected = [ALGORITHMS[algorithm].many([Path(name).read_bytes()])[0] for name in names]
    assert [digest for _, digest in file_digests(names, algorithm)] == expected
