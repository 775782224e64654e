"""The CryptContext handler with the installed libpass (or passlib 1.7.4): hash, verify, migrate."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("passlib", reason="the test extra installs libpass")

from passlib.context import CryptContext
from passlib.hash import argon2

from twocats import InvalidHashError, InvalidParametersError, profiles
from twocats.integrations.passlib import TwoCatsHandler

PASSWORD = "correct horse battery staple"
WRONG = "Tr0ub4dor&3"
CHEAP = dataclasses.replace(profiles.CHEAPEST, mem_cost=3, start_mem_cost=3)


def _context(**settings: object) -> CryptContext:
    """twocats first (at CHEAP unless told), then a cheap argon2 for the old hashes."""
    options: dict[str, object] = {"twocats__profile": CHEAP, "argon2__rounds": 1}
    options.update({f"twocats__{key}": value for key, value in settings.items()})
    options["argon2__memory_cost"] = 8
    options["argon2__parallelism"] = 1
    return CryptContext(schemes=[TwoCatsHandler, "argon2"], deprecated="auto", **options)


def test_context_hashes_and_verifies_with_twocats() -> None:
    """The context's default scheme is twocats; its hashes verify and identify."""
    context = _context()
    stored = context.hash(PASSWORD)
    assert stored.startswith("$twocats$v=2015$m=3,")
    assert context.identify(stored) == "twocats"
    assert context.verify(PASSWORD, stored)
    assert not context.verify(WRONG, stored)
    assert context.verify(PASSWORD.encode(), stored.encode())
    assert not context.needs_update(stored)
    assert TwoCatsHandler.identify(stored)
    assert TwoCatsHandler.identify(stored.encode())
    assert not TwoCatsHandler.identify("$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$abc")


def test_context_migrates_argon2_and_stale_twocats_hashes() -> None:
    """verify_and_update replaces an argon2 hash, and a twocats one of another memory cost."""
    context = _context()
    old = argon2.using(rounds=1, memory_cost=8, parallelism=1).hash(PASSWORD)
    assert context.identify(old) == "argon2"
    assert context.verify_and_update(WRONG, old) == (False, None)
    valid, updated = context.verify_and_update(PASSWORD, old)
    assert valid
    assert updated is not None
    assert updated.startswith("$twocats$v=2015$m=3,")
    assert context.verify_and_update(PASSWORD, updated) == (True, None)

    stale = _context(mem_cost=1).hash(PASSWORD)
    assert stale.startswith("$twocats$v=2015$m=1,")
    assert context.needs_update(stale)
    valid, rehashed = context.verify_and_update(PASSWORD, stale)
    assert valid
    assert rehashed is not None
    assert rehashed.startswith("$twocats$v=2015$m=3,")


def test_settings_from_text_as_an_ini_file_gives_them() -> None:
    """Settings given as text (profile name, integers) configure the handler."""
    context = _context(profile="cheapest", mem_cost="2", multiplies="1", parallelism="1")
    stored = context.hash(PASSWORD)
    assert stored.startswith("$twocats$v=2015$m=2,")
    handler = context.handler("twocats")
    assert handler.params == dataclasses.replace(CHEAP, mem_cost=2, start_mem_cost=2)
    assert TwoCatsHandler.params == profiles.DEFAULT


def test_a_registered_handler_is_named_in_an_ini_configuration() -> None:
    """Once registered, an ini-style configuration names the scheme "twocats"."""
    from passlib.registry import register_crypt_handler

    register_crypt_handler(TwoCatsHandler)
    context = CryptContext.from_string(
        "[passlib]\nschemes = twocats, argon2\ndeprecated = auto\n"
        "twocats__profile = cheapest\ntwocats__mem_cost = 2\n"
    )
    stored = context.hash(PASSWORD)
    assert stored.startswith("$twocats$v=2015$m=2,")
    assert context.verify(PASSWORD, stored)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"mem_cost": "lots"}, "mem_cost must be an integer"),
        ({"mem_cost": "\u00b2"}, "mem_cost must be an integer"),
        ({"profile": "fastest"}, "profile must be a twocats.Params, a parameter string"),
        ({"multiplies": 9}, "multiplies must be"),
    ],
)
def test_bad_settings_fail_when_the_context_is_built(
    settings: dict[str, object], message: str
) -> None:
    """A bad setting is refused by CryptContext itself, naming the setting."""
    with pytest.raises(InvalidParametersError, match=message):
        _context(**settings)


def test_unknown_setting_is_refused() -> None:
    """A setting the handler does not have is a KeyError from CryptContext, as for any handler."""
    with pytest.raises(KeyError, match="salt_size"):
        _context(salt_size=8)


MALFORMED = [
    "$twocats$",
    "$twocats$v=2015$m=3,p=1,b=32,sb=32$AAAAAAAAAAA$AAAA",
    "$twocats$v=2015$m=3,p=1,b=32,sb=32$" + PASSWORD,
]
OVERSIZED = "$twocats$v=2015$m=30$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43


def _check_clean(error: BaseException) -> None:
    assert isinstance(error, InvalidHashError)
    for item in (error, error.__cause__, error.__context__):
        assert item is None or PASSWORD not in str(item)


@pytest.mark.parametrize("stored", MALFORMED)
def test_malformed_hashes_raise_value_error_without_secrets(stored: str) -> None:
    """verify and needs_update raise ValueError for a malformed hash (passlib's rule)."""
    context = _context()
    for call in (lambda: context.verify(PASSWORD, stored), lambda: context.needs_update(stored)):
        with pytest.raises(ValueError, match=r"twocats|hash|salt|parameter") as caught:
            call()
        _check_clean(caught.value)


def test_an_oversized_hash_is_refused_before_any_work() -> None:
    """A well-formed hash asking for 1 TiB is a ValueError at verify and needs updating."""
    context = _context()
    with pytest.raises(ValueError, match="memory") as caught:
        context.verify(PASSWORD, OVERSIZED)
    _check_clean(caught.value)
    assert context.needs_update(OVERSIZED)


def test_handler_repr_hides_nothing_secret() -> None:
    """The configured handler's repr and params never carry a password or a hash."""
    context = _context()
    stored = context.hash(PASSWORD)
    handler = context.handler("twocats")
    text = repr(handler) + repr(handler.params)
    assert PASSWORD not in text
    assert stored.rpartition("$")[2] not in text
