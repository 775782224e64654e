"""passlib's argon2 and bcrypt handlers verified within the twocats hasher's admission, limits."""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("passlib", reason="the test extra installs libpass")

from passlib.context import CryptContext
from passlib.hash import argon2, bcrypt

from tests.support.foreign_rows import LIBRARY_REFUSES, MALFORMED, SALT
from twocats.exceptions import InvalidHashError
from twocats.integrations.passlib import TwoCatsHandler, admitted

PLANTED = "$argon2id$v=19$m=1048576,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"


def _context() -> tuple[CryptContext, type, type]:
    twocats = TwoCatsHandler.using(profile="cheapest")
    old_argon2 = argon2.using(memory_cost=1024, rounds=1)
    old_bcrypt = bcrypt.using(rounds=4)
    schemes = [
        twocats,
        admitted(old_argon2, twocats.hasher()),
        admitted(old_bcrypt, twocats.hasher()),
    ]
    return CryptContext(schemes=schemes, deprecated=["auto"]), old_argon2, old_bcrypt


def test_admitted_handlers_verify_and_hand_back_twocats_hashes() -> None:
    """Older argon2 and bcrypt hashes verify, and verify_and_update replaces them with twocats."""
    context, old_argon2, old_bcrypt = _context()
    for handler in (old_argon2, old_bcrypt):
        stored = handler.hash("old password")
        assert context.verify("old password", stored)
        assert not context.verify("wrong", stored)
        valid, updated = context.verify_and_update("old password", stored)
        assert valid
        assert updated is not None
        assert updated.startswith("$twocats$")


def test_a_planted_argon2_hash_raises_value_error_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 1 GiB argon2 hash is refused like a twocats hash above the limits: ValueError, logged."""
    context, _, _ = _context()
    with (
        caplog.at_level(logging.WARNING, logger="twocats.integrations"),
        pytest.raises(ValueError, match="argon2id hash is refused"),
    ):
        context.verify("old password", PLANTED)
    assert "argon2id hash is refused" in caplog.text


ROWS = {**MALFORMED, **LIBRARY_REFUSES}


def _answer(call: Any, stored: str) -> object:
    """What `call` answers for `stored`: its result, or the ValueError it raised."""
    try:
        return call("password", stored)
    except ValueError as error:
        return error


# passlib warns of the bcrypt salt whose unused bits are set, as it reads it leniently.
@pytest.mark.filterwarnings("ignore:encountered a bcrypt salt with incorrectly set padding bits")
@pytest.mark.parametrize("stored", ROWS.values(), ids=ROWS.keys())
def test_a_malformed_row_is_a_value_error_naming_only_its_scheme(stored: str) -> None:
    """A malformed argon2 or bcrypt row is passlib's ValueError holding none of the row (or, for a
    bcrypt salt passlib reads leniently, a mismatch)."""
    context, _, _ = _context()
    for call in (context.verify, context.verify_and_update):
        answer = _answer(call, stored)
        if answer in (False, (False, None)) and stored in LIBRARY_REFUSES.values():
            continue
        assert isinstance(answer, InvalidHashError), answer
        assert "malformed" in str(answer)
        assert SALT not in str(answer)
        assert "aaaa" not in str(answer)
        assert answer.__cause__ is None
        assert answer.__context__ is None or answer.__suppress_context__
