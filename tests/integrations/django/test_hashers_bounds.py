"""The Django hasher's bounds: its attributes reach the twocats hasher, and a login beyond them
fails cleanly through Django's own login view (a form error, never a server error)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

django = pytest.importorskip("django", reason="the test extra installs Django")

import argon2  # noqa: E402

from twocats import HasherBusyError, InvalidParametersError, profiles  # noqa: E402
from twocats.integrations.django import (  # noqa: E402
    HasherBusyDeniedError,
    TwoCatsPasswordHasher,
)

PASSWORD = "correct horse battery staple"


class BoundedTwoCats(TwoCatsPasswordHasher):
    """The cheapest parameters, one hash at a time, and a login waits 50 ms at most."""

    params = profiles.CHEAPEST
    max_concurrency = 1
    max_total_memory = 1 << 20
    timeout = 0.05


class ZeroConcurrency(BoundedTwoCats):
    """A bound that admits nothing."""

    max_concurrency = 0


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A migrated project serving Django's LoginView, with the bounded hasher first."""
    from tests.support.django_project import configure, login_site

    configure(tmp_path_factory.mktemp("django"))
    with login_site(tmp_path_factory.mktemp("templates"), [f"{__name__}.BoundedTwoCats"]):
        yield


@pytest.fixture
def user(site: None) -> Iterator[Any]:
    """A user whose password the bounded hasher stored, deleted after the test."""
    from django.contrib.auth import get_user_model

    made = get_user_model().objects.create_user("ada", password=PASSWORD)
    yield made
    made.delete()


class _SlotHolder:
    """Holds the twocats hasher's only slot, with a verification of its own that waits."""

    def __init__(self) -> None:
        self.core = BoundedTwoCats().hasher
        # A cheap argon2 hash the hasher's limits accept: its check runs in an admission slot.
        self._foreign = argon2.PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash("x")
        self._entered, self._release = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._hold)

    def _hold(self) -> None:
        self.core.verify_foreign(self._foreign, self._wait, timeout=10)

    def _wait(self) -> bool:
        self._entered.set()
        return self._release.wait(30)

    def __enter__(self) -> _SlotHolder:
        self._thread.start()
        assert self._entered.wait(30)
        return self

    def __exit__(self, *_: object) -> None:
        self._release.set()
        self._thread.join(30)


def test_the_hasher_has_the_bounds_of_its_attributes(site: None) -> None:
    """max_concurrency, max_total_memory and timeout reach the twocats hasher it builds."""
    core = BoundedTwoCats().hasher
    assert (core.max_concurrency, core.max_total_memory, core.timeout) == (1, 1 << 20, 0.05)


def test_a_bound_out_of_range_is_refused_naming_it(site: None) -> None:
    """max_concurrency 0 is refused at first use, naming the attribute and its range."""
    with pytest.raises(InvalidParametersError, match=r"is misconfigured: max_concurrency must"):
        _ = ZeroConcurrency().hasher


def test_a_login_beyond_the_bounds_fails_cleanly(user: Any) -> None:
    """With the only slot taken a login through LoginView fails as a wrong one does; then works."""
    from django.contrib.auth.signals import user_login_failed
    from django.test import Client

    failed: list[dict[str, Any]] = []

    def record(sender: object, credentials: dict[str, Any], **_: object) -> None:
        failed.append(credentials)

    user_login_failed.connect(record)
    try:
        with _SlotHolder():
            for username in ("ada", "nobody"):
                client = Client()
                response = client.post("/login/", {"username": username, "password": PASSWORD})
                assert response.status_code == 200
                assert b"Please enter a correct username and password" in response.content
                assert "_auth_user_id" not in client.session
        assert [credentials["username"] for credentials in failed] == ["ada", "nobody"]
    finally:
        user_login_failed.disconnect(record)
    client = Client()
    response = client.post("/login/", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(user.pk)


def test_busy_is_permission_denied_and_hasher_busy(user: Any) -> None:
    """Beyond the bounds check_password and set_password raise the one error both sides know."""
    with _SlotHolder(), pytest.raises(HasherBusyDeniedError) as caught:
        user.check_password(PASSWORD)
    assert isinstance(caught.value, HasherBusyError)
    assert "max_concurrency=1" in str(caught.value)
    with _SlotHolder(), pytest.raises(HasherBusyDeniedError):
        user.set_password(PASSWORD)
