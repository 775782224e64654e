"""What each call of a :class:`~twocats.PasswordHasher` does, as a job.

A job holds the work memory it asks admission for, what it computes on an engine and what it makes
of the output.  The hasher's blocking and asyncio calls run the same jobs, so they cannot differ.
Everything a job depends on (the password's type, the salt, the stored string and the limits) is
checked when it is made, before the caller waits for a slot.
"""

from __future__ import annotations

import dataclasses
import hmac
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from twocats import phc
from twocats.exceptions import InvalidParametersError, VerifyMismatchError
from twocats.kdf.geometry import work_memory
from twocats.kdf.limits import StoredLimits
from twocats.params import Params
from twocats.target import describe_differences, differences

if TYPE_CHECKING:
    from twocats.kdf.engine import Engine

__all__ = ["Job", "Jobs"]

_R = TypeVar("_R")


@dataclasses.dataclass(frozen=True)
class Job(Generic[_R]):
    """One admitted call: its memory, its work on an engine, and what to make of the output.

    ``params`` are the parameters the work derives with: their fill kernel is made ready before
    the call is admitted (see :mod:`twocats.hasher_kernels`).
    """

    need: int
    work: Callable[[Engine], bytes]
    finish: Callable[[bytes], _R]
    params: Params


@dataclasses.dataclass(frozen=True)
class Jobs:
    """The jobs of one hasher: its parameters, salt length, pepper and limits for stored hashes."""

    params: Params
    salt_len: int
    pepper: bytes = dataclasses.field(repr=False)
    limits: StoredLimits

    def hash(self, password: str | bytes, salt: bytes | None) -> Job[str]:
        """Hash `password` with the hasher's parameters and `salt` (None: a fresh random one)."""
        secret = _password_bytes(password)
        if salt is None:
            salt = secrets.token_bytes(self.salt_len)
        elif not isinstance(salt, (bytes, bytearray)):
            raise TypeError("salt must be bytes")
        elif not phc.MIN_SALT_BYTES <= len(salt) <= phc.MAX_SALT_BYTES:
            raise InvalidParametersError(
                f"salt must be {phc.MIN_SALT_BYTES} to {phc.MAX_SALT_BYTES} bytes long"
            )
        salt = bytes(salt)
        params = self.params
        pepper = self.pepper

        def work(engine: Engine) -> bytes:
            return engine.derive(secret, salt, params, data=pepper)

        return Job(
            work_memory(params), work, lambda digest: phc.encode(params, salt, digest), params
        )

    def verify(self, hash: str | bytes, password: str | bytes) -> Job[Literal[True]]:
        """Compare `password` with the stored `hash` in constant time."""
        return self._stored(hash, password, lambda stored, digest: _match(digest, stored.digest))

    def hash_as(self, hash: str | bytes, password: str | bytes) -> Job[str]:
        """Hash `password` with the parameters and salt of the stored `hash`."""
        return self._stored(
            hash, password, lambda stored, digest: phc.encode(stored.params, stored.salt, digest)
        )

    def unknown(self, password: str | bytes, like: str | bytes | None) -> Job[Literal[True]]:
        """Do the work of a fresh hash, or of verifying `like`, and never match."""
        if like is None:
            fresh = self.hash(password, None)
            need, work, params = fresh.need, fresh.work, fresh.params
            decoy = secrets.token_bytes(self.params.output_size)
        else:
            shaped = self.verify(like, password)
            need, work, params = shaped.need, shaped.work, shaped.params
            decoy = phc.decode(like).digest
        return Job(need, work, lambda digest: _match(digest, decoy, always_fail=True), params)

    def upgrade(self, hash: str | bytes) -> Job[str] | str:
        """Raise the memory cost of `hash` to the hasher's; a string if there is nothing to do."""
        stored = phc.decode(hash)
        old = stored.params
        differing = differences(old, self.params)
        if differing:
            raise InvalidParametersError(
                f"cannot upgrade without the password: the stored hash differs in "
                f"{describe_differences(differing)}; rehash it when the user next logs in"
            )
        if old.mem_cost >= self.params.mem_cost:
            return stored.encode()
        new = dataclasses.replace(old, mem_cost=self.params.mem_cost)
        self.limits.check(new, old_mem_cost=old.mem_cost, subject="the upgrade")

        def work(engine: Engine) -> bytes:
            return engine.update(stored.digest, new, old.mem_cost)

        return Job(
            work_memory(new, old_mem_cost=old.mem_cost),
            work,
            lambda digest: phc.encode(new, stored.salt, digest),
            new,
        )

    def _stored(
        self, hash: str | bytes, password: str | bytes, finish: Callable[[phc.PHCHash, bytes], _R]
    ) -> Job[_R]:
        """Return the job that hashes `password` like the stored `hash`, within the limits."""
        secret = _password_bytes(password)
        stored = phc.decode(hash)
        self.limits.check(stored.params)
        pepper = self.pepper

        def work(engine: Engine) -> bytes:
            return engine.derive(secret, stored.salt, stored.params, data=pepper)

        return Job(
            work_memory(stored.params), work, lambda digest: finish(stored, digest), stored.params
        )


def _password_bytes(password: str | bytes) -> bytes:
    if isinstance(password, str):
        encoded = _utf8(password)
        if encoded is None:
            # Raised outside the codec's handler: its error holds the password.
            raise InvalidParametersError(
                "password is not valid Unicode text (it holds an unpaired surrogate); "
                "pass bytes to hash arbitrary byte strings"
            )
        return encoded
    if isinstance(password, (bytes, bytearray)):
        return bytes(password)
    raise TypeError(f"password must be str or bytes, not {type(password).__name__}")


def _utf8(text: str) -> bytes | None:
    """Return ``text`` in UTF-8, or None if it holds a lone surrogate."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _match(digest: bytes, expected: bytes, *, always_fail: bool = False) -> Literal[True]:
    """Compare in constant time; raise VerifyMismatchError unless equal."""
    equal = hmac.compare_digest(digest, expected)
    if always_fail or not equal:
        raise VerifyMismatchError("The password does not match the supplied hash")
    return True
