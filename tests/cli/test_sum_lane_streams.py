"""twocats sum streams KangarooTwelve and ParallelHash, and holds at most one whole-read file
of the other lane modes: four /dev/zero sums stay under 256 MiB in a real subprocess."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from Crypto.Hash import KangarooTwelve
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.test_sum_bounded import CHILD, ENDLESS_SECONDS, run_limited
from twocats.lanes.modes import keccak, keccak_stream
from twocats.lanes.modes.keccak_stream import KangarooTwelveStream, ParallelHashStream

#: Peak resident memory four lane-mode sums of /dev/zero must stay under.
FOUR_ZEROS_PEAK = 256 << 20

#: The whole-read cap for the modes without a streaming form in the capped child: four such
#: reads held at once would pass FOUR_ZEROS_PEAK, one at a time stays well under it.
CHILD_WHOLE_FILE_LIMIT = 96 << 20

ZEROS = ["/dev/zero"] * 4


@pytest.mark.parametrize("algorithm", ["kt128", "parallelhash256"])
def test_four_dev_zero_tree_mode_sums_stream(algorithm: str) -> None:
    """Four /dev/zero sums of a tree mode read on in bounded memory until stopped."""
    status, stdout, stderr, peak = run_limited(["-a", algorithm, *ZEROS], seconds=ENDLESS_SECONDS)
    assert status is None, stderr
    assert stdout == b""
    assert peak < FOUR_ZEROS_PEAK


def test_four_dev_zero_whole_read_sums_hold_one_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four /dev/zero sums of a mode read whole are refused at the cap, one file held at a time."""
    capped = CHILD.replace(
        "from twocats.cli import main",
        "from twocats.lanes import file_digests\n"
        f"file_digests.WHOLE_FILE_LIMIT = {CHILD_WHOLE_FILE_LIMIT}\n"
        "from twocats.cli import main",
    )
    from tests.cli import test_sum_bounded

    monkeypatch.setattr(test_sum_bounded, "COMMAND", [sys.executable, "-c", capped, "sum"])
    status, stdout, stderr, peak = run_limited(["-a", "blake2sp", *ZEROS])
    assert status == 1
    assert stdout == b""
    assert stderr.count(b"/dev/zero: File too large: this algorithm has no streaming form") == 4
    assert peak < FOUR_ZEROS_PEAK


def test_sparse_files_stream_with_pycryptodome_digest(tmp_path: Path) -> None:
    """Four 48 MiB sparse files give pycryptodome's KT128, in bounded memory."""
    sparse = tmp_path / "sparse"
    with sparse.open("wb") as handle:
        handle.truncate(48 << 20)
    expected = KangarooTwelve.new(custom=b"")
    zeros = bytes(1 << 20)
    for _ in range(48):
        expected.update(zeros)
    digest = expected.read(32).hex()
    status, stdout, stderr, peak = run_limited(["-a", "kt128", *[str(sparse)] * 4])
    assert status == 0, stderr
    assert stdout == f"{digest}  {sparse}\n".encode() * 4
    assert peak < FOUR_ZEROS_PEAK


def _fed(stream: KangarooTwelveStream | ParallelHashStream, data: bytes, cuts: list[int]) -> bytes:
    """Feed `data` to `stream` in pieces ending at `cuts`; return its digest."""
    start = 0
    for end in [*sorted(cuts), len(data)]:
        stream.update(data[start:end])
        start = max(start, end)
    return stream.digest()


# Lengths around KangarooTwelve's 8 KiB chunk, the leaf batch and ParallelHash's blocks.
LENGTHS = st.sampled_from([0, 1, 8191, 8192, 8193, 16384, 16385, 3 * 8192 + 7]) | st.integers(
    0, 5 * 8192
)


@settings(max_examples=40, deadline=None)
@given(
    size=LENGTHS,
    seed=st.integers(0, 250),
    cuts=st.lists(st.integers(0, 5 * 8192), max_size=6),
    custom=st.sampled_from([b"", b"c", bytes(8190)]),
)
def test_streams_equal_whole_input_functions(
    size: int, seed: int, cuts: list[int], custom: bytes
) -> None:
    """Any cutting of any input streams to kt128/kt256/ParallelHash's digests of it whole."""
    data = bytes((i + seed) % 251 for i in range(size))
    cuts = [cut for cut in cuts if cut <= size]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keccak_stream, "LEAF_BATCH", 3 * 8192)
        for security, whole in ((128, keccak.kt128), (256, keccak.kt256)):
            stream = KangarooTwelveStream(security, 32, custom=custom)
            assert _fed(stream, data, cuts) == whole(data, 32, custom=custom)
        for block in (1000, 8192):
            stream = ParallelHashStream(256, block, 64, custom=custom, xof=True)
            assert _fed(stream, data, cuts) == keccak.parallelhash256(
                data, block, 64, custom=custom, xof=True
            )
        assert _fed(KangarooTwelveStream(128, 32, custom=custom), data, cuts) == (
            KangarooTwelve.new(data=data, custom=custom).read(32)
        )


@pytest.mark.parametrize("size", [0, 100, 8192, 8193, 20000])
def test_reference_backend_streams_equal_reference(size: int) -> None:
    """On the reference backend the streams equal the plain-Python KT128 and ParallelHash128."""
    from twocats.lanes.reference import keccak as ref

    data = bytes(i % 251 for i in range(size))
    cuts = [size // 3, size // 2]
    kt = KangarooTwelveStream(128, 32, backend="reference")
    assert _fed(kt, data, cuts) == ref.kt128(data, 32)
    ph = ParallelHashStream(128, 8192, 32, backend="reference")
    assert _fed(ph, data, cuts) == ref.parallelhash128(data, 8192, 32)
