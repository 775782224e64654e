"""The password hasher, :class:`PasswordHasher` (its behaviour: :mod:`twocats.password`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final, Literal, TypeVar

from twocats import phc
from twocats._units import format_size
from twocats.exceptions import InvalidParametersError
from twocats.kdf import limits
from twocats.kdf.geometry import work_memory
from twocats.kdf.limits import StoredLimits
from twocats.params import Params, check_int, refuse
from twocats.password._admission import Admission
from twocats.password._foreign import ForeignCost, check_foreign
from twocats.password._jobs import Job, Jobs, Kernels
from twocats.password._target import differences
from twocats.profiles import BUILT_IN, DEFAULT

if TYPE_CHECKING:
    from twocats.kdf.engine import Engine


#: Salt length of new hashes, in bytes (the PHC recommendation).
DEFAULT_SALT_LEN: Final = 16

#: The default ``max_total_memory`` is the machine's memory (:func:`limits.machine_memory`)
#: divided by this.
TOTAL_MEMORY_SHARE: Final = 2

_R = TypeVar("_R")


def _start(params: Params) -> int:
    """Return the resolved start level (Params resolves None to mem_cost)."""
    return params.mem_cost if params.start_mem_cost is None else params.start_mem_cost


def _previous(previous: object) -> tuple[Params, ...]:
    """Check the earlier parameters a hasher accepts: an iterable of Params."""
    if isinstance(previous, (Params, str, bytes)) or not isinstance(previous, Iterable):
        raise TypeError("previous must be an iterable of twocats.Params")
    earlier = tuple(previous)
    for params in earlier:
        if not isinstance(params, Params):
            raise TypeError(f"previous must hold twocats.Params, not {type(params).__name__}")
    return earlier


def _timeout(value: object) -> float | None:
    """Check a timeout in seconds: None or math.inf wait for ever."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        refuse("timeout", "None or a number of seconds above 0", value)
    return None if math.isinf(value) else float(value)


def _engine_factory(backend: str | None, max_memory: int, wipe: bool) -> Callable[[], Engine]:
    """Return a maker of engines that holds no reference to the hasher."""

    def new_engine() -> Engine:
        from twocats.kdf.engine import Engine

        return Engine(backend, max_memory=max_memory, wipe=wipe)

    return new_engine


def needs_rehash_for(
    hash: str | bytes, params: Params, *, salt_len: int = DEFAULT_SALT_LEN
) -> bool:
    """Return True if `hash` was not made with `params` and a salt of at least `salt_len` bytes.

    This is :meth:`PasswordHasher.needs_rehash` without a hasher, for parameters this machine
    could not run itself (a production configuration checked elsewhere).  It only decodes.
    """
    stored = phc.decode(hash)
    if len(stored.salt) < salt_len or differences(stored.params, params):
        return True
    return stored.params.mem_cost != params.mem_cost or _start(stored.params) > _start(params)


def can_upgrade_to(hash: str | bytes, params: Params) -> bool:
    """Return True if an upgrade to `params` would raise the memory cost of `hash`.

    This is :meth:`PasswordHasher.can_upgrade` without a hasher.  It only decodes.
    """
    stored = phc.decode(hash)
    return not differences(stored.params, params) and stored.params.mem_cost < params.mem_cost


def verify_limits_for(params: Params) -> tuple[int, int]:
    """Return the ``max_memory`` and ``max_work`` a verifier needs to accept hashes of `params`.

    A hash made by a hasher with `params` always verifies on that hasher; another verifier
    (a server with other parameters, the command line) needs at least these limits.
    """
    plain = StoredLimits(0, 0)
    return work_memory(params), plain.work_of(params)


class PasswordHasher:
    """Hash and verify passwords with TwoCats, as PHC strings.

    ``PasswordHasher()`` uses :data:`twocats.profiles.DEFAULT`; the keyword arguments `mem_cost`,
    `multiplies` and `parallelism` adjust it, and :meth:`from_params` takes a complete
    :class:`~twocats.params.Params` (for example a profile).

    :param salt_len: length of the random salt of new hashes, 8 to 64 bytes.
    :param secret: an optional pepper, passed to TwoCats as its ``data`` input.  It is kept out of
        the database, so a leaked database alone cannot be attacked; every hash made with a pepper
        verifies only with the same pepper.  It never appears in a ``repr`` or an error message.
    :param previous: parameters stored hashes were made with before (an operator who lowered the
        cost, or changed another parameter): the default limits accept their hashes, upgraded
        ones included, as they accept those of the built-in profiles.
    :param max_memory: the most work memory, in bytes, a stored hash may ask for.  Stored hashes
        asking for more are refused with :class:`~twocats.exceptions.HashMemoryLimitError` before
        anything is allocated.  Default: twice the hasher's own need, or the need of the largest
        of the built-in profiles and `previous` where that is more, and never more than
        `max_total_memory` or the machine can give.
    :param max_work: the most work (units of :func:`twocats.kdf.limits.estimated_work`, about a
        nanosecond of CPU each) a stored hash may ask for.  Default: 2.5 times the work of the
        costliest of the hasher's own parameters, the built-in profiles and `previous`, or of a
        default-profile hash at `max_memory` if that was given and is more.
    :param max_concurrency: the most hashes (hash, verify, upgrade) running at once; further
        callers wait in order.  Default: the usable CPUs (affinity and cgroup quota) divided by
        the parameters' parallelism, at least 1, and no more than `max_total_memory` holds.
    :param max_total_memory: the most work memory, in bytes, of all running hashes and of the
        work areas kept for reuse together.  Default: half of what the machine can give
        (:data:`TOTAL_MEMORY_SHARE`), at least the hasher's own need.
    :param timeout: how long a caller waits for admission, in seconds, before
        :class:`~twocats.exceptions.HasherBusyError` (None: for ever).  Each call may override it.
    :param backend: the compute backend (``"reference"``, ``"scalar"`` or ``"simd"``; None chooses
        through ``TWOCATS_BACKEND``, then ``"simd"``).
    :param wipe: zero the work area after every hash, so the blocks derived from the password do
        not outlive the call.  This costs one extra write pass over the memory after each hash,
        about a quarter to a third more time: measured on the project machine (2 cores, shared
        with other jobs), :data:`~twocats.profiles.MODERATE` took 285 ms without and 375 ms with
        wiping (121 and 154 ms of CPU), :data:`~twocats.profiles.SENSITIVE` 488 and 612 ms.

    Raises :class:`~twocats.exceptions.InvalidParametersError` for invalid arguments (naming
    the argument) and :class:`~twocats.exceptions.MemoryLimitError` if the hasher's own
    parameters need more memory than the limits allow.
    """

    __slots__ = (
        "_backend",
        "_jobs",
        "_kernels",
        "_pool",
        "_previous",
        "_timeout",
    )

    def __init__(
        self,
        *,
        mem_cost: int | None = None,
        multiplies: int | None = None,
        parallelism: int | None = None,
        salt_len: int = DEFAULT_SALT_LEN,
        secret: bytes | None = None,
        previous: Iterable[Params] = (),
        max_memory: int | None = None,
        max_work: int | None = None,
        max_concurrency: int | None = None,
        max_total_memory: int | None = None,
        timeout: float | None = None,
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
        self._setup(
            params,
            salt_len=salt_len,
            secret=secret,
            previous=previous,
            max_memory=max_memory,
            max_work=max_work,
            max_concurrency=max_concurrency,
            max_total_memory=max_total_memory,
            timeout=timeout,
            backend=backend,
            wipe=wipe,
        )

    @classmethod
    def from_params(
        cls,
        params: Params,
        *,
        salt_len: int = DEFAULT_SALT_LEN,
        secret: bytes | None = None,
        previous: Iterable[Params] = (),
        max_memory: int | None = None,
        max_work: int | None = None,
        max_concurrency: int | None = None,
        max_total_memory: int | None = None,
        timeout: float | None = None,
        backend: str | None = None,
        wipe: bool = False,
    ) -> PasswordHasher:
        """Return a hasher for `params` (for example a profile from :mod:`twocats.profiles`)."""
        if not isinstance(params, Params):
            raise TypeError(f"params must be a twocats.Params, not {type(params).__name__}")
        hasher = cls.__new__(cls)
        hasher._setup(
            params,
            salt_len=salt_len,
            secret=secret,
            previous=previous,
            max_memory=max_memory,
            max_work=max_work,
            max_concurrency=max_concurrency,
            max_total_memory=max_total_memory,
            timeout=timeout,
            backend=backend,
            wipe=wipe,
        )
        return hasher

    def _setup(
        self,
        params: Params,
        *,
        salt_len: int,
        secret: bytes | None,
        previous: Iterable[Params],
        max_memory: int | None,
        max_work: int | None,
        max_concurrency: int | None,
        max_total_memory: int | None,
        timeout: float | None,
        backend: str | None,
        wipe: bool,
    ) -> None:
        check_int("salt_len", salt_len, phc.MIN_SALT_BYTES, phc.MAX_SALT_BYTES)
        if secret is not None and not isinstance(secret, (bytes, bytearray)):
            raise TypeError("secret must be bytes or None")
        problem = phc.strict_problem(params)
        if problem is not None:
            # Every hash of a hasher is stored, and such parameters cannot be.
            raise InvalidParametersError(
                f"params made with strict=False fail strict validation ({problem}); a "
                "PasswordHasher stores its hashes and needs parameters that pass it"
            )
        if params.variant == "2014-03" and (params.hash_size or 0) < phc.MIN_OUTPUT_BYTES:
            raise InvalidParametersError(
                f"hash_size must be at least {phc.MIN_OUTPUT_BYTES} bytes to store hashes"
            )
        earlier = _previous(previous)
        own = work_memory(params)
        stored = StoredLimits.relative_to(
            params, previous=BUILT_IN + earlier, max_memory=max_memory, max_work=max_work
        )
        # An explicit max_memory raises the default budget to it.
        wanted = own if max_memory is None else max(own, stored.max_memory)
        budget = self._budget(params, wanted, max_total_memory)
        if max_memory is None and stored.max_memory > budget:
            stored = dataclasses.replace(stored, max_memory=budget, memory_name="max_total_memory")
        elif stored.max_memory > budget:
            raise InvalidParametersError(
                f"max_memory ({format_size(stored.max_memory)}) is more than max_total_memory "
                f"({format_size(budget)}): a hash that large could never be admitted"
            )
        if own > stored.max_memory:
            raise limits.memory_limit_error(
                params.mem_cost, own, stored.max_memory, stored.memory_name
            )
        if max_work is not None and stored.work_of(params) > stored.max_work:
            raise InvalidParametersError(
                f"max_work ({max_work}) is below the work of the hasher's own parameters "
                f"({stored.work_of(params)})"
            )
        pepper = bytes(secret) if secret is not None else b""
        self._jobs = Jobs(params, salt_len, pepper, stored)
        self._previous = earlier
        self._timeout = _timeout(timeout)
        self._backend = backend
        self._kernels = Kernels(backend, (params, *BUILT_IN, *earlier))
        self._pool = Admission(
            max_concurrency=self._concurrency(params, own, budget, max_concurrency),
            max_total_memory=budget,
            own_memory=own,
            new_engine=_engine_factory(backend, stored.max_memory, wipe),
        )

    @staticmethod
    def _budget(params: Params, least: int, max_total_memory: int | None) -> int:
        """Return the memory budget, checked or by default (see the class documentation).

        The default is never below ``least``; an explicit budget below the hasher's own need
        is refused.
        """
        if max_total_memory is None:
            machine = limits.machine_memory()
            share = 4 * least if machine is None else machine // TOTAL_MEMORY_SHARE
            return max(least, share)
        budget = check_int("max_total_memory", max_total_memory, 1)
        own = work_memory(params)
        if own > budget:
            raise limits.memory_limit_error(params.mem_cost, own, budget, "max_total_memory")
        return budget

    @staticmethod
    def _concurrency(params: Params, own: int, budget: int, wanted: int | None) -> int:
        """Return the concurrency limit, checked or by default (see the class documentation)."""
        if wanted is not None:
            return check_int("max_concurrency", wanted, 1)
        cpus = limits.usable_cpus()
        by_cpus = cpus // min(params.parallelism, cpus)
        return max(1, min(by_cpus, budget // max(own, 1)))

    # -- properties --------------------------------------------------------------------------------

    @property
    def params(self) -> Params:
        """The parameters of new hashes."""
        return self._jobs.params

    @property
    def previous(self) -> tuple[Params, ...]:
        """The earlier parameters whose stored hashes the limits accept (see the class)."""
        return self._previous

    @property
    def salt_len(self) -> int:
        """The salt length of new hashes, in bytes."""
        return self._jobs.salt_len

    @property
    def max_memory(self) -> int:
        """The memory limit for stored hashes, in bytes (see the class documentation)."""
        return self._jobs.limits.max_memory

    @property
    def max_work(self) -> int:
        """The work limit for stored hashes (see :func:`twocats.kdf.limits.estimated_work`)."""
        return self._jobs.limits.max_work

    @property
    def limits(self) -> StoredLimits:
        """The limits stored hashes are checked against."""
        return self._jobs.limits

    @property
    def max_concurrency(self) -> int:
        """The most hashes running at once."""
        return self._pool.max_concurrency

    @property
    def max_total_memory(self) -> int:
        """The memory budget of all running hashes and kept work areas, in bytes."""
        return self._pool.max_total_memory

    @property
    def timeout(self) -> float | None:
        """How long a caller waits for admission by default, in seconds (None: for ever)."""
        return self._timeout

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
        pepper = "<set>" if self._jobs.pepper else "None"
        return (
            f"PasswordHasher(params={self.params!r}, salt_len={self.salt_len}, secret={pepper}, "
            f"max_memory={self.max_memory}, max_work={self.max_work}, "
            f"max_concurrency={self.max_concurrency}, max_total_memory={self.max_total_memory}, "
            f"timeout={self._timeout}, backend={self._backend!r})"
        )

    # -- running under admission control -----------------------------------------------------------

    def _wait(self, timeout: float | None) -> float | None:
        return self._timeout if timeout is None else _timeout(timeout)

    def _run(self, job: Job[_R], timeout: float | None) -> _R:
        wait = self._wait(timeout)
        # A kernel that must load or compile does so before the call holds a slot.
        self._kernels.prepare(job.params, wait)
        with self._pool.slot(job.need, wait) as engine:
            output = job.work(engine)
        return job.finish(output)

    async def _arun(self, job: Job[_R], timeout: float | None) -> _R:
        wait = self._wait(timeout)
        if not self._kernels.ready(job.params):
            import asyncio

            await asyncio.to_thread(self._kernels.prepare, job.params, wait)
        async with self._pool.aslot(job.need, wait) as lease:
            output = await lease.run(job.work)
        return job.finish(output)

    # -- the public calls --------------------------------------------------------------------------

    def check_hash(self, hash: str | bytes) -> Params:
        """Return the parameters of `hash` if this hasher can verify it, without any hashing.

        Raises :class:`~twocats.exceptions.InvalidHashError` for a malformed or non-canonical
        string, and its subclass :class:`~twocats.exceptions.HashLimitError` if it asks for more
        memory than :attr:`max_memory` (:class:`~twocats.exceptions.HashMemoryLimitError`) or more
        work than :attr:`max_work`; useful to reject a bad stored hash before asking for a
        password.
        """
        params = phc.decode(hash).params
        self._jobs.limits.check(params)
        return params

    def hash(
        self, password: str | bytes, *, salt: bytes | None = None, timeout: float | None = None
    ) -> str:
        """Hash `password` (``str`` is encoded as UTF-8) and return the PHC string.

        `salt` is for reproducing known answers only: leave it out and a fresh random salt of
        :attr:`salt_len` bytes is used, as every stored password needs.  `timeout` overrides the
        hasher's (``math.inf``: wait for ever); see :class:`PasswordHasher`.
        """
        return self._run(self._jobs.hash(password, salt), timeout)

    async def ahash(
        self, password: str | bytes, *, salt: bytes | None = None, timeout: float | None = None
    ) -> str:
        """:meth:`hash` for asyncio: waits without blocking the event loop."""
        return await self._arun(self._jobs.hash(password, salt), timeout)

    def verify(
        self, hash: str | bytes, password: str | bytes, *, timeout: float | None = None
    ) -> Literal[True]:
        """Return True if `password` matches the stored `hash`, else raise.

        The output is recomputed with exactly the parameters in the string and compared in constant
        time.  Raises :class:`~twocats.exceptions.VerifyMismatchError` for a wrong password and
        :class:`~twocats.exceptions.InvalidHashError` for a malformed or non-canonical string or
        one this hasher will not compute: :class:`~twocats.exceptions.HashMemoryLimitError` (also
        a :class:`~twocats.exceptions.MemoryLimitError`) if it asks for more memory than
        :attr:`max_memory`, :class:`~twocats.exceptions.HashLimitError` if it asks for more work
        than :attr:`max_work`.  A ``str`` password that is not valid Unicode raises
        :class:`~twocats.exceptions.InvalidParametersError`, a password of another type
        ``TypeError``; a caller that waited `timeout` seconds in vain
        :class:`~twocats.exceptions.HasherBusyError`.
        """
        return self._run(self._jobs.verify(hash, password), timeout)

    def hash_as(
        self, hash: str | bytes, password: str | bytes, *, timeout: float | None = None
    ) -> str:
        """Return the hash string of `password` made with the parameters and salt of `hash`.

        It equals `hash` exactly when the password matches (compare with :meth:`verify`, which
        does so in constant time); this is passlib's ``genhash``.  The stored string is checked
        as :meth:`verify` checks it, with the same errors.
        """
        return self._run(self._jobs.hash_as(hash, password), timeout)

    async def averify(
        self, hash: str | bytes, password: str | bytes, *, timeout: float | None = None
    ) -> Literal[True]:
        """:meth:`verify` for asyncio: waits without blocking the event loop.

        Cancelling the awaiting task is safe: a call still waiting leaves the queue, and one
        already running finishes in its thread and gives its slot and work area back.
        """
        return await self._arun(self._jobs.verify(hash, password), timeout)

    def verify_unknown(
        self,
        password: str | bytes,
        *,
        like: str | bytes | None = None,
        timeout: float | None = None,
    ) -> None:
        """Spend a real verification's time and memory, then raise VerifyMismatchError.

        Call it when a login names a user that does not exist, instead of answering at once, so
        that the response time does not reveal which user names exist.  It hashes `password`
        with the hasher's own parameters and a fresh salt under the same admission control as
        :meth:`verify`, and always raises :class:`~twocats.exceptions.VerifyMismatchError`.

        Verifying an upgraded hash recomputes every level from its start level, up to about
        twice the work of a fresh hash.  Where most stored hashes were upgraded (after a bulk
        upgrade), pass one of them as `like`: the decoy then does exactly the work of verifying
        a hash of that shape, and never matches, whatever the password.
        """
        self._run(self._jobs.unknown(password, like), timeout)

    async def averify_unknown(
        self,
        password: str | bytes,
        *,
        like: str | bytes | None = None,
        timeout: float | None = None,
    ) -> None:
        """:meth:`verify_unknown` for asyncio."""
        await self._arun(self._jobs.unknown(password, like), timeout)

    def check_foreign(self, hash: str | bytes) -> ForeignCost:
        """Return the cost of another library's stored `hash` if this hasher's limits allow it.

        `hash` is an argon2 or bcrypt string.  Raises :class:`~twocats.exceptions.InvalidHashError`
        for any other string and its subclasses :class:`~twocats.exceptions.HashMemoryLimitError`
        and :class:`~twocats.exceptions.HashLimitError` as :meth:`check_hash` does (see
        :mod:`twocats.password._foreign`).  Nothing is computed.
        """
        return check_foreign(hash, self._jobs.limits)

    def verify_foreign(
        self, hash: str | bytes, check: Callable[[], _R], *, timeout: float | None = None
    ) -> _R:
        """Run `check`, another library's verification of `hash`, under this hasher's control.

        `hash` must pass :meth:`check_foreign` (its errors are raised before any waiting); `check`
        then runs in an admission slot, with the memory the hash asks for counted against
        :attr:`max_total_memory` like a twocats hash's, and its result is returned.  `timeout` is
        :meth:`verify`'s.  The framework adapters verify argon2 and bcrypt hashes through this.
        """
        cost = self.check_foreign(hash)
        with self._pool.reserve(cost.memory, self._wait(timeout)):
            return check()

    async def averify_foreign(
        self, hash: str | bytes, check: Callable[[], _R], *, timeout: float | None = None
    ) -> _R:
        """:meth:`verify_foreign` for asyncio: waits without blocking, `check` runs in a thread."""
        cost = self.check_foreign(hash)
        async with self._pool.aslot(cost.memory, self._wait(timeout), lends=False) as lease:
            return await lease.run_plain(check)

    def needs_rehash(self, hash: str | bytes) -> bool:
        """Return True if `hash` was not made with this hasher's parameters and salt length.

        A hash upgraded to this hasher's memory cost (its start level is then below the hasher's)
        does not need rehashing: it did all the work of a fresh hash and more.  Use
        :meth:`can_upgrade` to see whether :meth:`upgrade` can bring a hash up to date without the
        password.  It only decodes the string and computes nothing.
        """
        return needs_rehash_for(hash, self.params, salt_len=self.salt_len)

    def can_upgrade(self, hash: str | bytes) -> bool:
        """Return True if :meth:`upgrade` would raise the memory cost of `hash`.

        That is the case when the stored hash differs from this hasher's parameters only by a lower
        memory cost and start level.  (If its start level is above the hasher's, the upgraded hash
        still reports :meth:`needs_rehash`, having done a little less work than a fresh hash.)
        """
        return can_upgrade_to(hash, self.params)

    def upgrade(self, hash: str | bytes, *, timeout: float | None = None) -> str:
        """Raise the memory cost of a stored hash to this hasher's, without the password.

        Returns the new hash string; it verifies the same password as the old one, and equals the
        hash of that password made directly at the new memory cost with the old salt and start level
        (see the module documentation).  A hash already at or above this hasher's memory cost is
        returned unchanged (in canonical form).

        Raises :class:`~twocats.exceptions.InvalidParametersError` if the stored hash differs in any
        other parameter (those can only change by rehashing the password at the next login),
        :class:`~twocats.exceptions.InvalidHashError` for a malformed string, and
        :class:`~twocats.exceptions.HashLimitError` if the upgrade needs more memory or work than
        the limits allow (the same limits and messages as :meth:`verify`).
        """
        job = self._jobs.upgrade(hash)
        return job if isinstance(job, str) else self._run(job, timeout)

    async def aupgrade(self, hash: str | bytes, *, timeout: float | None = None) -> str:
        """:meth:`upgrade` for asyncio: waits without blocking the event loop."""
        job = self._jobs.upgrade(hash)
        return job if isinstance(job, str) else await self._arun(job, timeout)
