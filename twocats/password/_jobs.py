"""What each call of a :class:`~twocats.PasswordHasher` does, as a job, and its kernel made ready.

A job holds the work memory it asks admission for, what it computes on an engine and what it makes
of the output.  The hasher's blocking and asyncio calls run the same jobs, so they cannot differ.
Everything a job depends on (the password's type, the salt, the stored string and the limits) is
checked when it is made, before the caller waits for a slot.

Every stored hash names the fill kernel it runs (hash type, lane count, block hash).  A kernel
that no artefact or cache holds yet compiles for seconds, and a call that did so inside an
admission slot would keep every other login waiting, so :meth:`Kernels.prepare` makes it ready
first, outside admission (:func:`twocats.simd.family.ready`): the kernels of the hasher's own
parameters, of ``previous`` and of the built-in profiles (those its users' hashes legitimately
have) in the calling thread, compiled there if no cache holds them, as the first hash of a fresh
server always did; any other (a planted hash, or a rare legitimate one) by an isolated child, at
most one at a time per process and within :data:`twocats.simd.family.COMPILE_SECONDS`, whose
artefact, or numba's build in the cache, this process then loads without compiling.  A caller
that would wait longer than its admission ``timeout`` (that bound without one) for another
caller's compile gets :class:`~twocats.exceptions.HasherBusyError`, and a kernel that could not
be compiled is refused, for the rest of the process, with
:class:`~twocats.exceptions.HashLimitError` (which the framework adapters answer like a wrong
password).  The ``reference`` backend and kernels run as Python (``NUMBA_DISABLE_JIT``) need
nothing.
"""

from __future__ import annotations

import dataclasses
import hmac
import secrets
from collections.abc import Callable, Iterable
from operator import methodcaller
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from twocats import phc
from twocats.exceptions import (
    BackendError,
    HasherBusyError,
    HashLimitError,
    InvalidParametersError,
    VerifyMismatchError,
)
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.family import FILL
from twocats.kdf.geometry import work_memory
from twocats.kdf.limits import StoredLimits
from twocats.params import Params
from twocats.password._target import describe_differences, differences
from twocats.simd import cache, family
from twocats.simd.registry import resolve_backend

if TYPE_CHECKING:
    from twocats.kdf.engine import Engine


_R = TypeVar("_R")


@dataclasses.dataclass(frozen=True)
class Job(Generic[_R]):
    """One admitted call: its memory, its work on an engine, and what to make of the output.

    ``params`` are the parameters the work derives with: their fill kernel is made ready before
    the call is admitted (:class:`Kernels`).
    """

    need: int
    # The work holds the password and the pepper: never in a repr.
    work: Callable[[Engine], bytes] = dataclasses.field(repr=False)
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

        # methodcaller is C: the hash reaches the kernel through no frame of its own here.
        work = methodcaller("derive", secret, salt, params, data=pepper)
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

        work = methodcaller("update", stored.digest, new, old.mem_cost)
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

        work = methodcaller("derive", secret, stored.salt, stored.params, data=pepper)
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


class Kernels:
    """The fill kernels a hasher expects, and the preparation of any other (see the module)."""

    __slots__ = ("_backend", "_expected")

    def __init__(self, backend: str | None, expected: Iterable[Params]) -> None:
        self._backend = backend
        self._expected = frozenset(_shape(FILL.keys("simd", params)[0]) for params in expected)

    def _key(self, params: Params) -> FillKey | None:
        """The kernel ``params`` run, or None where none is compiled."""
        backend = resolve_backend(self._backend)
        if backend == "reference" or cache.jit_disabled():
            return None
        return FILL.keys(backend, params)[0]

    def ready(self, params: Params) -> bool:
        """Whether a call with ``params`` may be admitted at once: its kernel was made ready
        before (a lookup, which an event loop may make; :meth:`prepare` loads or compiles)."""
        key = self._key(params)
        return key is None or family.is_ready(key)

    def loads_now(self, params: Params) -> bool:
        """Whether the kernel of ``params`` is ready without a compile: made ready before, or
        its checked artefact loads now."""
        key = self._key(params)
        return key is None or family.ready_now(FILL, key)

    def prepare(self, params: Params, wait: float | None) -> None:
        """Make the kernel of ``params`` ready, outside admission; ``wait`` bounds the queue.

        Raises :class:`~twocats.exceptions.HasherBusyError` after ``wait`` seconds (None:
        :data:`twocats.simd.family.COMPILE_SECONDS`) behind another caller's compile, and
        :class:`~twocats.exceptions.HashLimitError` for a kernel that could not be compiled.
        """
        key = self._key(params)
        if key is None:
            return
        if _shape(key) in self._expected:
            family.ready(FILL, key)
            return
        waited = family.COMPILE_SECONDS if wait is None else wait
        try:
            family.ready(FILL, key, elsewhere=True, wait=waited)
        except TimeoutError:
            raise HasherBusyError(
                f"the hasher is busy: waited {waited:g} s (timeout) for another stored hash's "
                "kernel to compile"
            ) from None
        except BackendError:
            raise HashLimitError(
                f"the stored hash is refused: its kernel ({key.label}) could not be compiled "
                f"within {family.COMPILE_SECONDS:g} s"
            ) from None


def _shape(key: FillKey) -> tuple[int, int, int]:
    """What makes kernels of one backend differ: hash type, lane count and block hash."""
    return key.hash_type, key.lanes, key.variant
