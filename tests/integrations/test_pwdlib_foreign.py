"""pwdlib's argon2 and bcrypt hashers under AdmittedHasher: every malformed row fails to verify."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("pwdlib", reason="the test extra installs pwdlib")

from pwdlib import PasswordHash
from pwdlib.exceptions import UnknownHashError
from pwdlib.hashers.argon2 import Argon2Hasher
from pwdlib.hashers.bcrypt import BcryptHasher

from tests.support.foreign_rows import LIBRARY_REFUSES, MALFORMED
from twocats import PasswordHasher, profiles
from twocats.integrations.pwdlib import AdmittedHasher, TwoCatsHasher

ROWS = {**MALFORMED, **LIBRARY_REFUSES}


def _password_hash() -> tuple[PasswordHash, AdmittedHasher, AdmittedHasher]:
    params = dataclasses.replace(profiles.CHEAPEST, mem_cost=3, start_mem_cost=3)
    twocats = TwoCatsHasher(PasswordHasher.from_params(params))
    argon2 = AdmittedHasher(Argon2Hasher(time_cost=1, memory_cost=8, parallelism=1), twocats.hasher)
    bcrypt = AdmittedHasher(BcryptHasher(rounds=4), twocats.hasher)
    return PasswordHash((twocats, argon2, bcrypt)), argon2, bcrypt


@pytest.mark.parametrize("stored", ROWS.values(), ids=ROWS.keys())
def test_a_malformed_row_is_a_wrong_password(stored: str) -> None:
    """AdmittedHasher answers False for a malformed argon2 or bcrypt row, as str or bytes."""
    password_hash, argon2, bcrypt = _password_hash()
    for admitted in (argon2, bcrypt):
        assert admitted.verify("password", stored) is False
        assert admitted.verify(b"password", stored.encode()) is False
    try:
        answer = password_hash.verify_and_update("password", stored)
    except UnknownHashError:
        # pwdlib tells no hasher claims the row: the example answers that as a wrong password.
        return
    assert answer == (False, None)


def test_good_rows_still_verify() -> None:
    """The same hashers verify well-formed rows, and say no to a wrong password."""
    _, argon2, bcrypt = _password_hash()
    for admitted in (argon2, bcrypt):
        stored = admitted.hash("password")
        answers = admitted.verify("password", stored), admitted.verify("wrong", stored)
        assert answers == (True, False)
