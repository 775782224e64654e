"""Django's argon2 and bcrypt values verified within the twocats hasher's admission and limits."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

django = pytest.importorskip("django", reason="the test extra installs Django")

from tests.support.foreign_rows import LIBRARY_REFUSES, MALFORMED  # noqa: E402
from twocats import profiles  # noqa: E402
from twocats.integrations.django import (  # noqa: E402
    AdmittedArgon2PasswordHasher,
    AdmittedBCryptPasswordHasher,
    AdmittedBCryptSHA256PasswordHasher,
    TwoCatsPasswordHasher,
)

PASSWORD = "correct horse battery staple"
ROWS = {**MALFORMED, **LIBRARY_REFUSES}


class CheapTwoCats(TwoCatsPasswordHasher):
    """The cheapest twocats parameters, first in PASSWORD_HASHERS."""

    params = profiles.CHEAPEST


class CheapArgon2(AdmittedArgon2PasswordHasher):
    """The admitted argon2 hasher at its cheapest."""

    time_cost = 1
    memory_cost = 8
    parallelism = 1


class CheapBCrypt(AdmittedBCryptSHA256PasswordHasher):
    """The admitted bcrypt hasher at its cheapest."""

    rounds = 4


class CheapPlainBCrypt(AdmittedBCryptPasswordHasher):
    """The admitted plain bcrypt hasher at its cheapest."""

    rounds = 4


def _path(cls: type) -> str:
    return f"{__name__}.{cls.__qualname__}"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A migrated Django project with twocats first and the admitted hashers after it."""
    from django.test import override_settings

    from tests.support.django_project import configure

    configure(Path(tmp_path_factory.mktemp("django")))
    hashers = [_path(CheapTwoCats), _path(CheapArgon2), _path(CheapBCrypt), _path(CheapPlainBCrypt)]
    with override_settings(PASSWORD_HASHERS=hashers):
        yield


@pytest.mark.parametrize("algorithm", ["argon2", "bcrypt_sha256"])
def test_admitted_values_verify_and_move_to_twocats(project: None, algorithm: str) -> None:
    """An older user's value verifies through the admitted hasher and is due for twocats."""
    from django.contrib.auth.hashers import check_password, make_password

    stored = make_password(PASSWORD, hasher=algorithm)
    assert stored.startswith(algorithm + "$")
    # Django calls the setter with the password, to store it anew with the first hasher.
    updated: list[str] = []
    assert check_password(PASSWORD, stored, setter=updated.append)
    assert updated == [PASSWORD]
    assert not check_password("wrong", stored)


def test_a_planted_argon2_value_is_refused_with_a_warning(
    project: None, caplog: pytest.LogCaptureFixture
) -> None:
    """A 1 GiB argon2 value fails to verify, unrun, and the refusal is logged."""
    from django.contrib.auth.hashers import check_password

    planted = "argon2$argon2id$v=19$m=1048576,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"
    from django.contrib.auth.hashers import Argon2PasswordHasher

    ran: list[Any] = []
    original = Argon2PasswordHasher.verify

    def counted(self: Any, password: str, encoded: str) -> bool:
        ran.append(encoded)
        return bool(original(self, password, encoded))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Argon2PasswordHasher, "verify", counted)
        with caplog.at_level(logging.WARNING, logger="twocats.integrations"):
            assert not check_password(PASSWORD, planted)
    assert ran == []
    assert "argon2id hash is refused" in caplog.text


@pytest.mark.parametrize("stored", ROWS.values(), ids=ROWS.keys())
def test_a_malformed_value_is_a_wrong_password(project: None, stored: str) -> None:
    """Every malformed argon2 or bcrypt value fails check_password, with no exception."""
    from django.contrib.auth.hashers import check_password

    if stored.startswith("$2"):
        values = ["bcrypt_sha256$" + stored, "bcrypt$" + stored]
    else:
        values = ["argon2" + stored]
    for value in values:
        assert check_password(PASSWORD, value) is False
