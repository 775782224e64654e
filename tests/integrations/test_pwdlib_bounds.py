"""The pwdlib adapter's bounds: max_concurrency, max_total_memory and timeout reach its hasher."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("pwdlib", reason="the test extra installs pwdlib")

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

from twocats import HasherBusyError, PasswordHasher, profiles
from twocats.integrations.pwdlib import TwoCatsHasher

PASSWORD = "correct horse battery staple"


def test_the_bounds_reach_the_hasher() -> None:
    """The keywords build a hasher with those bounds."""
    adapter = TwoCatsHasher(
        params=profiles.CHEAPEST, max_concurrency=3, max_total_memory=1 << 20, timeout=0.25
    )
    core = adapter.hasher
    assert (core.max_concurrency, core.max_total_memory, core.timeout) == (3, 1 << 20, 0.25)


def test_bounds_and_a_hasher_are_not_given_together() -> None:
    """A bound beside a ready hasher is refused, as the other keywords are."""
    core = PasswordHasher.from_params(profiles.CHEAPEST)
    with pytest.raises(TypeError, match="give either a hasher or the keywords"):
        TwoCatsHasher(core, timeout=1.0)


def test_a_verification_beyond_the_bounds_raises_busy() -> None:
    """With the one slot taken, pwdlib's verify raises HasherBusyError for the app to answer 503."""
    adapter = TwoCatsHasher(params=profiles.CHEAPEST, max_concurrency=1, timeout=0.05)
    context = PasswordHash((adapter,))
    stored = context.hash(PASSWORD)
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        # A cheap argon2 hash's check runs in the hasher's one slot, and waits there.
        foreign = Argon2Hasher(time_cost=1, memory_cost=8, parallelism=1).hash("x")
        adapter.hasher.verify_foreign(foreign, lambda: entered.set() or release.wait(30))

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert entered.wait(30)
        with pytest.raises(HasherBusyError, match="max_concurrency=1"):
            context.verify(PASSWORD, stored)
    finally:
        release.set()
        holder.join(30)
    assert context.verify(PASSWORD, stored)
