"""The lane-mode algorithm table: every entry on every backend, light imports, errors."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import modes_kat as kat
from twocats.exceptions import InvalidParametersError
from twocats.lanes import ALGORITHMS, hash_many
from twocats.lanes.modes._common import chunks

#: The lane modes of the registry (the primitives have tests of their own).
MODES = {name: entry for name, entry in ALGORITHMS.items() if not entry.primitive}

COMPILED = ("scalar", "simd")

# Lengths that cross the block sizes of every family (64 to 256 bytes).
SIZES = (0, 1, 55, 64, 127, 136, 168, 257, 513)


def _messages() -> list[bytes]:
    """A small batch of pattern messages of mixed lengths."""
    return [kat.pattern_bytes(n) for n in SIZES]


@cache
def _expected(name: str) -> tuple[bytes, ...]:
    """The reference backend's digests of the batch (computed once per algorithm)."""
    return tuple(MODES[name].many(_messages(), backend="reference"))


@pytest.mark.parametrize("backend", COMPILED)
@pytest.mark.parametrize("name", sorted(MODES))
def test_every_mode_matches_reference(name: str, backend: str) -> None:
    """Each table entry gives the reference backend's digests, of the declared size."""
    msgs = _messages()
    got = hash_many(msgs, name, backend=backend)
    assert tuple(got) == _expected(name)
    assert {len(d) for d in got} == {MODES[name].digest_size}


@pytest.mark.parametrize("name", sorted(n for n, m in MODES.items() if m.hashlib_name))
def test_hashlib_names_are_the_same_function(name: str) -> None:
    """An entry's hashlib_name computes the same digests (front ends stream large files with it)."""
    mode = MODES[name]
    assert mode.hashlib_name is not None
    msgs = _messages()
    assert mode.many(msgs) == [hashlib.new(mode.hashlib_name, m).digest() for m in msgs]


def test_unknown_algorithm_is_rejected() -> None:
    """An unknown name raises InvalidParametersError listing the allowed names."""
    with pytest.raises(InvalidParametersError, match="sha3-256"):
        hash_many([b""], "md5")


def test_import_is_light() -> None:
    """Importing the modes package and reading the table imports neither numpy nor numba."""
    code = (
        "import sys, twocats.lanes.registry as m; len(m.ALGORITHMS); "
        "print('numpy' in sys.modules, 'numba' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(0, 40), max_size=12), limit=st.integers(1, 64))
def test_chunks_cover_every_message_once(sizes: list[int], limit: int) -> None:
    """Packed batches give back every message in order; one of limit bytes or more is alone."""
    messages = [kat.pattern_bytes(n + i)[i:] for i, n in enumerate(sizes)]
    seen: list[bytes] = []
    for first, end, data, starts, lengths in chunks(messages, limit):
        assert first == len(seen)
        assert end > first
        if end - first > 1:
            assert int(lengths.sum()) < limit
        for start, length in zip(starts.tolist(), lengths.tolist(), strict=True):
            seen.append(data[start : start + length].tobytes())
    assert seen == messages
