"""Foreign hashes (argon2, bcrypt) verified under a hasher's admission control and limits."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from twocats.exceptions import HashLimitError, HashMemoryLimitError, InvalidHashError
from twocats.password import PasswordHasher, foreign_cost
from twocats.profiles import CHEAPEST

MIB = 2**20
#: An argon2id hash of 64 MiB (the string is not verified, only read).
ARGON2_64 = "$argon2id$v=19$m=65536,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNo"


class Watch:
    """A stand-in for another library's check: counts checks at once, holds each a moment."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def check(self) -> bool:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(0.05)
        with self.lock:
            self.now -= 1
        return True


def _hasher(**limits: Any) -> PasswordHasher:
    return PasswordHasher.from_params(CHEAPEST, max_memory=160 * MIB, **limits)


def test_foreign_memory_counts_against_the_budget() -> None:
    """Checks of 64 MiB under a 160 MiB budget run at most two at once."""
    hasher = _hasher(max_concurrency=8, max_total_memory=160 * MIB)
    watch = Watch()
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda _: hasher.verify_foreign(ARGON2_64, watch.check), range(6)))
    assert results == [True] * 6
    assert watch.peak == 2


def test_foreign_checks_share_the_concurrency_limit_in_asyncio() -> None:
    """averify_foreign waits for a slot like averify, and returns the check's answer."""
    hasher = _hasher(max_concurrency=1, max_total_memory=1024 * MIB)
    watch = Watch()

    async def main() -> list[bool]:
        return await asyncio.gather(
            *(hasher.averify_foreign(ARGON2_64, watch.check) for _ in range(4))
        )

    assert asyncio.run(main()) == [True] * 4
    assert watch.peak == 1


@pytest.mark.parametrize(
    ("stored", "error"),
    [
        ("$argon2id$v=19$m=1048576,t=1,p=1$c2FsdHNhbHQ$aGFzaA", HashMemoryLimitError),
        ("$argon2i$v=19$m=65536,t=4000,p=1$c2FsdHNhbHQ$aGFzaA", HashLimitError),
        ("$2b$20$" + "a" * 53, HashLimitError),
        ("$pbkdf2-sha256$29000$c2FsdA$aGFzaA", InvalidHashError),
        ("$argon2id$v=19$m=99999999999,t=1,p=1$c2FsdA$aGFzaA", InvalidHashError),
    ],
)
def test_foreign_hashes_above_the_limits_are_refused_unrun(stored: str, error: type) -> None:
    """A costly or unreadable foreign hash is refused before its check runs."""
    hasher = _hasher()
    ran: list[bool] = []
    with pytest.raises(error):
        hasher.verify_foreign(stored, lambda: ran.append(True))
    assert ran == []


def test_foreign_cost_reads_argon2_and_bcrypt() -> None:
    """The cost read from each kind of string: its memory and parameters."""
    argon2 = foreign_cost(ARGON2_64)
    bcrypt = foreign_cost(b"$2b$12$" + b"a" * 53)
    assert argon2 is not None
    assert bcrypt is not None
    assert (argon2.scheme, argon2.memory, argon2.settings) == (
        "argon2id",
        64 * MIB,
        "m=65536, t=1, p=1",
    )
    assert (bcrypt.scheme, bcrypt.settings) == ("bcrypt", "cost=12")
    assert foreign_cost("$twocats$v=2015$m=3$c2FsdA$aGFzaA") is None


@pytest.fixture
def argon2() -> Any:
    """pwdlib's argon2 hasher at 8 MiB, or a skip without pwdlib."""
    from tests.support.environment import need

    try:
        from pwdlib.hashers.argon2 import Argon2Hasher
    except ImportError:
        need("pwdlib[argon2] (pip install -e '.[test]')")
    return Argon2Hasher(memory_cost=8192, time_cost=1, parallelism=1)


def test_pwdlib_admitted_hasher_verifies_and_refuses(
    argon2: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """AdmittedHasher verifies real argon2 hashes, and refuses a planted one with a warning."""
    from twocats.integrations.pwdlib import AdmittedHasher

    admitted = AdmittedHasher(argon2, _hasher())
    stored = argon2.hash("old password")
    assert admitted.identify(stored)
    assert admitted.verify("old password", stored)
    assert not admitted.verify("wrong", stored)
    planted = "$argon2id$v=19$m=1048576,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"
    with caplog.at_level(logging.WARNING, logger="twocats.integrations"):
        assert not admitted.verify("old password", planted)
    assert "argon2id hash is refused" in caplog.text
    assert "old password" not in caplog.text
