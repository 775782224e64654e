"""The one registry of lane algorithms: primitives and modes under one table and one hash_many."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from twocats.exceptions import InvalidParametersError
from twocats.hashes import LANE_HASHES
from twocats.lanes import ALGORITHMS, PRIMITIVES, hash_many, hash_many_array, hash_many_fixed
from twocats.lanes.registry import FAMILIES
from twocats.simd.family import KernelKey, ready

MESSAGES = [b"", b"abc", bytes(range(200))]


def test_primitives_come_first_in_hash_code_order() -> None:
    """The registry opens with the lane hashes of twocats.hashes, flagged as primitives."""
    assert tuple(facts.name for facts in LANE_HASHES) == PRIMITIVES
    assert tuple(ALGORITHMS)[: len(PRIMITIVES)] == PRIMITIVES
    assert [name for name, entry in ALGORITHMS.items() if entry.primitive] == list(PRIMITIVES)


@pytest.mark.parametrize("name", PRIMITIVES)
def test_primitive_entries_hash_like_hashlib(name: str) -> None:
    """A primitive's entry computes hashlib's digest of its hashlib name, of its digest size."""
    entry = ALGORITHMS[name]
    assert entry.hashlib_name is not None
    expected = [hashlib.new(entry.hashlib_name, m).digest() for m in MESSAGES]
    assert entry.many(MESSAGES, backend="scalar") == expected
    assert hash_many(MESSAGES, name, backend="reference") == expected
    assert {len(d) for d in expected} == {entry.digest_size}


def test_only_sha1_is_legacy() -> None:
    """SHA-1 is the one entry marked legacy (integrity checks of old data only)."""
    assert [name for name, entry in ALGORITHMS.items() if entry.legacy] == ["sha1"]
    assert "legacy" in ALGORITHMS["sha1"].summary


def test_one_family_serves_modes_and_primitives() -> None:
    """hash_many and hash_many_array take a mode's name as they take a primitive's."""
    rows = hash_many_array(MESSAGES, "sha3-256", backend="reference")
    assert [bytes(row) for row in rows] == [hashlib.sha3_256(m).digest() for m in MESSAGES]
    assert hash_many(MESSAGES, "sha3-256", backend="reference") == [bytes(r) for r in rows]


def test_fixed_rows_take_primitives_only() -> None:
    """hash_many_fixed refuses a lane mode, naming the primitives it takes."""
    with pytest.raises(InvalidParametersError, match="blake2s, blake2b, sha256, sha512"):
        hash_many_fixed(np.zeros((2, 8), np.uint8), "sha3-256")


def test_unknown_name_lists_every_algorithm() -> None:
    """An unknown name raises, listing primitives and modes alike."""
    with pytest.raises(InvalidParametersError, match=r"blake2s, .*sha3-256.*, not 'md5'"):
        hash_many([b""], "md5")


def test_every_lane_family_is_in_the_registry() -> None:
    """The registry gathers the primitives' family and one family per lane mode module."""
    assert [family.name for family in FAMILIES] == [
        "lanes",
        "blake2tree",
        "keccak",
        "lsh",
        "sha256tree",
    ]


@pytest.mark.parametrize(
    "key", [key for family in FAMILIES for key in family.keys("scalar", None)], ids=str
)
def test_every_lane_kernel_passes_its_check_and_a_wrong_one_does_not(key: KernelKey) -> None:
    """Each lane kernel's compiled build passes its family's check (the reference's answers),
    and a kernel that leaves its output alone fails it."""
    family = next(family for family in FAMILIES if key in family.keys("scalar", None))
    assert family.check(ready(family, key), key)
    assert not family.check(lambda *args: None, key)
