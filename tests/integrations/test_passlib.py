"""The CryptContext handler with the installed libpass (or passlib 1.7.4): hash, verify, migrate."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

pytest.importorskip("passlib", reason="the test extra installs libpass")

from passlib.context import CryptContext
from passlib.hash import argon2

from twocats import InvalidHashError, InvalidParametersError, PasswordHasher, phc, profiles
from twocats.integrations.passlib import TwoCatsHandler
from twocats.kdf.engine import Engine
from twocats.params import Params

PASSWORD = "correct horse battery staple"
WRONG = "Tr0ub4dor&3"
CHEAP = dataclasses.replace(profiles.CHEAPEST, mem_cost=3, start_mem_cost=3)


def _context(**settings: object) -> CryptContext:
    """twocats first (at CHEAP unless told), then a cheap argon2 for the old hashes."""
    options: dict[str, object] = {
        "twocats__profile": phc.encode_params(CHEAP),
        "argon2__rounds": 1,
    }
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
        ({"profile": "fastest"}, "profile must be a parameter string"),
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


# -- CryptContext checks --------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:the method passlib.context.CryptContext.genhash")
def test_context_genhash_reproduces_a_hash_for_its_password_only() -> None:
    """CryptContext.genhash gives back the stored hash for its password, another for a wrong one."""
    context = _context()
    stored = context.hash(PASSWORD)
    assert context.genhash(PASSWORD, stored) == stored
    assert context.genhash(WRONG, stored) != stored
    assert context.genhash(PASSWORD.encode(), stored.encode()) == stored
    with pytest.raises(ValueError, match="memory"):
        context.genhash(PASSWORD, OVERSIZED, scheme="twocats")


@pytest.mark.parametrize("value", [None, 1, 2.5, ["$twocats$"]])
def test_hashes_of_another_type_are_type_errors(value: object) -> None:
    """identify, verify, genhash and needs_update raise TypeError for a non-string hash."""
    for call in (
        lambda: TwoCatsHandler.identify(value),  # type: ignore[arg-type]
        lambda: TwoCatsHandler.verify(PASSWORD, value),  # type: ignore[arg-type]
        lambda: TwoCatsHandler.genhash(PASSWORD, value),  # type: ignore[arg-type]
        lambda: TwoCatsHandler.needs_update(value),  # type: ignore[arg-type]
    ):
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize(
    "profile", ["cheapest", phc.encode_params(CHEAP)], ids=["name", "parameter string"]
)
def test_context_to_string_round_trips(profile: str) -> None:
    """A context given its profile as a name or a parameter string is written and read back."""
    from passlib.registry import register_crypt_handler

    register_crypt_handler(TwoCatsHandler, force=True)
    context = CryptContext(
        schemes=["twocats"], twocats__profile=profile, twocats__previous="interactive moderate"
    )
    text = context.to_string()
    assert f"twocats__profile = {profile}" in text
    again = CryptContext.from_string(text)
    assert again.handler("twocats").params == context.handler("twocats").params
    assert again.handler("twocats").previous == (profiles.INTERACTIVE, profiles.MODERATE)


def test_a_params_profile_is_refused_with_the_fix_named() -> None:
    """A Params, which to_string() could not save, is refused up front; its string is taken."""
    for settings in ({"profile": CHEAP}, {"previous": CHEAP}, {"previous": [CHEAP]}):
        with pytest.raises(InvalidParametersError, match=r"phc\.encode_params\(params\)"):
            TwoCatsHandler.using(**settings)
    with pytest.raises(InvalidParametersError, match=r"phc\.encode_params\(params\)"):
        CryptContext(schemes=[TwoCatsHandler], twocats__profile=CHEAP)
    assert TwoCatsHandler.using(profile=phc.encode_params(CHEAP)).params == CHEAP


def test_limit_settings_reach_the_hasher() -> None:
    """previous, max_memory and max_work set the stored-hash limits of the handler."""
    earlier = dataclasses.replace(profiles.SENSITIVE, multiplies=8, lanes=1, sub_block_size=32)
    planted = phc.encode(earlier, b"saltsaltsaltsalt", bytes(32))
    with pytest.raises(ValueError, match="more than max_work"):
        _context().verify(PASSWORD, planted)
    declared = _context(previous=phc.encode_params(earlier))
    assert declared.handler("twocats").previous == (earlier,)
    assert not declared.verify(WRONG, phc.encode(CHEAP, b"saltsaltsaltsalt", bytes(32)))
    handler = TwoCatsHandler.using(profile="cheapest", max_memory=str(64 << 20), max_work="100000")
    assert (handler._hasher().max_memory, handler._hasher().max_work) == (64 << 20, 10**5)


def test_a_refused_hash_is_logged_without_the_hash(caplog: pytest.LogCaptureFixture) -> None:
    """A stored hash above the limits raises ValueError and logs its parameters, not itself."""
    with (
        caplog.at_level("WARNING", logger="twocats.integrations"),
        pytest.raises(ValueError, match="memory"),
    ):
        _context().verify(PASSWORD, OVERSIZED)
    assert "mem_cost=30 needs 1 TiB" in caplog.text
    assert OVERSIZED.rpartition("$")[2] not in caplog.text


@pytest.fixture(scope="module")
def default_hash() -> str:
    """A real hash of the default profile (mem_cost 18, 256 MiB)."""
    return PasswordHasher().hash(PASSWORD)


@pytest.mark.parametrize(
    "settings", [{"mem_cost": 17}, {"profile": "interactive"}], ids=["mem_cost 17", "interactive"]
)
def test_a_default_profile_hash_verifies_and_is_rehashed_down(
    default_hash: str, settings: dict[str, object]
) -> None:
    """Lowering the cost: verify_and_update accepts an m=18 hash and rehashes it lower."""
    context = CryptContext(
        schemes=[TwoCatsHandler], **{f"twocats__{k}": v for k, v in settings.items()}
    )
    assert context.needs_update(default_hash)
    valid, rehashed = context.verify_and_update(PASSWORD, default_hash)
    assert valid
    assert rehashed is not None
    assert phc.decode(rehashed).params == context.handler("twocats").params
    assert context.verify_and_update(WRONG, default_hash) == (False, None)


def test_dummy_verify_takes_the_shape_of_upgraded_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """With start_mem_cost, dummy_verify derives exactly the shape of an upgraded hash."""
    shapes: list[Params] = []
    derive = Engine.derive

    def recording(self: Engine, password: bytes, salt: bytes, params: Params, **kw: Any) -> bytes:
        shapes.append(params)
        return derive(self, password, salt, params, **kw)

    monkeypatch.setattr(Engine, "derive", recording)
    upgraded = dataclasses.replace(CHEAP, start_mem_cost=1)
    assert _context(start_mem_cost=1).dummy_verify() is False
    assert shapes[-1] == upgraded
    assert _context().dummy_verify() is False
    assert shapes[-1] == CHEAP
