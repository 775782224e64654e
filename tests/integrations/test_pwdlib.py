"""The pwdlib adapter with real pwdlib and argon2, and the FastAPI example through TestClient."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("pwdlib", reason="the test extra installs pwdlib")

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

from twocats import PasswordHasher, phc, profiles
from twocats.integrations.pwdlib import TwoCatsHasher

PASSWORD = "correct horse battery staple"
WRONG = "Tr0ub4dor&3"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fastapi_login.py"


def _cheap(mem_cost: int = 3) -> TwoCatsHasher:
    params = dataclasses.replace(profiles.CHEAPEST, mem_cost=mem_cost, start_mem_cost=mem_cost)
    return TwoCatsHasher(PasswordHasher.from_params(params))


def _cheap_argon2() -> Argon2Hasher:
    return Argon2Hasher(time_cost=1, memory_cost=8, parallelism=1)


def test_hash_verify_identify() -> None:
    """hash gives a twocats string that verifies; identify tells it from an argon2 one."""
    hasher = _cheap()
    stored = hasher.hash(PASSWORD)
    assert stored.startswith("$twocats$v=2015$m=3,")
    assert hasher.verify(PASSWORD, stored) is True
    assert hasher.verify(PASSWORD.encode(), stored.encode()) is True
    assert hasher.verify(WRONG, stored) is False
    assert TwoCatsHasher.identify(stored)
    assert TwoCatsHasher.identify(stored.encode())
    assert not TwoCatsHasher.identify(_cheap_argon2().hash(PASSWORD))
    assert not TwoCatsHasher.identify(b"\xff$twocats$")
    assert hasher.hash(PASSWORD, salt=b"saltsaltsalt") == hasher.hash(
        PASSWORD, salt=b"saltsaltsalt"
    )


@pytest.mark.parametrize(
    "stored",
    [
        "$twocats$",
        "$twocats$v=2015$m=3",
        "$twocats$v=2015$m=3,p=1,b=32,sb=32$AAAAAAAAAAA$AAAA",
        "$twocats$v=2015$m=30$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43,
        "$twocats$v=2015$m=3,p=1,b=32,sb=32$" + PASSWORD,
    ],
)
def test_verify_is_false_for_a_malformed_hash(stored: str) -> None:
    """verify answers False for a malformed or oversized hash; it needs a rehash."""
    hasher = _cheap()
    assert hasher.verify(PASSWORD, stored) is False
    assert hasher.check_needs_rehash(stored) is True


def test_types_are_checked_as_pwdlib_does() -> None:
    """A password or hash that is neither str nor bytes is a TypeError, as in pwdlib's hashers."""
    hasher = _cheap()
    with pytest.raises(TypeError):
        hasher.verify(None, "$twocats$")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        TwoCatsHasher.identify(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"twocats\.PasswordHasher"):
        TwoCatsHasher("moderate")  # type: ignore[arg-type]


def test_check_needs_rehash_follows_the_parameters() -> None:
    """A hash of another memory cost needs a rehash; an upgraded one does not."""
    old, new = _cheap(0), _cheap(3)
    stored = old.hash(PASSWORD)
    assert not old.check_needs_rehash(stored)
    assert new.check_needs_rehash(stored)
    upgraded = new.hasher.upgrade(stored)
    assert not new.check_needs_rehash(upgraded)
    assert new.verify(PASSWORD, upgraded)


def test_password_hash_migrates_argon2_users() -> None:
    """PasswordHash((TwoCatsHasher(), Argon2Hasher())) replaces argon2 hashes at login."""
    argon2 = _cheap_argon2()
    hashing = PasswordHash((_cheap(), argon2))
    stored = argon2.hash(PASSWORD)
    assert hashing.verify_and_update(WRONG, stored) == (False, None)
    valid, updated = hashing.verify_and_update(PASSWORD, stored)
    assert valid
    assert updated is not None
    assert updated.startswith("$twocats$")
    assert hashing.verify_and_update(PASSWORD, updated) == (True, None)
    assert hashing.verify(PASSWORD, updated)
    stale = _cheap(0).hash(PASSWORD)
    valid, rehashed = hashing.verify_and_update(PASSWORD, stale)
    assert valid
    assert rehashed is not None
    assert rehashed.startswith("$twocats$v=2015$m=3,")


def test_repr_and_results_hide_the_password() -> None:
    """The adapter's repr shows the parameters, never the password or a hash."""
    hasher = _cheap()
    stored = hasher.hash(PASSWORD)
    text = repr(hasher)
    assert "mem_cost=3" in text
    assert PASSWORD not in text
    assert stored.rpartition("$")[2] not in text


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fastapi_login_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # FastAPI resolves the endpoints' annotations through the module, as for any imported one.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_fastapi_example_registers_and_logs_in_users(tmp_path: Path) -> None:
    """The example app, driven by TestClient, registers users and logs them in through pwdlib."""
    pytest.importorskip("fastapi", reason="the test extra installs FastAPI")
    from fastapi.testclient import TestClient

    argon2 = _cheap_argon2()
    app = _example().create_app(PasswordHash((_cheap(), argon2)), tmp_path / "users.sqlite3")
    assert app.state.users.add("old", argon2.hash("argon2 password"))
    with TestClient(app) as client:
        ada = {"username": "ada", "password": PASSWORD}
        assert client.post("/register", json=ada).status_code == 201
        assert client.post("/register", json=ada).status_code == 409
        assert app.state.users.get("ada").startswith("$twocats$")
        assert client.post("/login", json=ada).status_code == 200
        wrong = {"username": "ada", "password": WRONG}
        assert client.post("/login", json=wrong).status_code == 401
        nobody = {"username": "nobody", "password": PASSWORD}
        assert client.post("/login", json=nobody).status_code == 401
        assert client.post("/login", json={"username": "ada"}).status_code == 422

        old = {"username": "old", "password": "argon2 password"}
        assert client.post("/login", json=old).status_code == 200
        assert app.state.users.get("old").startswith("$twocats$v=2015$m=3,")
        assert client.post("/login", json=old).status_code == 200
        old_wrong = {"username": "old", "password": WRONG}
        assert client.post("/login", json=old_wrong).status_code == 401

        # A stored hash beyond the hasher's limits is refused like a wrong password.
        costly = dataclasses.replace(profiles.CHEAPEST, mem_cost=20, start_mem_cost=20)
        assert app.state.users.add("planted", phc.encode(costly, bytes(16), bytes(32)))
        planted = {"username": "planted", "password": PASSWORD}
        assert client.post("/login", json=planted).status_code == 401
