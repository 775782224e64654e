"""pwdlib 0.3's own hasher tests, mirrored for TwoCatsHasher; lowering the cost; the decoy.

Each test names the test of pwdlib's ``tests/hashers/test_argon2.py`` or ``tests/test_hash.py``
it mirrors (pwdlib's tests are written against its Argon2Hasher and BcryptHasher, so they cannot
run on another hasher as they are).  The one divergence: twocats identifies a hash by its prefix
and lets verify check the rest, so a malformed twocats string is identified (and then fails to
verify), where pwdlib's argon2 hasher parses it to say no.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

pytest.importorskip("pwdlib", reason="the test extra installs pwdlib")

from pwdlib import PasswordHash, exceptions
from pwdlib.hashers.argon2 import Argon2Hasher

from twocats import PasswordHasher, phc, profiles
from twocats.integrations.pwdlib import TwoCatsHasher
from twocats.kdf.engine import Engine
from twocats.params import Params

PASSWORD = "herminetincture"
CHEAP = dataclasses.replace(profiles.CHEAPEST, mem_cost=3, start_mem_cost=3)
HASHER = TwoCatsHasher(params=CHEAP)
HASH_STR = HASHER.hash(PASSWORD)
HASH_BYTES = HASH_STR.encode("ascii")
MALFORMED = "$twocats$v=A&$m==,p=$c29tZXNhbHQ$arQWpIVsXmUQDj660XNQBCR3AeZaVN7ChRcM97sGDK4"
INVALID_UTF8_BYTES = b"\xc3\x28"
ARGON2 = Argon2Hasher(time_cost=1, memory_cost=8, parallelism=1)
ARGON2_HASH = ARGON2.hash(PASSWORD)


# -- tests/hashers/test_argon2.py ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hash", "result"),
    [(HASH_STR, True), (HASH_BYTES, True), (INVALID_UTF8_BYTES, False), ("", False)],
)
def test_identify(hash: str | bytes, result: bool) -> None:
    """Mirrors test_identify: str and bytes hashes, invalid UTF-8 and the empty string."""
    assert TwoCatsHasher.identify(hash) == result


def test_identify_malformed_by_prefix() -> None:
    """Mirrors test_identify's malformed case: identified by prefix, then refused by verify."""
    assert TwoCatsHasher.identify(MALFORMED)
    assert HASHER.verify(PASSWORD, MALFORMED) is False


def test_identify_large_hash() -> None:
    """Mirrors test_identify_large_hash: the longest twocats string (64-byte salt and output)."""
    params = dataclasses.replace(CHEAP, hash_type="blake2b", block_size=64, sub_block_size=64)
    large = phc.encode(params, bytes(64), bytes(64)).encode()
    assert TwoCatsHasher.identify(large)


def test_hash() -> None:
    """Mirrors test_hash: hash returns a str."""
    assert isinstance(HASHER.hash(PASSWORD), str)


@pytest.mark.parametrize(
    ("hash", "password", "result"),
    [
        (HASH_STR, PASSWORD, True),
        (HASH_BYTES, PASSWORD, True),
        (HASH_STR, "INVALID_PASSWORD", False),
        (HASH_BYTES, "INVALID_PASSWORD", False),
    ],
)
def test_verify(hash: str | bytes, password: str, result: bool) -> None:
    """Mirrors test_verify: str and bytes hashes, right and wrong passwords."""
    assert HASHER.verify(password, hash) == result


@pytest.mark.parametrize("invalid_value", [123, None, [], {}], ids=["int", "None", "list", "dict"])
def test_invalid_type(invalid_value: object) -> None:
    """Mirrors test_invalid_type: pwdlib's TypeErrors and messages."""
    with pytest.raises(TypeError, match="hash must be str or bytes"):
        TwoCatsHasher.identify(invalid_value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="password must be str or bytes"):
        HASHER.hash(invalid_value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="password must be str or bytes"):
        HASHER.verify(invalid_value, HASH_STR)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hash must be str or bytes"):
        HASHER.verify(PASSWORD, invalid_value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hash must be str or bytes"):
        HASHER.check_needs_rehash(invalid_value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="password must be str or bytes"):
        HASHER.dummy_verify(invalid_value)  # type: ignore[arg-type]


# -- tests/test_hash.py ----------------------------------------------------------------------------


@pytest.fixture
def password_hash() -> PasswordHash:
    """twocats first, then argon2, as test_hash.py's fixture puts argon2 before bcrypt."""
    return PasswordHash((TwoCatsHasher(params=CHEAP), ARGON2))


def test_hash_with_the_current_hasher(password_hash: PasswordHash) -> None:
    """Mirrors test_hash: the current hasher identifies the new hash."""
    encoded = password_hash.hash(PASSWORD)
    assert isinstance(encoded, str)
    assert password_hash.current_hasher.identify(encoded)


@pytest.mark.parametrize(
    ("hash", "password", "result"),
    [
        (HASH_STR, PASSWORD, True),
        (HASH_STR, "INVALID_PASSWORD", False),
        (ARGON2_HASH, PASSWORD, True),
        (ARGON2_HASH, "INVALID_PASSWORD", False),
    ],
)
def test_password_hash_verify(
    hash: str, password: str, result: bool, password_hash: PasswordHash
) -> None:
    """Mirrors test_verify of test_hash.py."""
    assert password_hash.verify(password, hash) == result


def test_verify_unknown_hash(password_hash: PasswordHash) -> None:
    """Mirrors test_verify_unknown_hash: a hash no hasher identifies is UnknownHashError."""
    with pytest.raises(exceptions.UnknownHashError):
        password_hash.verify("INVALID_HASH", PASSWORD)
    with pytest.raises(exceptions.UnknownHashError):
        password_hash.verify_and_update(PASSWORD, "INVALID_HASH")


@pytest.mark.parametrize(
    ("hash", "password", "result", "has_updated_hash"),
    [
        (HASH_STR, PASSWORD, True, False),
        (HASH_STR, "INVALID_PASSWORD", False, False),
        (ARGON2_HASH, PASSWORD, True, True),
        (ARGON2_HASH, "INVALID_PASSWORD", False, False),
    ],
)
def test_verify_and_update(
    hash: str, password: str, result: bool, has_updated_hash: bool, password_hash: PasswordHash
) -> None:
    """Mirrors test_verify_and_update: only the other hasher's hash, with the right password."""
    valid, updated = password_hash.verify_and_update(password, hash)
    assert valid == result
    assert (updated is not None) == has_updated_hash
    if updated is not None:
        assert password_hash.current_hasher.identify(updated)


@pytest.mark.parametrize("invalid_value", [123, None, [], {}], ids=["int", "None", "list", "dict"])
def test_password_hash_invalid_type(invalid_value: object, password_hash: PasswordHash) -> None:
    """Mirrors test_invalid_type of test_hash.py."""
    with pytest.raises(TypeError, match="password must be str or bytes"):
        password_hash.hash(invalid_value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="password must be str or bytes"):
        password_hash.verify(invalid_value, HASH_STR)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hash must be str or bytes"):
        password_hash.verify(PASSWORD, invalid_value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="password must be str or bytes"):
        password_hash.verify_and_update(invalid_value, HASH_STR)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hash must be str or bytes"):
        password_hash.verify_and_update(PASSWORD, invalid_value)  # type: ignore[arg-type]


# -- lowering the cost, the limits and the decoy ---------------------------------------------------


@pytest.fixture(scope="module")
def default_hash() -> str:
    """A real hash of the default profile (mem_cost 18, 256 MiB)."""
    return PasswordHasher().hash(PASSWORD)


@pytest.mark.parametrize(
    "params",
    [dataclasses.replace(profiles.DEFAULT, mem_cost=17, start_mem_cost=17), profiles.INTERACTIVE],
    ids=["mem_cost 17", "interactive"],
)
def test_a_default_profile_hash_verifies_and_is_rehashed_down(
    default_hash: str, params: Params
) -> None:
    """verify_and_update accepts an m=18 hash under lower parameters and rehashes it to them."""
    hashing = PasswordHash((TwoCatsHasher(params=params),))
    valid, updated = hashing.verify_and_update(PASSWORD, default_hash)
    assert valid
    assert updated is not None
    assert phc.decode(updated).params == params
    assert hashing.verify_and_update("INVALID_PASSWORD", default_hash) == (False, None)


def test_constructor_takes_a_hasher_or_its_settings() -> None:
    """The limits are constructor settings; a hasher and settings together are refused."""
    earlier = dataclasses.replace(profiles.SENSITIVE, multiplies=8, lanes=1, sub_block_size=32)
    adapter = TwoCatsHasher(params=CHEAP, previous=[earlier], max_memory=2 << 30)
    assert adapter.hasher.previous == (earlier,)
    assert adapter.hasher.max_memory == 2 << 30
    with pytest.raises(TypeError, match="either a hasher or the keywords"):
        TwoCatsHasher(PasswordHasher(), max_work=10**9)


def test_a_refused_hash_is_false_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    """A hash above the limits verifies as False and logs its parameters, not the hash."""
    planted = phc.encode(Params(mem_cost=22), bytes(16), bytes(32))
    with caplog.at_level("WARNING", logger="twocats.integrations"):
        assert HASHER.verify(PASSWORD, planted) is False
    assert "mem_cost=22 needs 4 GiB" in caplog.text
    assert planted.rpartition("$")[2] not in caplog.text


def test_dummy_verify_does_the_work_of_an_upgraded_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a start_mem_cost, dummy_verify derives the shape of a hash upgraded from there."""
    shapes: list[Params] = []
    derive = Engine.derive

    def recording(self: Engine, password: bytes, salt: bytes, params: Params, **kw: Any) -> bytes:
        shapes.append(params)
        return derive(self, password, salt, params, **kw)

    old = dataclasses.replace(CHEAP, mem_cost=1, start_mem_cost=1)
    upgraded = PasswordHasher.from_params(CHEAP).upgrade(
        PasswordHasher.from_params(old).hash(PASSWORD)
    )
    monkeypatch.setattr(Engine, "derive", recording)
    shaped = TwoCatsHasher(params=dataclasses.replace(CHEAP, start_mem_cost=1))
    assert shaped.verify(PASSWORD, upgraded)
    assert shaped.dummy_verify(PASSWORD) is False
    assert shapes[0] == shapes[1] == phc.decode(upgraded).params
