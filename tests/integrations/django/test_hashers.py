"""The Django adapter against a real Django project: SQLite database, migrations, authenticate."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import param_sets

django = pytest.importorskip("django", reason="the test extra installs Django")

from django.contrib.auth.hashers import (  # noqa: E402
    Argon2PasswordHasher,
    BCryptSHA256PasswordHasher,
    PBKDF2PasswordHasher,
)

from twocats import InvalidHashError, InvalidParametersError, PasswordHasher, profiles  # noqa: E402
from twocats.integrations.django import MAX_STORED_LENGTH, TwoCatsPasswordHasher  # noqa: E402
from twocats.integrations.django.hashers import longest_stored  # noqa: E402
from twocats.kdf.limits import format_work  # noqa: E402
from twocats.params import Params  # noqa: E402

PASSWORD = "correct horse battery staple"
WRONG = "Tr0ub4dor&3"


class OldTwoCats(TwoCatsPasswordHasher):
    """The cheapest twocats parameters: the configuration hashes were made with."""

    params = profiles.CHEAPEST


class CheapTwoCats(TwoCatsPasswordHasher):
    """The cheapest parameters at 8 KiB: the configuration to upgrade to."""

    params = profiles.CHEAPEST
    mem_cost = 3


class FastPBKDF2(PBKDF2PasswordHasher):
    """Django's PBKDF2 hasher with few iterations, so that the tests stay fast."""

    iterations = 1000


class FastArgon2(Argon2PasswordHasher):
    """Django's argon2 hasher at its cheapest."""

    time_cost = 1
    memory_cost = 8
    parallelism = 1


class FastBCrypt(BCryptSHA256PasswordHasher):
    """Django's bcrypt hasher at its cheapest."""

    rounds = 4


class Blake2bTwoCats(TwoCatsPasswordHasher):
    """A 64-byte output: its stored values cannot fit Django's column."""

    params = dataclasses.replace(
        profiles.CHEAPEST, hash_type="blake2b", block_size=64, sub_block_size=64
    )


def _old_value(password: str) -> str:
    """A value stored before the memory cost was raised (the cheapest parameters)."""
    return OldTwoCats().encode(password, OldTwoCats().salt())


def _path(cls: type) -> str:
    return f"{__name__}.{cls.__qualname__}"


HASHERS = [_path(CheapTwoCats), _path(FastPBKDF2), _path(FastArgon2), _path(FastBCrypt)]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A Django project with a migrated SQLite database and twocats first in PASSWORD_HASHERS."""
    from django.test import override_settings

    from tests.support.django_project import configure

    configure(tmp_path_factory.mktemp("django"))
    with override_settings(PASSWORD_HASHERS=HASHERS):
        yield


@pytest.fixture
def user_model(project: None) -> Iterator[Any]:
    """The user model, emptied after the test."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    yield model
    model.objects.all().delete()


def _login(username: str, password: str) -> Any:
    from django.contrib.auth import authenticate

    return authenticate(None, username=username, password=password)


@pytest.mark.parametrize("algorithm", ["pbkdf2_sha256", "argon2", "bcrypt_sha256"])
def test_users_of_other_hashers_move_to_twocats_at_login(user_model: Any, algorithm: str) -> None:
    """A PBKDF2, argon2 or bcrypt user logs in, is rehashed with twocats, and logs in again."""
    from django.contrib.auth.hashers import make_password

    user = user_model.objects.create(username="ada")
    user.password = make_password(PASSWORD, hasher=algorithm)
    user.save()
    old = user.password
    assert old.startswith(algorithm + "$")
    assert _login("ada", WRONG) is None
    user.refresh_from_db()
    assert user.password == old
    assert _login("ada", PASSWORD) is not None
    user.refresh_from_db()
    assert user.password.startswith("twocats$twocats$v=2015$m=3,")
    assert len(user.password) <= MAX_STORED_LENGTH
    assert _login("ada", PASSWORD) is not None
    assert _login("ada", WRONG) is None


def test_new_users_get_twocats_and_stale_twocats_hashes_are_rehashed(user_model: Any) -> None:
    """create_user stores twocats; a hash of other parameters is rehashed at the next login."""
    user_model.objects.create_user("bob", password=PASSWORD)
    user = user_model.objects.get(username="bob")
    assert user.password.startswith("twocats$")
    assert not CheapTwoCats().must_update(user.password)
    user.password = OldTwoCats().encode(PASSWORD, OldTwoCats().salt())
    user.save()
    assert CheapTwoCats().must_update(user.password)
    assert _login("bob", WRONG) is None
    assert _login("bob", PASSWORD) is not None
    user.refresh_from_db()
    assert not CheapTwoCats().must_update(user.password)
    assert _login("bob", PASSWORD) is not None


MALFORMED = [
    "",
    "twocats",
    "twocats$",
    "twocats$twocats$v=2015$m=3",
    "twocats$twocats$v=2015$m=3,p=1,b=32,sb=32$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA$AAAA",
    "twocats$twocats$v=2015$m=30$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43,
    "argon2$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaA",
    "twocats$twocats$v=2015$m=3,p=1,b=32,sb=32$" + PASSWORD,
]


@pytest.mark.parametrize("encoded", MALFORMED)
def test_verify_is_false_for_a_malformed_value(project: None, encoded: str) -> None:
    """verify and check_password answer False for a malformed or oversized value, never raise."""
    from django.contrib.auth.hashers import check_password

    hasher = CheapTwoCats()
    assert hasher.verify(PASSWORD, encoded) is False
    assert hasher.must_update(encoded) is True
    assert hasher.can_upgrade(encoded) is False
    hasher.harden_runtime(PASSWORD, encoded)
    if encoded.startswith("twocats$"):
        assert check_password(PASSWORD, encoded) is False


def test_wrong_password_on_an_upgradable_value_hardens_and_fails(project: None) -> None:
    """check_password with a wrong password on an old-cost value is False and changes nothing."""
    from django.contrib.auth.hashers import check_password

    old = OldTwoCats().encode(PASSWORD, OldTwoCats().salt())
    assert CheapTwoCats().can_upgrade(old)
    calls = []
    assert check_password(WRONG, old, setter=calls.append) is False
    assert calls == []
    assert check_password(PASSWORD, old, setter=calls.append) is True
    assert calls == [PASSWORD]


class RecordingTwoCats(CheapTwoCats):
    """Records the values it upgrades."""

    upgraded: ClassVar[list[str]] = []

    def upgrade(self, encoded: str) -> str:
        self.upgraded.append(encoded)
        return super().upgrade(encoded)


def test_harden_runtime_spends_exactly_the_upgrade(project: None) -> None:
    """After a wrong password, only a value of a lower memory cost gets its upgrade computed."""
    from django.contrib.auth.hashers import check_password
    from django.test import override_settings

    old = _old_value(PASSWORD)
    current = CheapTwoCats().encode(PASSWORD, CheapTwoCats().salt())
    other = "twocats" + PasswordHasher.from_params(
        dataclasses.replace(profiles.CHEAPEST, multiplies=2)
    ).hash(PASSWORD)
    with override_settings(PASSWORD_HASHERS=[_path(RecordingTwoCats)]):
        for value in (old, current, other):
            assert check_password(WRONG, value) is False
    assert RecordingTwoCats.upgraded == [old]


def test_upgrade_verifies_the_same_password_and_is_up_to_date(project: None) -> None:
    """upgrade raises the memory cost without the password; the result verifies and is current."""
    hasher = CheapTwoCats()
    old = OldTwoCats().encode(PASSWORD, "saltsaltsaltsaltsaltsa")
    new = hasher.upgrade(old)
    assert new.startswith("twocats$twocats$v=2015$m=3,s=0,")
    assert hasher.verify(PASSWORD, new)
    assert not hasher.verify(WRONG, new)
    assert not hasher.must_update(new)
    assert not hasher.can_upgrade(new)
    assert hasher.upgrade(new) == new
    other = dataclasses.replace(profiles.CHEAPEST, multiplies=2)
    stale = "twocats" + PasswordHasher.from_params(other).hash(PASSWORD)
    with pytest.raises(InvalidParametersError, match="multiplies"):
        hasher.upgrade(stale)


def test_must_update_on_a_short_salt(project: None) -> None:
    """A value whose salt is shorter than Django's own must be updated."""
    hasher = CheapTwoCats()
    assert hasher.must_update(hasher.encode(PASSWORD, "shortsalt"))
    assert not hasher.must_update(hasher.encode(PASSWORD, hasher.salt()))


def test_encode_checks_its_arguments(project: None) -> None:
    """encode refuses a missing password and a salt that is empty or holds the separator."""
    hasher = CheapTwoCats()
    with pytest.raises(TypeError, match="password must be provided"):
        hasher.encode(None, hasher.salt())  # type: ignore[arg-type]
    for salt in ("", "salt$salt$salt"):
        with pytest.raises(ValueError, match="salt must be"):
            hasher.encode(PASSWORD, salt)


def test_summary_reprs_and_errors_hide_the_password_and_the_hash(project: None) -> None:
    """safe_summary masks salt and hash and shows the parameters; no message quotes secrets."""
    hasher = CheapTwoCats()
    salt = hasher.salt()
    encoded = hasher.encode(PASSWORD, salt)
    digest = encoded.rpartition("$")[2]
    summary = {str(key): str(value) for key, value in hasher.safe_summary(encoded).items()}
    assert summary["algorithm"] == "twocats"
    assert summary["memory cost"] == "3 (8 KiB)"
    assert summary["parallelism"] == "1"
    shown = " ".join([*summary.values(), repr(hasher), repr(hasher.hasher)])
    for secret in (PASSWORD, salt, digest, digest[:12], encoded):
        assert secret not in shown
    errors: list[BaseException] = []
    for bad in ("twocats$" + PASSWORD, encoded[:-5] + PASSWORD[:5], f"twocats${PASSWORD}$"):
        with pytest.raises(InvalidHashError) as caught:
            hasher.decode(bad)
        errors.append(caught.value)
    with pytest.raises(InvalidParametersError) as too_long:
        hasher.encode(PASSWORD, PASSWORD * 2)
    errors.append(too_long.value)
    for error in errors:
        chain = [error, error.__cause__, error.__context__]
        text = " ".join(str(item) for item in chain if item is not None)
        assert PASSWORD not in text
        assert PASSWORD[:5] not in text
        assert digest[:12] not in text


def test_a_configuration_that_cannot_fit_is_refused_at_first_use(project: None) -> None:
    """A 64-byte output is refused, naming the class and the column, when first used."""
    hasher = Blake2bTwoCats()  # Instantiating (as get_hashers does) is fine.
    for use in (
        lambda: hasher.encode(PASSWORD, hasher.salt()),
        lambda: hasher.verify(PASSWORD, "twocats$twocats$v=2015$m=0"),
        lambda: hasher.must_update("twocats$twocats$v=2015$m=0"),
    ):
        with pytest.raises(InvalidParametersError, match=r"Blake2bTwoCats .* 128 .*64-byte"):
            use()


def test_bad_class_attributes_are_refused_at_first_use(project: None) -> None:
    """params of the wrong type, or an out-of-range override, name the class and the parameter."""

    class NotParams(TwoCatsPasswordHasher):
        params = "moderate"  # type: ignore[assignment]

    class TooMuch(TwoCatsPasswordHasher):
        multiplies = 9

    with pytest.raises(InvalidParametersError, match=r"NotParams\.params must be"):
        NotParams().encode(PASSWORD, "saltsaltsalt")
    with pytest.raises(InvalidParametersError, match=r"TooMuch is misconfigured: multiplies"):
        TooMuch().verify(PASSWORD, "twocats$x")


def _real_values(params: Params, salt: str) -> tuple[str, str | None]:
    """A fresh value of `params`, and one upgraded to it from one level lower (if there is one)."""
    hasher = PasswordHasher.from_params(params)
    fresh = "twocats" + hasher.hash(PASSWORD, salt=salt.encode())
    if params.mem_cost == 0:
        return fresh, None
    lower = dataclasses.replace(params, mem_cost=params.mem_cost - 1, start_mem_cost=None)
    old = PasswordHasher.from_params(lower).hash(PASSWORD, salt=salt.encode())
    return fresh, "twocats" + hasher.upgrade(old)


@pytest.mark.parametrize("name", ["cheapest", "interactive", "moderate"])
def test_every_profile_fits_the_column(project: None, name: str) -> None:
    """Fresh and upgraded values of the profiles (the default one included) fit in 128."""
    params = profiles.PROFILES[name]

    class Profile(TwoCatsPasswordHasher):
        pass

    Profile.params = params
    hasher = Profile()
    salt = hasher.salt()
    fresh, upgraded = _real_values(params, salt)
    assert hasher.encode(PASSWORD, salt) == fresh
    assert hasher.verify(PASSWORD, fresh)
    values = [fresh] if upgraded is None else [fresh, upgraded]
    assert all(hasher.verify(PASSWORD, value) for value in values)
    assert max(len(value) for value in values) == longest_stored(params, len(salt))
    assert longest_stored(params, len(salt)) <= MAX_STORED_LENGTH
    hasher.hasher.release()  # The rest of the session need not keep 256 MiB.


def test_the_stored_length_bound_covers_every_profile(project: None) -> None:
    """The bound checked at first use is at most 128 for every profile, SENSITIVE included."""
    salt_len = len(TwoCatsPasswordHasher().salt())
    assert profiles.DEFAULT in profiles.PROFILES.values()
    for params in profiles.PROFILES.values():
        assert longest_stored(params, salt_len) <= MAX_STORED_LENGTH


def _parameter_sets() -> st.SearchStrategy[Params]:
    """Parameter sets at mem_cost 11 that are also valid one level lower (so upgrades exist)."""
    lower = param_sets(
        variants=("2015",),
        min_mem_cost=10,
        max_mem_cost=10,
        max_block_size=1 << 14,
        max_parallelism=64,
    )
    return lower.map(lambda params: dataclasses.replace(params, mem_cost=11, start_mem_cost=None))


@settings(max_examples=40, deadline=None)
@given(params=_parameter_sets())
def test_accepted_configurations_fit_and_refused_ones_would_not(params: Params) -> None:
    """A configuration is accepted exactly when its real fresh and upgraded values fit in 128."""

    class Drawn(TwoCatsPasswordHasher):
        pass

    Drawn.params = params
    hasher = Drawn()
    salt = hasher.salt()
    fresh, upgraded = _real_values(params, salt)
    assert upgraded is not None
    if max(len(fresh), len(upgraded)) <= MAX_STORED_LENGTH:
        assert hasher.encode(PASSWORD, salt) == fresh
        assert hasher.upgrade(upgraded) == upgraded
        hasher.hasher.release()
    else:
        with pytest.raises(InvalidParametersError, match="128"):
            hasher.encode(PASSWORD, salt)


def test_database_file_is_sqlite(project: None) -> None:
    """The project really runs on a migrated SQLite database with the auth tables."""
    from django.db import connection

    assert connection.vendor == "sqlite"
    assert Path(connection.settings_dict["NAME"]).is_file()
    assert "auth_user" in connection.introspection.table_names()


def _upgrade_command(*args: str, status: int = 0) -> tuple[str, str]:
    """Run twocats_upgrade, check that it ends with exit status `status`; its outputs."""
    import io

    from django.core.management import CommandError, call_command

    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("twocats_upgrade", *args, stdout=out, stderr=err)
        ended = 0
    except CommandError as error:
        if not status:
            raise
        ended = error.returncode
    assert ended == status, out.getvalue()
    return out.getvalue(), err.getvalue()


def _seed(user_model: Any, count: int) -> dict[str, str]:
    """Store `count` users with old twocats values and return their passwords by name."""
    passwords = {f"user{n:02d}": f"password number {n}" for n in range(count)}
    user_model.objects.bulk_create(
        user_model(username=name, password=_old_value(password))
        for name, password in passwords.items()
    )
    return passwords


def test_upgrade_command_raises_every_hash_offline(user_model: Any) -> None:
    """twocats_upgrade upgrades a table of users in batches; every user still logs in."""
    from django.contrib.auth.hashers import make_password

    passwords = _seed(user_model, 23)
    pbkdf2 = make_password("p", hasher="pbkdf2_sha256")
    user_model.objects.create(username="pbkdf2", password=pbkdf2)
    other = dataclasses.replace(profiles.CHEAPEST, multiplies=2)
    stale = "twocats" + PasswordHasher.from_params(other).hash("s")
    user_model.objects.create(username="stale", password=stale)
    before = {u.username: u.get_session_auth_hash() for u in user_model.objects.all()}

    # One value differs in multiplies: it needs the password, and the exit status says so.
    out, err = _upgrade_command("--batch-size", "5", status=1)

    assert "24 twocats hashes examined: upgraded 23 to mem_cost 3 (8 KiB), 0 already there" in out
    assert "1 to be rehashed at their next login" in out
    assert "1 values differ in multiplies (2, target 1): they need the password" in out
    assert "sign in again" in out
    assert "set start_mem_cost = 0 on CheapTwoCats so that a login naming no user" in out
    assert err.splitlines()[-1] == "[" + "#" * 30 + "] 24/24"
    assert len(err.splitlines()) == 5
    for name, password in passwords.items():
        user = user_model.objects.get(username=name)
        assert user.password.startswith("twocats$twocats$v=2015$m=3,s=0,")
        assert not CheapTwoCats().must_update(user.password)
        assert user.get_session_auth_hash() != before[name]
        assert _login(name, password) is not None
        assert _login(name, WRONG) is None
    assert user_model.objects.get(username="stale").password == stale
    assert user_model.objects.get(username="pbkdf2").password.startswith("pbkdf2_sha256$")

    again, _ = _upgrade_command(status=1)
    assert "upgraded 0 to mem_cost 3 (8 KiB), 23 already there" in again
    assert "sign in again" not in again


def _value_that_cannot_grow() -> str:
    """An old value that fits the column, with a salt so long that its upgrade would not."""
    for salt_length in range(22, 65):
        value = OldTwoCats().encode(PASSWORD, "s" * salt_length)
        if len(value) <= MAX_STORED_LENGTH < len(value) + len(",s=0"):
            return value
    raise AssertionError("no salt length gives a value at the column's edge")


def test_harden_runtime_spends_the_work_of_an_upgrade_that_cannot_fit(project: None) -> None:
    """A failed login on a value whose upgrade is too long for the column spends it, no error."""
    value = _value_that_cannot_grow()
    hasher = RecordingTwoCats()
    with pytest.raises(InvalidParametersError, match="more than the 128 of Django's password"):
        hasher.upgrade(value)
    RecordingTwoCats.upgraded.clear()
    assert hasher.verify(WRONG, value) is False
    hasher.harden_runtime(WRONG, value)
    assert RecordingTwoCats.upgraded == [value]


def test_upgrade_command_leaves_a_value_that_cannot_fit_to_the_next_login(
    user_model: Any,
) -> None:
    """A value whose upgrade would not fit is left for Django's rehash; the others upgrade."""
    passwords = _seed(user_model, 2)
    value = _value_that_cannot_grow()
    user_model.objects.create(username="long", password=value)
    out, _ = _upgrade_command(status=1)
    assert "3 twocats hashes examined: upgraded 2 to mem_cost 3 (8 KiB), 0 already there" in out
    assert "1 to be rehashed at their next login" in out
    assert user_model.objects.get(username="long").password == value
    assert _login("long", PASSWORD) is not None
    for name, password in passwords.items():
        assert _login(name, password) is not None


class X3TwoCats(TwoCatsPasswordHasher):
    """A configuration of other multiplies and parallelism than the stored values."""

    params = dataclasses.replace(
        profiles.CHEAPEST, mem_cost=3, start_mem_cost=3, multiplies=3, parallelism=2
    )


def test_upgrade_command_names_what_needs_the_password_and_mem_cost_alone_raises_it(
    user_model: Any,
) -> None:
    """Against a full target the x=1 values are named by parameter (exit 1); --mem-cost alone
    raises them keeping their parameters (exit 0)."""
    from django.test import override_settings

    from twocats.phc import decode

    _seed(user_model, 4)
    values = sorted(user_model.objects.values_list("password", flat=True))
    with override_settings(PASSWORD_HASHERS=[_path(X3TwoCats)]):
        out, _ = _upgrade_command(status=1)
        assert (
            "4 values differ in multiplies (1, target 3) and parallelism (1, target 2): they need "
            "the password; they will be rehashed at the next login. To raise only their memory, "
            "run with --mem-cost alone."
        ) in out
        assert sorted(user_model.objects.values_list("password", flat=True)) == values
        raised, _ = _upgrade_command("--mem-cost", "3")
    assert "upgraded 4 to mem_cost 3 (8 KiB)" in raised
    upgraded = dataclasses.replace(profiles.CHEAPEST, mem_cost=3, start_mem_cost=0)
    for value in user_model.objects.values_list("password", flat=True):
        assert decode(value.removeprefix("twocats")).params == upgraded


def test_upgrade_command_dry_run_writes_nothing(user_model: Any) -> None:
    """--dry-run counts what would be upgraded and writes nothing; --verbosity 0 hides progress."""
    _seed(user_model, 4)
    values = sorted(user_model.objects.values_list("password", flat=True))
    out, err = _upgrade_command("--dry-run", "--verbosity", "0")
    assert "4 twocats hashes examined: would upgrade 4 to mem_cost 3" in out
    assert err == ""
    assert sorted(user_model.objects.values_list("password", flat=True)) == values


def test_upgrade_command_can_spare_users_with_recent_sessions(user_model: Any) -> None:
    """--inactive-for leaves users who logged in recently to be rehashed at their next login."""
    import datetime

    from django.utils import timezone

    _seed(user_model, 3)
    now = timezone.now()
    user_model.objects.filter(username="user00").update(last_login=now)
    user_model.objects.filter(username="user01").update(last_login=now - datetime.timedelta(30))
    out, _ = _upgrade_command("--inactive-for", "14")
    assert "2 twocats hashes examined: upgraded 2" in out
    upgraded = {u.username: "m=3" in u.password for u in user_model.objects.all()}
    assert upgraded == {"user00": False, "user01": True, "user02": True}


class RacingTwoCats(CheapTwoCats):
    """Changes another user's value while a batch is computed, as a concurrent login would."""

    def upgrade(self, encoded: str) -> str:
        from django.contrib.auth import get_user_model

        get_user_model().objects.filter(username="user01").update(
            password=CheapTwoCats().encode("changed meanwhile", "saltsaltsaltsaltsaltsa")
        )
        return super().upgrade(encoded)


def test_upgrade_never_overwrites_a_value_changed_during_the_run(user_model: Any) -> None:
    """A row whose value changed after it was read keeps the new value and is counted."""
    from twocats.integrations.django.upgrade import upgrade_users

    passwords = _seed(user_model, 3)
    summary = upgrade_users(RacingTwoCats(), batch_size=10)
    assert (summary.upgraded, summary.changed, summary.examined) == (2, 1, 3)
    assert _login("user01", "changed meanwhile") is not None
    assert _login("user01", passwords["user01"]) is None
    assert _login("user02", passwords["user02"]) is not None


def test_upgrade_command_errors_are_clear(user_model: Any) -> None:
    """A bad option or no twocats hasher in PASSWORD_HASHERS is a CommandError."""
    from django.core.management import CommandError
    from django.test import override_settings

    from twocats.integrations.django.upgrade import upgrade_users

    with pytest.raises(CommandError, match="batch-size"):
        _upgrade_command("--batch-size", "0")
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        upgrade_users(CheapTwoCats(), batch_size=0)
    with (
        override_settings(PASSWORD_HASHERS=[_path(FastPBKDF2)]),
        pytest.raises(CommandError, match="no twocats hasher"),
    ):
        _upgrade_command()
    with (
        override_settings(PASSWORD_HASHERS=[_path(Blake2bTwoCats)]),
        pytest.raises(CommandError, match="Blake2bTwoCats is misconfigured"),
    ):
        _upgrade_command()


def test_system_check_reports_a_hasher_that_cannot_fit(project: None) -> None:
    """manage.py check reports a twocats hasher whose values could exceed the column."""
    from django.core import checks
    from django.test import override_settings

    def twocats_errors() -> list[Any]:
        return [m for m in checks.run_checks(tags=["security"]) if m.id == "twocats.E001"]

    assert twocats_errors() == []
    with override_settings(PASSWORD_HASHERS=[_path(Blake2bTwoCats), _path(FastPBKDF2)]):
        errors = twocats_errors()
    assert len(errors) == 1
    assert errors[0].obj is Blake2bTwoCats
    assert "128" in errors[0].msg


def _cheapest_at(mem_cost: int) -> Params:
    """The cheapest parameters at another memory cost (2**mem_cost KiB)."""
    return dataclasses.replace(profiles.CHEAPEST, mem_cost=mem_cost, start_mem_cost=mem_cost)


class DeclaredTwoCats(CheapTwoCats):
    """Earlier parameters within the default limits: the cheapest ones and the sensitive profile."""

    previous = (profiles.CHEAPEST, profiles.SENSITIVE)


class LowMemoryTwoCats(CheapTwoCats):
    """A memory limit of 1 MiB below the second of two earlier parameter sets, of 4 MiB."""

    previous = (dataclasses.replace(profiles.CHEAPEST, multiplies=2), _cheapest_at(12))
    max_memory = 1 << 20


class BeyondMachineTwoCats(CheapTwoCats):
    """An earlier parameter set of 1 TiB, more memory than the test machine has."""

    previous = (Params(mem_cost=30),)


class LowWorkTwoCats(CheapTwoCats):
    """A work limit below that of an earlier parameter set of 1 MiB."""

    previous = (_cheapest_at(10),)
    max_work = 1_000_000


class LowUpgradeWorkTwoCats(TwoCatsPasswordHasher):
    """A work limit that accepts the earlier parameters and the own, but not an upgraded hash."""

    params = _cheapest_at(6)
    previous = (_cheapest_at(3),)
    max_work = 600_000


def _twocats_checks(*hashers: type) -> list[Any]:
    """The messages of the twocats system check with `hashers` (and PBKDF2) configured."""
    from django.core import checks
    from django.test import override_settings

    paths = [_path(hasher) for hasher in hashers]
    with override_settings(PASSWORD_HASHERS=[*paths, _path(FastPBKDF2)]):
        messages = checks.run_checks(tags=["security"])
    return [m for m in messages if m.id.startswith("twocats.")]


def test_system_check_is_silent_when_the_limits_accept_every_stored_hash(project: None) -> None:
    """No message for the own parameters, nor for earlier ones and their upgrades within limits."""
    assert _twocats_checks(CheapTwoCats, DeclaredTwoCats) == []


def _warning(hasher: type[TwoCatsPasswordHasher], id: str, msg: str) -> Any:
    """The one twocats message with `hasher` configured: a warning of `id` starting with `msg`."""
    from django.core import checks

    (warning,) = _twocats_checks(CheapTwoCats, hasher)
    assert (warning.id, warning.level, warning.obj) == (id, checks.WARNING, hasher)
    assert warning.msg.startswith(msg)
    assert warning.msg.endswith("users with such hashes cannot log in")
    return warning


@pytest.mark.parametrize(
    ("hasher", "msg", "hint"),
    [
        (
            LowMemoryTwoCats,
            "a hash of previous[1] is refused: mem_cost=12 needs 4 MiB",
            (
                "raise max_memory to at least 4194304 (4 MiB), or drop previous[1] if no stored "
                "hash was made with it"
            ),
        ),
        (
            BeyondMachineTwoCats,
            "a hash of previous[0] is refused: mem_cost=30 needs 1 TiB",
            (
                "this machine cannot hold such a hash: drop previous[0] if no stored hash was "
                "made with it"
            ),
        ),
    ],
    ids=["max_memory", "machine"],
)
def test_system_check_warns_of_an_earlier_parameter_set_above_the_memory_limit(
    project: None, hasher: type[TwoCatsPasswordHasher], msg: str, hint: str
) -> None:
    """A previous set above the memory limit is twocats.W001, naming max_memory or the set."""
    assert _warning(hasher, "twocats.W001", msg).hint == hint


@pytest.mark.parametrize(
    ("hasher", "refused", "msg"),
    [
        (LowWorkTwoCats, _cheapest_at(10), "a hash of previous[0] is refused: its work is"),
        (
            LowUpgradeWorkTwoCats,
            dataclasses.replace(_cheapest_at(3), mem_cost=6),
            "a hash of previous[0] upgraded to mem_cost=6 is refused: its work is",
        ),
    ],
    ids=["own", "upgraded"],
)
def test_system_check_warns_of_an_earlier_parameter_set_above_the_work_limit(
    project: None, hasher: type[TwoCatsPasswordHasher], refused: Params, msg: str
) -> None:
    """A previous set whose hashes, or their upgrades, cost more than max_work is twocats.W002."""
    work = hasher().hasher.limits.work_of(refused)
    assert _warning(hasher, "twocats.W002", msg).hint == (
        f"raise max_work to at least {work} ({format_work(work)}), or drop previous[0] if no "
        "stored hash was made with it"
    )
