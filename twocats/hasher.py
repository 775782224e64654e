"""High-level password hashing: :class:`PasswordHasher`.

The hasher turns passwords into self-describing PHC strings (see :mod:`twocats.phc`), verifies them
in constant time, tells when a stored hash should be redone, and can **upgrade a stored hash to a
higher memory cost without the password**.

Upgrading without the password
------------------------------
TwoCats computes its memory levels one after another, doubling the memory each time, and the stored
output of a hash at memory cost ``m`` is exactly the value the algorithm would carry into level
``m + 1`` if it had been asked for more memory.  :meth:`PasswordHasher.upgrade` therefore continues
the computation from the stored output, running only the new, larger levels, and the result is
identical to what hashing the password directly at the new cost (with the original start level)
would have given.  A server can thus raise the cost of every stored hash in an offline job,
including the accounts of users who never log in again, instead of waiting for each user's next
login as bcrypt, scrypt and argon2 require.  No other widely used password library offers this.
The secret pepper (if any) only enters at the start of the computation, so upgrading does not need
it either.

Thread safety
-------------
A :class:`PasswordHasher` is immutable apart from a small, locked pool of work areas, one per
concurrent call: any number of threads may share one hasher, and two running hashes never share a
buffer.  At most :data:`POOL_SIZE` idle work areas are kept for reuse between calls (reusing memory
saves the operating system's cost of mapping fresh pages, which is comparable to the hashing itself
at a GiB); each holds the memory of the largest hash it has computed.  The compiled fill releases
the GIL, so threads hash in parallel: when each hash keeps one core busy (parallelism 1, or
``TWOCATS_THREADS=1``), two threads can do twice the work of one on two free cores.

Hostile hash strings
--------------------
A stored hash is untrusted input.  :meth:`PasswordHasher.verify` and
:meth:`PasswordHasher.check_hash` accept only canonical strings (:mod:`twocats.phc`) and refuse,
before allocating or computing anything, a string that asks for more memory than
:attr:`PasswordHasher.max_memory` (:class:`~twocats.exceptions.HashMemoryLimitError`) or more work
than :attr:`PasswordHasher.max_work` (:class:`~twocats.exceptions.HashLimitError`, for example a
``time_cost`` of 30 or 32-byte blocks at a large memory cost).  Both are
:class:`~twocats.exceptions.InvalidHashError`, so one ``except InvalidHashError`` handles every
stored hash this server cannot use; the memory error is also a
:class:`~twocats.exceptions.MemoryLimitError`.

Secrets
-------
Passwords, salts and the pepper never appear in a ``repr`` or an error message, and the library
writes no logs.  ``wipe=True`` zeroes the work memory after every hash (see :class:`PasswordHasher`
for its cost).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import os
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final, Literal

from twocats import phc
from twocats.exceptions import (
    HashLimitError,
    HashMemoryLimitError,
    InvalidParametersError,
    VerifyMismatchError,
)
from twocats.kdf import limits
from twocats.kdf.limits import format_size
from twocats.params import Params
from twocats.profiles import DEFAULT

if TYPE_CHECKING:
    from twocats.kdf import Engine

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "DEFAULT_SALT_LEN",
    "POOL_SIZE",
    "WORK_PER_MEMORY",
    "PasswordHasher",
    "format_size",
]

#: Salt length of new hashes, in bytes (the PHC recommendation).
DEFAULT_SALT_LEN: Final = 16

#: The memory limit when none is given: stored hashes asking for more are refused.  A hasher whose
#: own parameters need more raises the limit to its own need.
DEFAULT_MAX_MEMORY: Final = 1 << 30

#: The number of idle work areas a hasher keeps for reuse (one per core is enough to serve a thread
#: pool the size of the machine).
POOL_SIZE: Final = max(1, os.cpu_count() or 1)

#: The work limit for stored hashes, in bytes of standard fill per byte of ``max_memory``
#: (see :func:`twocats.kdf.limits.estimated_work`): a standard hash at ``max_memory`` rates about
#: 1 (1.4 with 3 multiplies), so a stored hash may cost up to six to eight standard hashes at the
#: memory limit, but not ``time_cost=30`` or 32-byte blocks at a large memory cost.
WORK_PER_MEMORY: Final = 8

# Parameters that an upgrade can change: every other one must already match the hasher's.
_UPGRADABLE: Final = frozenset({"mem_cost", "start_mem_cost"})


def _password_bytes(password: str | bytes) -> bytes:
    if isinstance(password, str):
        try:
            return password.encode("utf-8")
        except UnicodeEncodeError:
            # The codec's own message would quote the offending character of the password.
            raise InvalidParametersError(
                "password is not valid Unicode text (it holds an unpaired surrogate); "
                "pass bytes to hash arbitrary byte strings"
            ) from None
    if isinstance(password, (bytes, bytearray)):
        return bytes(password)
    raise TypeError(f"password must be str or bytes, not {type(password).__name__}")


def _differences(stored: Params, wanted: Params) -> list[str]:
    """Return the names of the parameters (other than the memory costs) that differ."""
    return [
        item.name
        for item in dataclasses.fields(Params)
        if item.compare
        and item.name not in _UPGRADABLE
        and getattr(stored, item.name) != getattr(wanted, item.name)
    ]


def _start(params: Params) -> int:
    """Return the resolved start level (Params resolves None to mem_cost)."""
    return params.mem_cost if params.start_mem_cost is None else params.start_mem_cost


class _EnginePool:
    """A locked free-list of KDF engines; each engine serves one call at a time."""

    __slots__ = ("_factory", "_free", "_lock")

    def __init__(self, factory: Callable[[], Engine]) -> None:
        self._factory = factory
        self._free: list[Engine] = []
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def engine(self) -> Iterator[Engine]:
        with self._lock:
            engine = self._free.pop() if self._free else None
        if engine is None:
            engine = self._factory()
        yield engine
        # An engine whose call raised (including KeyboardInterrupt) is dropped, not reused.
        with self._lock:
            if len(self._free) < POOL_SIZE:
                self._free.append(engine)

    def clear(self) -> None:
        """Let go of every idle engine and its memory (zeroed first if the engine wipes)."""
        with self._lock:
            idle, self._free = self._free, []
        for engine in idle:
            engine.release()


class PasswordHasher:
    """Hash and verify passwords with TwoCats, as PHC strings.

    ``PasswordHasher()`` uses :data:`twocats.profiles.DEFAULT`; the keyword arguments `mem_cost`,
    `multiplies` and `parallelism` adjust it, and :meth:`from_params` takes a complete
    :class:`~twocats.params.Params` (for example a profile).

    :param salt_len: length of the random salt of new hashes, 8 to 64 bytes.
    :param secret: an optional pepper, passed to TwoCats as its ``data`` input.  It is kept out of
        the database, so a leaked database alone cannot be attacked; every hash made with a pepper
        verifies only with the same pepper.  It never appears in a ``repr`` or an error message.
    :param max_memory: the most memory, in bytes, one hash may use.  Stored hashes asking for more
        are refused with :class:`~twocats.exceptions.HashMemoryLimitError` before anything is
        allocated, so a planted hash string cannot exhaust the server.  The default is
        :data:`DEFAULT_MAX_MEMORY` or the hasher's own need if that is larger, and never more than
        the machine can give (:func:`twocats.kdf.limits.machine_memory`).  It also sets the work
        limit :attr:`max_work`.
    :param backend: the compute backend (``"reference"``, ``"scalar"`` or ``"simd"``; None chooses
        through ``TWOCATS_BACKEND``, then ``"simd"``).
    :param wipe: zero the work area after every hash, so the blocks derived from the password do
        not outlive the call.  This costs one extra write pass over the memory after each hash,
        about a quarter to a third more time: measured on the project machine (2 cores, shared
        with other jobs), :data:`~twocats.profiles.MODERATE` took 285 ms without and 375 ms with
        wiping (121 and 154 ms of CPU), :data:`~twocats.profiles.SENSITIVE` 488 and 612 ms.

    Raises :class:`~twocats.exceptions.InvalidParametersError` for invalid arguments and
    :class:`~twocats.exceptions.MemoryLimitError` if the hasher's own parameters need more memory
    than the limit allows.
    """

    __slots__ = (
        "_backend",
        "_limit_name",
        "_max_memory",
        "_max_work",
        "_params",
        "_pool",
        "_salt_len",
        "_secret",
        "_wipe",
    )

    def __init__(
        self,
        *,
        mem_cost: int | None = None,
        multiplies: int | None = None,
        parallelism: int | None = None,
        salt_len: int = DEFAULT_SALT_LEN,
        secret: bytes | None = None,
        max_memory: int | None = None,
        backend: str | None = None,
        wipe: bool = False,
    ) -> None:
        params = DEFAULT
        if mem_cost is not None:
            params = dataclasses.replace(params, mem_cost=mem_cost, start_mem_cost=mem_cost)
        if multiplies is not None:
            params = dataclasses.replace(params, multiplies=multiplies)
        if parallelism is not None:
            params = dataclasses.replace(params, parallelism=parallelism)
        self._setup(params, salt_len, secret, max_memory, backend, wipe)

    @classmethod
    def from_params(
        cls,
        params: Params,
        *,
        salt_len: int = DEFAULT_SALT_LEN,
        secret: bytes | None = None,
        max_memory: int | None = None,
        backend: str | None = None,
        wipe: bool = False,
    ) -> PasswordHasher:
        """Return a hasher for `params` (for example a profile from :mod:`twocats.profiles`)."""
        if not isinstance(params, Params):
            raise TypeError(f"params must be a twocats.Params, not {type(params).__name__}")
        hasher = cls.__new__(cls)
        hasher._setup(params, salt_len, secret, max_memory, backend, wipe)
        return hasher

    def _setup(
        self,
        params: Params,
        salt_len: int,
        secret: bytes | None,
        max_memory: int | None,
        backend: str | None,
        wipe: bool,
    ) -> None:
        if isinstance(salt_len, bool) or not isinstance(salt_len, int):
            raise TypeError("salt_len must be an int")
        if not phc.MIN_SALT_BYTES <= salt_len <= phc.MAX_SALT_BYTES:
            raise InvalidParametersError(
                f"salt_len must be from {phc.MIN_SALT_BYTES} to {phc.MAX_SALT_BYTES} bytes, "
                f"got {salt_len}"
            )
        if secret is not None and not isinstance(secret, (bytes, bytearray)):
            raise TypeError("secret must be bytes or None")
        if params.variant == "2014-03" and (params.hash_size or 0) < phc.MIN_OUTPUT_BYTES:
            raise InvalidParametersError(
                f"hash_size must be at least {phc.MIN_OUTPUT_BYTES} bytes to store hashes"
            )
        if max_memory is None:
            wanted = max(DEFAULT_MAX_MEMORY, params.memory_bytes)
        elif isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory <= 0:
            raise InvalidParametersError("max_memory must be a positive number of bytes")
        else:
            wanted = max_memory
        limit, limit_name = limits.effective_limit(wanted)
        self._params = params
        self._salt_len = salt_len
        self._secret = bytes(secret) if secret is not None else b""
        self._max_memory = wanted if limit is None else limit
        self._limit_name = limit_name
        self._backend = backend
        self._wipe = wipe
        self._check_memory(params, stored=False)
        self._max_work = max(WORK_PER_MEMORY * self._max_memory, limits.estimated_work(params))
        self._pool = _EnginePool(self._new_engine)

    def _new_engine(self) -> Engine:
        from twocats.kdf import Engine

        return Engine(self._backend, max_memory=self._max_memory, wipe=self._wipe)

    def _check_memory(self, params: Params, *, stored: bool) -> None:
        """Refuse parameters needing more memory than the limit (stored: a hash string's)."""
        needed = params.memory_bytes
        if needed <= self._max_memory:
            return
        error = limits.memory_limit_error(
            params.mem_cost, needed, self._max_memory, self._limit_name
        )
        if stored:
            raise HashMemoryLimitError(f"the stored hash is refused: {error}")
        raise error

    def _check_stored(self, params: Params) -> None:
        """Refuse a stored hash's parameters that exceed the memory or the work limit."""
        self._check_memory(params, stored=True)
        work = limits.estimated_work(params)
        if work > self._max_work:
            settings = ", ".join(
                f"{name}={getattr(params, name)}"
                for name in ("mem_cost", "time_cost", "block_size", "lanes", "multiplies")
                if getattr(params, name) is not None
            )
            raise HashLimitError(
                f"the stored hash is refused: its work is estimated at {format_size(work)} of "
                f"standard fill ({settings}), more than max_work ({format_size(self._max_work)}, "
                f"{WORK_PER_MEMORY} times max_memory)"
            )

    @property
    def params(self) -> Params:
        """The parameters of new hashes."""
        return self._params

    @property
    def salt_len(self) -> int:
        """The salt length of new hashes, in bytes."""
        return self._salt_len

    @property
    def max_memory(self) -> int:
        """The effective memory limit in bytes (see the class documentation)."""
        return self._max_memory

    @property
    def max_work(self) -> int:
        """The work limit for stored hashes, in bytes of standard fill.

        :data:`WORK_PER_MEMORY` times :attr:`max_memory`, or the work of the hasher's own
        parameters if that is larger (see :func:`twocats.kdf.limits.estimated_work`).
        """
        return self._max_work

    @property
    def backend(self) -> str | None:
        """The compute backend requested (None: the environment's or the default)."""
        return self._backend

    def release(self) -> None:
        """Free the work memory kept for reuse between calls (calls running now keep theirs).

        The next call allocates afresh.  Useful after a burst of logins, or before a process
        forks.
        """
        self._pool.clear()

    def __repr__(self) -> str:
        pepper = "<set>" if self._secret else "None"
        return (
            f"PasswordHasher(params={self._params!r}, salt_len={self._salt_len}, secret={pepper}, "
            f"max_memory={self._max_memory}, backend={self._backend!r})"
        )

    def check_hash(self, hash: str | bytes) -> Params:
        """Return the parameters of `hash` if this hasher can verify it, without any hashing.

        Raises :class:`~twocats.exceptions.InvalidHashError` for a malformed or non-canonical
        string, and its subclass :class:`~twocats.exceptions.HashLimitError` if it asks for more
        memory than :attr:`max_memory` (:class:`~twocats.exceptions.HashMemoryLimitError`) or more
        work than :attr:`max_work`; useful to reject a bad stored hash before asking for a
        password.
        """
        params = phc.decode(hash).params
        self._check_stored(params)
        return params

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        """Hash `password` (``str`` is encoded as UTF-8) and return the PHC string.

        `salt` is for reproducing known answers only: leave it out and a fresh random salt of
        :attr:`salt_len` bytes is used, as every stored password needs.
        """
        secret = _password_bytes(password)
        if salt is None:
            salt = secrets.token_bytes(self._salt_len)
        elif not isinstance(salt, (bytes, bytearray)):
            raise TypeError("salt must be bytes")
        elif not phc.MIN_SALT_BYTES <= len(salt) <= phc.MAX_SALT_BYTES:
            raise InvalidParametersError(
                f"salt must be {phc.MIN_SALT_BYTES} to {phc.MAX_SALT_BYTES} bytes long"
            )
        salt = bytes(salt)
        with self._pool.engine() as engine:
            digest = engine.derive(secret, salt, self._params, data=self._secret)
        return phc.encode(self._params, salt, digest)

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        """Return True if `password` matches the stored `hash`, else raise.

        The output is recomputed with exactly the parameters in the string and compared in constant
        time.  Raises :class:`~twocats.exceptions.VerifyMismatchError` for a wrong password and
        :class:`~twocats.exceptions.InvalidHashError` for a malformed or non-canonical string or
        one this hasher will not compute: :class:`~twocats.exceptions.HashMemoryLimitError` (also
        a :class:`~twocats.exceptions.MemoryLimitError`) if it asks for more memory than
        :attr:`max_memory`, :class:`~twocats.exceptions.HashLimitError` if it asks for more work
        than :attr:`max_work`.  A ``str`` password that is not valid Unicode raises
        :class:`~twocats.exceptions.InvalidParametersError`, a password of another type
        ``TypeError``.
        """
        secret = _password_bytes(password)
        stored = phc.decode(hash)
        self._check_stored(stored.params)
        with self._pool.engine() as engine:
            digest = engine.derive(secret, stored.salt, stored.params, data=self._secret)
        if not hmac.compare_digest(digest, stored.digest):
            raise VerifyMismatchError("The password does not match the supplied hash")
        return True

    def needs_rehash(self, hash: str | bytes) -> bool:
        """Return True if `hash` was not made with this hasher's parameters and salt length.

        A hash upgraded to this hasher's memory cost (its start level is then below the hasher's)
        does not need rehashing: it did all the work of a fresh hash and more.  Use
        :meth:`can_upgrade` to see whether :meth:`upgrade` can bring a hash up to date without the
        password.
        """
        stored = phc.decode(hash)
        if len(stored.salt) < self._salt_len or _differences(stored.params, self._params):
            return True
        return stored.params.mem_cost != self._params.mem_cost or _start(stored.params) > _start(
            self._params
        )

    def can_upgrade(self, hash: str | bytes) -> bool:
        """Return True if :meth:`upgrade` would raise the memory cost of `hash`.

        That is the case when the stored hash differs from this hasher's parameters only by a lower
        memory cost and start level.  (If its start level is above the hasher's, the upgraded hash
        still reports :meth:`needs_rehash`, having done a little less work than a fresh hash.)
        """
        stored = phc.decode(hash)
        return (
            not _differences(stored.params, self._params)
            and stored.params.mem_cost < self._params.mem_cost
        )

    def upgrade(self, hash: str | bytes) -> str:
        """Raise the memory cost of a stored hash to this hasher's, without the password.

        Returns the new hash string; it verifies the same password as the old one, and equals the
        hash of that password made directly at the new memory cost with the old salt and start level
        (see the module documentation).  A hash already at or above this hasher's memory cost is
        returned unchanged (in canonical form).

        Raises :class:`~twocats.exceptions.InvalidParametersError` if the stored hash differs in any
        other parameter (those can only change by rehashing the password at the next login),
        :class:`~twocats.exceptions.InvalidHashError` for a malformed string, and
        :class:`~twocats.exceptions.MemoryLimitError` if the new cost exceeds :attr:`max_memory`.
        """
        stored = phc.decode(hash)
        old = stored.params
        differing = _differences(old, self._params)
        if differing:
            raise InvalidParametersError(
                f"cannot upgrade without the password: the stored hash differs in "
                f"{', '.join(differing)}; rehash it when the user next logs in"
            )
        if old.mem_cost >= self._params.mem_cost:
            return stored.encode()
        new = dataclasses.replace(old, mem_cost=self._params.mem_cost)
        self._check_memory(new, stored=False)
        with self._pool.engine() as engine:
            digest = engine.update(stored.digest, new, old.mem_cost)
        return phc.encode(new, stored.salt, digest)
