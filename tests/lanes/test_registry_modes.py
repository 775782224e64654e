"""The lane-mode algorithm table: every entry on every backend, light imports, errors."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from functools import cache

import pytest

from tests.support import modes_kat as kat
from twocats.exceptions import InvalidParametersError
from twocats.lanes import ALGORITHMS, hash_many

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


@pytest.mark.parametrize("name", sorted(MODES))
def test_every_mode_takes_other_buffers(name: str) -> None:
    """Bytearrays and memoryviews among the messages give the digests of the same bytes."""
    msgs = _messages()
    mixed = [
        bytearray(m) if i % 3 == 1 else memoryview(m) if i % 3 == 2 else m
        for i, m in enumerate(msgs)
    ]
    assert tuple(hash_many(mixed, name, backend="simd")) == _expected(name)


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
