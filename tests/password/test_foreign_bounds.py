"""Foreign hashes' bounds: the work estimate against argon2-cffi's CPU, the lanes, malformed rows.

The estimate of :mod:`twocats.password._foreign` may run high, never low: each shape below is
verified by argon2-cffi (the library Django, pwdlib and libpass verify with), and the least CPU time
of a few verifications, every thread counted, must stay within the estimate, from one lane to the
most accepted.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.foreign_rows import MALFORMED, OUTPUT, SALT
from twocats.exceptions import HashLimitError, InvalidHashError
from twocats.kdf.limits import StoredLimits
from twocats.password import ARGON2_MAX_LANES, check_foreign, foreign_cost

argon2 = pytest.importorskip("argon2", reason="the test extra installs argon2-cffi")
from argon2.low_level import Type, hash_secret, verify_secret  # noqa: E402

#: Limits that refuse nothing below the lanes bound.
OPEN = StoredLimits(max_memory=1 << 40, max_work=1 << 60)

TYPES = {"argon2id": Type.ID, "argon2i": Type.I, "argon2d": Type.D}

#: (m KiB, t, p): lanes from 1 to the bound at argon2's least memory (8 KiB per lane), where
#: the lanes' threads are most of the work, and memory-bound shapes with few lanes.
SHAPES = [
    (8, 1, 1),
    (16, 3, 2),
    (128, 2, 16),
    (512, 1, 64),
    (2040, 2, ARGON2_MAX_LANES),
    (8192, 1, 1),
    (16384, 2, 4),
    (4096, 4, 32),
]


def _least_cpu(encoded: bytes, kind: Type, runs: int = 5) -> int:
    """The least CPU time of `runs` verifications of `encoded`, in nanoseconds, all threads."""
    least = None
    for _ in range(runs):
        started = time.process_time_ns()
        verify_secret(encoded, b"password", kind)
        spent = time.process_time_ns() - started
        least = spent if least is None else min(least, spent)
    assert least is not None
    return least


@pytest.mark.parametrize("kind", sorted(TYPES))
@pytest.mark.parametrize(("memory", "passes", "lanes"), SHAPES)
def test_argon2_estimate_is_at_least_the_cpu_taken(
    kind: str, memory: int, passes: int, lanes: int
) -> None:
    """The estimated work of an argon2 hash is at least the CPU its verification takes."""
    encoded = hash_secret(b"password", b"saltsaltsaltsalt", passes, memory, lanes, 32, TYPES[kind])
    cost = check_foreign(encoded.decode(), OPEN)
    spent = _least_cpu(encoded, TYPES[kind])
    assert cost.work >= spent, (cost.settings, cost.work, spent)


def test_lanes_above_the_bound_are_refused_unrun() -> None:
    """p=256 and p=65536 are refused as a limit, naming p and its range; p=255 is accepted."""
    accepted = f"$argon2id$v=19$m={8 * ARGON2_MAX_LANES},t=1,p={ARGON2_MAX_LANES}${SALT}${OUTPUT}"
    assert check_foreign(accepted, OPEN).threads == ARGON2_MAX_LANES
    for lanes in (ARGON2_MAX_LANES + 1, 4096, 65536):
        planted = f"$argon2id$v=19$m={8 * lanes},t=1,p={lanes}${SALT}${OUTPUT}"
        with pytest.raises(HashLimitError, match=f"p must be from 1 to {ARGON2_MAX_LANES}"):
            check_foreign(planted, OPEN)


def test_lanes_are_counted_in_the_estimate() -> None:
    """At equal memory and passes, more lanes are estimated as more work."""
    works = []
    for lanes in (1, 16, 255):
        cost = foreign_cost(f"$argon2id$v=19$m=4096,t=2,p={lanes}${SALT}${OUTPUT}")
        assert cost is not None
        works.append(cost.work)
    assert works == sorted(works)
    assert works[2] - works[0] >= 254 * 2 * 100_000


@pytest.mark.parametrize("stored", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_foreign_hashes_are_refused_without_their_content(stored: str) -> None:
    """A malformed argon2 or bcrypt string is an InvalidHashError whose message holds none of it."""
    with pytest.raises(InvalidHashError, match="malformed") as caught:
        check_foreign(stored, OPEN)
    assert type(caught.value) is InvalidHashError
    assert SALT not in str(caught.value)
    assert "aaaa" not in str(caught.value)
    assert foreign_cost(stored) is None
    assert foreign_cost(stored.encode("utf-8")) is None


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(sorted(TYPES)),
    salt=st.binary(min_size=8, max_size=64),
    size=st.integers(4, 128),
    lanes=st.integers(1, 8),
)
def test_every_hash_argon2_cffi_makes_is_accepted(
    kind: str, salt: bytes, size: int, lanes: int
) -> None:
    """argon2-cffi's hashes of any salt, output length and lanes pass the check, str or bytes."""
    encoded = hash_secret(b"pw", salt, 1, 8 * lanes, lanes, size, TYPES[kind])
    for stored in (encoded, encoded.decode()):
        cost = check_foreign(stored, OPEN)
        assert (cost.scheme, cost.memory, cost.threads) == (kind, 8 * lanes << 10, lanes)


def test_bcrypt_hashes_are_accepted() -> None:
    """bcrypt's own hashes, of each prefix, pass the check."""
    bcrypt = pytest.importorskip("bcrypt", reason="the test extra installs bcrypt")
    for prefix in (b"2a", b"2b"):
        stored = bcrypt.hashpw(b"pw", bcrypt.gensalt(4, prefix=prefix))
        assert check_foreign(stored, OPEN).settings == "cost=4"
