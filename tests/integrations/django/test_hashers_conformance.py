"""Django's own hasher checks mirrored for the twocats hasher; lowering the cost; the decoy.

Each test below names the test of Django 5.2's ``tests/auth_tests/test_hashers.py`` it mirrors
(Django's suite is written for its own hashers, so it cannot run on another one as it is).  The
one divergence is the salt length: a PHC string holds salts of 8 to 64 bytes, so Django's
7-character ``"seasalt"`` is refused, with a clear error, where Django's PBKDF2 accepts it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

django = pytest.importorskip("django", reason="the test extra installs Django")

from django.contrib.auth.hashers import (  # noqa: E402
    PBKDF2PasswordHasher,
    acheck_password,
    check_password,
    get_hasher,
    identify_hasher,
    is_password_usable,
    make_password,
)

from twocats import InvalidParametersError, PasswordHasher, kdf, phc, profiles  # noqa: E402
from twocats.integrations.django import TwoCatsPasswordHasher  # noqa: E402
from twocats.kdf.engine import Engine  # noqa: E402
from twocats.kdf.limits import estimated_work  # noqa: E402
from twocats.params import Params  # noqa: E402

CHEAP = dataclasses.replace(profiles.CHEAPEST, mem_cost=3, start_mem_cost=3)

#: ``hasher.encode("lètmein", "seasalt2")`` at CHEAP, computed with the plain-Python reference.
KNOWN = (
    "twocats$twocats$v=2015$m=3,x=1,p=1,b=32,sb=32$c2Vhc2FsdDI$"
    "6l6ALM2GwYcXuS18pxwW7tqW7UW2yh2Mf3zHklCIg+Q"
)


class CheapTwoCats(TwoCatsPasswordHasher):
    """The twocats hasher at 8 KiB, so that Django's checks run in milliseconds."""

    params = CHEAP


class UpgradedShapeTwoCats(CheapTwoCats):
    """New hashes take the shape of values upgraded from mem_cost 1 (the decoy setting)."""

    start_mem_cost = 1


class FastPBKDF2(PBKDF2PasswordHasher):
    """Django's PBKDF2 hasher with one iteration, for the migration checks."""

    iterations = 1


class Lowered17(TwoCatsPasswordHasher):
    """The default profile lowered by one memory cost."""

    mem_cost = 17


class LoweredInteractive(TwoCatsPasswordHasher):
    """The INTERACTIVE profile, lower than the default in memory and multiplies."""

    params = profiles.INTERACTIVE


def _path(cls: type) -> str:
    return f"{__name__}.{cls.__qualname__}"


HASHERS = [_path(CheapTwoCats), _path(FastPBKDF2), "django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="module", autouse=True)
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A migrated SQLite project with the cheap twocats hasher first."""
    from django.test import override_settings

    from tests.support.django_project import configure

    configure(tmp_path_factory.mktemp("django"))
    with override_settings(PASSWORD_HASHERS=HASHERS):
        yield


def _reference(encoded: str, password: str) -> bool:
    """Recompute a stored value with the plain-Python reference and compare."""
    stored = phc.decode(encoded.removeprefix("twocats"))
    output = kdf.derive(password.encode(), stored.salt, stored.params, backend="reference")
    return output == stored.digest


# -- TestUtilsHashPass -----------------------------------------------------------------------------


def test_simple() -> None:
    """Mirrors test_simple: make_password, check_password and blank passwords."""
    encoded = make_password("lètmein")
    assert encoded.startswith("twocats$twocats$")
    assert is_password_usable(encoded)
    assert check_password("lètmein", encoded)
    assert not check_password("lètmeinz", encoded)
    blank = make_password("")
    assert blank.startswith("twocats$")
    assert check_password("", blank)
    assert not check_password(" ", blank)


async def _acheck(encoded: str) -> tuple[bool, bool]:
    return await acheck_password("lètmein", encoded), await acheck_password("lètmeinz", encoded)


def test_acheck_password() -> None:
    """Mirrors test_acheck_password: the asynchronous check answers as the synchronous one."""
    import asyncio

    assert asyncio.run(_acheck(make_password("lètmein"))) == (True, False)


def test_bytes() -> None:
    """Mirrors test_bytes: a bytes password hashes and checks."""
    encoded = make_password(b"bytes_password")
    assert encoded.startswith("twocats$")
    assert check_password(b"bytes_password", encoded) is True


def test_invalid_password() -> None:
    """Mirrors test_invalid_password: Django refuses a password of another type first."""
    with pytest.raises(TypeError, match=r"Password must be a string or bytes, got int\."):
        make_password(1)  # type: ignore[arg-type]


def test_known_value_and_salt_entropy() -> None:
    """Mirrors test_pbkdf2: a known value (checked by the reference) and the salt entropy check.

    Django's test uses the 7-character salt "seasalt"; a PHC salt is 8 to 64 bytes, so that
    salt is refused with a clear error and the known value uses "seasalt2" (as
    test_low_level_pbkdf2 does).
    """
    encoded = make_password("lètmein", "seasalt2", "twocats")
    assert encoded == KNOWN
    assert _reference(encoded, "lètmein")
    assert check_password("lètmein", encoded)
    assert not check_password("lètmeinz", encoded)
    assert identify_hasher(encoded).algorithm == "twocats"
    with pytest.raises(InvalidParametersError, match="salt must be 8 to 64 bytes long"):
        make_password("lètmein", "seasalt", "twocats")
    hasher = get_hasher("twocats")
    weak = make_password("lètmein", "iodizedsalt", "twocats")
    strong = make_password("lètmein", hasher.salt(), "twocats")
    assert hasher.must_update(weak) is True
    assert hasher.must_update(strong) is False


def test_low_level_encode() -> None:
    """Mirrors test_low_level_pbkdf2: encode with an explicit salt gives the known value."""
    hasher = CheapTwoCats()
    assert hasher.encode("lètmein", "seasalt2") == KNOWN
    assert hasher.verify("lètmein", KNOWN)


def test_salt_check() -> None:
    """Mirrors test_bcrypt_salt_check: a value made with the hasher's own salt is up to date."""
    hasher = CheapTwoCats()
    assert hasher.must_update(hasher.encode("lètmein", hasher.salt())) is False


def test_upgrade() -> None:
    """Mirrors test_upgrade: values of the other hashers are rehashed with twocats."""
    for algorithm in ("pbkdf2_sha256", "md5"):
        encoded = make_password("lètmein", hasher=algorithm)
        upgraded: list[str] = []
        assert check_password("lètmein", encoded, upgraded.append)
        assert upgraded == ["lètmein"], algorithm


def test_no_upgrade() -> None:
    """Mirrors test_no_upgrade: a wrong password never rehashes."""
    encoded = make_password("lètmein")
    state = {"upgraded": False}

    def setter(password: str) -> None:
        state["upgraded"] = True

    assert not check_password("WRONG", encoded, setter)
    assert not state["upgraded"]


def test_no_upgrade_on_incorrect_pass() -> None:
    """Mirrors test_no_upgrade_on_incorrect_pass: a wrong password on another hasher's value."""
    for algorithm in ("pbkdf2_sha256", "md5"):
        encoded = make_password("lètmein", hasher=algorithm)
        upgraded: list[str] = []
        assert not check_password("WRONG", encoded, upgraded.append)
        assert upgraded == []


@pytest.mark.parametrize(
    ("attr", "summary_key", "new_value"),
    [("mem_cost", "memory cost", 2), ("multiplies", "multiplies", 2), ("parallelism", None, 2)],
)
def test_cost_attribute_upgrade(attr: str, summary_key: str | None, new_value: int) -> None:
    """Mirrors _test_argon2_upgrade and test_pbkdf2_upgrade: costs set on the hasher instance."""
    hasher = get_hasher("twocats")
    old_value = getattr(hasher, attr)
    try:
        setattr(hasher, attr, new_value)
        encoded = make_password("letmein", hasher="twocats")
        summary = hasher.safe_summary(encoded)
        shown = summary["memory cost"].split()[0] if attr == "mem_cost" else summary[attr]
        assert int(shown) == new_value if summary_key else phc.decode(encoded[7:]).params
        assert getattr(phc.decode(encoded[7:]).params, attr) == new_value
        state = {"upgraded": False}

        def setter(password: str) -> None:
            state["upgraded"] = True

        assert check_password("letmein", encoded, setter, "twocats")
        assert not state["upgraded"]
        setattr(hasher, attr, old_value)
        assert check_password("letmein", encoded, setter, "twocats")
        assert state["upgraded"]
    finally:
        setattr(hasher, attr, old_value)


def test_cost_patched_on_the_class_after_first_use() -> None:
    """Mirrors test_pbkdf2_upgrade_new_hasher: a class attribute changed after use takes effect."""

    class Patched(CheapTwoCats):
        """A class of its own, patched below."""

    hasher = Patched()
    before = hasher.encode("letmein", hasher.salt())
    Patched.mem_cost = 2
    after = hasher.encode("letmein", hasher.salt())
    assert phc.decode(after[7:]).params.mem_cost == 2
    assert hasher.must_update(before)
    Patched.mem_cost = None
    assert not hasher.must_update(before)


def test_harden_runtime() -> None:
    """Mirrors test_pbkdf2_harden_runtime: a wrong password spends the missing upgrade, once."""
    hasher = get_hasher("twocats")
    hasher.mem_cost = 1
    try:
        encoded = make_password("letmein")
    finally:
        del hasher.mem_cost
    calls: list[str] = []
    upgrade = hasher.upgrade

    def recording(value: str) -> str:
        calls.append(value)
        return upgrade(value)

    hasher.upgrade = recording  # type: ignore[method-assign]
    try:
        hasher.harden_runtime("wrong_password", encoded)
    finally:
        del hasher.upgrade
    assert calls == [encoded]


def test_check_password_calls_harden_runtime() -> None:
    """Mirrors test_check_password_calls_harden_runtime: only a wrong password on a stale value."""
    hasher = get_hasher("twocats")
    hasher.mem_cost = 1
    try:
        encoded = make_password("letmein")
    finally:
        del hasher.mem_cost
    calls: list[str] = []
    record = lambda password, value: calls.append(value)  # noqa: E731
    hasher.harden_runtime = record  # type: ignore[method-assign]
    try:
        check_password("letmein", encoded)
        assert calls == []
        check_password("wrong_password", encoded)
        assert calls == [encoded]
    finally:
        del hasher.harden_runtime


def test_unusable_and_unspecified_password() -> None:
    """Mirrors test_unusable and test_unspecified_password with twocats as the default hasher."""
    encoded = make_password(None)
    assert not is_password_usable(encoded)
    assert not check_password(None, encoded)
    assert not check_password("", encoded)
    assert not check_password(None, make_password("lètmein"))


@pytest.mark.parametrize("salt", [None, "", "sea$salt"])
def test_encode_invalid_salt(salt: str | None) -> None:
    """Mirrors test_encode_invalid_salt: Django's own check and message."""
    with pytest.raises(ValueError, match=r"salt must be provided and cannot contain \$\."):
        CheapTwoCats().encode("password", salt)  # type: ignore[arg-type]


def test_encode_password_required() -> None:
    """Mirrors test_encode_password_required: Django's own check and message."""
    with pytest.raises(TypeError, match=r"password must be provided\."):
        CheapTwoCats().encode(None, "seasalt2")  # type: ignore[arg-type]


# -- TestUtilsHashPassArgon2 -----------------------------------------------------------------------


def test_decode() -> None:
    """Mirrors test_argon2_decode: decode gives the costs and the salt given, non-ASCII too."""
    hasher = get_hasher("twocats")
    for salt in ("abcdefghijk", "sél de mer", "塩塩塩"):
        decoded = hasher.decode(make_password("lètmein", salt=salt, hasher="twocats"))
        assert decoded["salt"] == salt
        assert decoded["params"] == CHEAP
    planted = "twocats" + phc.encode(CHEAP, b"\xff\xfe\x00\x80salt", bytes(32))
    assert hasher.decode(planted)["salt"] == "\\xff\\xfe\x00\\x80salt"


def test_version_upgrade() -> None:
    """Mirrors test_argon2_version_upgrade: a costlier value verifies on a cheaper hasher."""
    costly = dataclasses.replace(CHEAP, mem_cost=6, start_mem_cost=6, multiplies=3)
    encoded = "twocats" + PasswordHasher.from_params(costly, salt_len=22).hash("secret")
    state = {"upgraded": False}

    def setter(password: str) -> None:
        state["upgraded"] = True

    assert check_password("secret", encoded, setter, "twocats")
    assert state["upgraded"]


# -- lowering the cost never locks anyone out ------------------------------------------------------


@pytest.fixture(scope="module")
def default_value() -> str:
    """A real value of the default profile (mem_cost 18, 256 MiB), with a Django-length salt."""
    return "twocats" + PasswordHasher().hash("letmein", salt=b"abcdefghijklmnopqrstuv")


@pytest.mark.parametrize(
    "lowered", [Lowered17, LoweredInteractive], ids=["mem_cost 17", "interactive"]
)
def test_a_default_profile_value_verifies_and_is_rehashed_down(
    default_value: str, lowered: type[TwoCatsPasswordHasher]
) -> None:
    """A mem_cost 18 value verifies under a lower configuration and is rehashed to it."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=[_path(lowered)]):
        hasher = get_hasher("twocats")
        assert hasher.must_update(default_value)
        new: list[str] = []
        assert check_password("letmein", default_value, lambda p: new.append(make_password(p)))
        assert not check_password("wrong", default_value)
        assert len(new) == 1
        assert phc.decode(new[0][7:]).params == hasher.hasher.params
        assert check_password("letmein", new[0])


def test_a_refused_value_is_logged_and_the_check_stays_silent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A value above the limits fails and logs its parameters; no configured set is refused."""
    from django.core import checks

    planted = "twocats" + phc.encode(Params(mem_cost=22), b"abcdefghijklmnopqrstuv", bytes(32))
    with caplog.at_level("WARNING", logger="twocats.integrations"):
        assert not check_password("letmein", planted)
    assert "mem_cost=22 needs 4 GiB" in caplog.text
    assert "more than max_memory (1 GiB" in caplog.text
    assert "declare their parameters as previous" in caplog.text
    assert planted.rpartition("$")[2] not in caplog.text
    messages = checks.run_checks(tags=["security"])
    assert [m for m in messages if m.id.startswith("twocats.")] == []


# -- the decoy of a login naming no user (issue 22) ------------------------------------------------


@pytest.fixture
def derived(monkeypatch: pytest.MonkeyPatch) -> list[Params]:
    """The parameters of every derivation the engines run, in order (the real work still runs)."""
    shapes: list[Params] = []
    derive = Engine.derive

    def recording(self: Engine, password: bytes, salt: bytes, params: Params, **kw: Any) -> bytes:
        shapes.append(params)
        return derive(self, password, salt, params, **kw)

    monkeypatch.setattr(Engine, "derive", recording)
    return shapes


def _upgraded_user(model: Any) -> None:
    """A user whose value was made at mem_cost 1 and upgraded offline to 3, as upgrade-db does."""
    old = dataclasses.replace(CHEAP, mem_cost=1, start_mem_cost=1)
    value = "twocats" + PasswordHasher.from_params(old, salt_len=22).hash("letmein")
    model.objects.create(username="upgraded", password=CheapTwoCats().upgrade(value))


@pytest.mark.parametrize("configured", [CheapTwoCats, UpgradedShapeTwoCats])
def test_a_missing_user_costs_what_an_upgraded_one_costs(
    derived: list[Params], configured: type[TwoCatsPasswordHasher]
) -> None:
    """authenticate() derives the same shape for a missing user as for an upgraded one.

    Only with ``start_mem_cost`` set to the cost the values were upgraded from: without it
    Django's decoy (a fresh hash) skips the levels an upgraded value recomputes.
    """
    from django.contrib.auth import authenticate, get_user_model
    from django.test import override_settings

    model = get_user_model()
    with override_settings(PASSWORD_HASHERS=[_path(configured)]):
        _upgraded_user(model)
        derived.clear()
        try:
            assert authenticate(None, username="upgraded", password="letmein") is not None
            assert authenticate(None, username="upgraded", password="wrong") is None
            upgraded = list(derived)
            derived.clear()
            assert authenticate(None, username="nobody", password="letmein") is None
            missing = list(derived)
        finally:
            model.objects.all().delete()
    assert [p.start_mem_cost for p in upgraded] == [1, 1]
    if configured is UpgradedShapeTwoCats:
        assert missing == [upgraded[0]]
        assert estimated_work(missing[0]) == estimated_work(upgraded[0])
    else:
        assert [p.start_mem_cost for p in missing] == [3]
        assert estimated_work(missing[0]) < estimated_work(upgraded[0])


def test_a_wrong_password_on_a_value_made_before_the_setting_costs_the_decoy(
    derived: list[Params],
) -> None:
    """harden_runtime adds the levels below a fresh value's start: the work of the decoy."""
    from django.contrib.auth import authenticate, get_user_model
    from django.test import override_settings

    model = get_user_model()
    with override_settings(PASSWORD_HASHERS=[_path(UpgradedShapeTwoCats)]):
        model.objects.create(username="fresh", password=CheapTwoCats().encode("letmein", "a" * 22))
        derived.clear()
        try:
            assert authenticate(None, username="fresh", password="wrong") is None
            existing = list(derived)
            derived.clear()
            assert authenticate(None, username="nobody", password="wrong") is None
            missing = list(derived)
        finally:
            model.objects.all().delete()
    assert [(p.mem_cost, p.start_mem_cost) for p in existing] == [(3, 3), (2, 1)]
    assert [(p.mem_cost, p.start_mem_cost) for p in missing] == [(3, 1)]
    assert sum(map(estimated_work, existing)) == estimated_work(missing[0])
