"""Admission control for :class:`~twocats.PasswordHasher`: slots, a memory budget and engines.

An :class:`Admission` lets at most ``max_concurrency`` calls run at once and keeps the work
memory of all of them, together with the idle engines kept for reuse, within
``max_total_memory``.  Callers wait in one first-in, first-out queue, whether they are threads
(:meth:`Admission.slot`) or asyncio tasks (:meth:`Admission.aslot`); the head of the queue is
admitted as soon as both limits allow it, and nobody behind it overtakes it.  A waiter gives up
after its ``timeout`` with :class:`~twocats.exceptions.HasherBusyError`.

Each admitted call is lent an :class:`~twocats.kdf.Engine`: an idle one where there is one, so
that a busy server reuses mapped memory instead of faulting in fresh pages.  An engine comes back
only from a call that succeeded; one whose buffer grew beyond the owner's own need (an unusual
stored hash) gives that buffer up first, and idle engines are let go when the budget needs their
memory for a call.  The admission holds no reference to its owner, so a dropped hasher frees its
memory at once, and a forked child starts with a fresh, empty admission.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from twocats._units import format_size
from twocats.exceptions import HasherBusyError

if TYPE_CHECKING:
    import asyncio

    from twocats.kdf.engine import Engine


_T = TypeVar("_T")


@dataclass(eq=False)
class _Ticket:
    """One caller's place in the queue, and once admitted, its charge and engine."""

    need: int
    wake: Callable[[], None]
    #: Whether the caller is lent an engine (a foreign hash's call is not).
    lends: bool = True
    granted: bool = False
    charge: int = 0
    engine: Engine | None = field(default=None, repr=False)


class Admission:
    """A FIFO admission queue with a concurrency limit, a memory budget and an engine pool.

    ``new_engine`` makes an engine when no idle one is left; ``own_memory`` is the work memory
    of the owner's own parameters, the most an idle engine keeps.
    """

    def __init__(
        self,
        *,
        max_concurrency: int,
        max_total_memory: int,
        own_memory: int,
        new_engine: Callable[[], Engine],
    ) -> None:
        self.max_concurrency = max_concurrency
        self.max_total_memory = max_total_memory
        self._own_memory = own_memory
        self._new_engine = new_engine
        self._reset()
        _LIVE.add(self)

    def _reset(self) -> None:
        """Start empty: no call in flight, nobody waiting, no idle engine."""
        self._lock = threading.Lock()
        self._queue: collections.deque[_Ticket] = collections.deque()
        self._free: list[Engine] = []
        self._in_flight = 0
        self._charged = 0
        self._idle_bytes = 0

    # -- what the tests and the benchmarks read ----------------------------------------------------

    @property
    def in_flight(self) -> int:
        """The number of calls admitted and not yet finished."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        """The number of callers in the queue."""
        return len(self._queue)

    @property
    def charged_bytes(self) -> int:
        """The work memory charged to the calls in flight."""
        return self._charged

    @property
    def idle_engines(self) -> int:
        """The number of engines kept for reuse."""
        return len(self._free)

    # -- thread callers ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def slot(self, need: int, timeout: float | None) -> Iterator[Engine]:
        """Wait for a slot and ``need`` bytes of the budget; lend an engine for the block."""
        yield from self._lend(self._wait(need, timeout, lends=True))

    @contextlib.contextmanager
    def reserve(self, need: int, timeout: float | None) -> Iterator[None]:
        """Wait for a slot and ``need`` bytes of the budget, as :meth:`slot`, lending no engine.

        For work that allocates its own memory (another library's hash): idle engines make
        room for ``need`` as they do for a call of the owner's.
        """
        yield from self._hold(self._wait(need, timeout, lends=False))

    def _wait(self, need: int, timeout: float | None, *, lends: bool) -> _Ticket:
        """Wait in the queue until admitted; return the granted ticket."""
        # Each waiter sleeps on a condition of its own, so that a grant wakes only its caller.
        admitted = threading.Condition(self._lock)
        ticket = _Ticket(need, admitted.notify, lends)
        deadline = None if timeout is None else time.monotonic() + timeout
        evicted: list[Engine] = []
        try:
            with self._lock:
                self._enqueue(ticket, evicted)
                try:
                    while not ticket.granted:
                        remaining = None if deadline is None else deadline - time.monotonic()
                        if remaining is not None and remaining <= 0:
                            raise self._busy(ticket, timeout)
                        admitted.wait(remaining)
                except BaseException:
                    # A timeout or an interrupt while waiting: leave the queue, or give back a
                    # slot granted in the meantime.
                    self._withdraw(ticket, evicted)
                    raise
        finally:
            # Engines let go for the budget are released outside the lock (wiping takes time).
            _release_all(evicted)
        return ticket

    # -- asyncio callers ---------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def aslot(
        self, need: int, timeout: float | None, *, lends: bool = True
    ) -> AsyncIterator[_Lease]:
        """The asyncio form of :meth:`slot`: the wait never blocks the event loop.

        The block runs its work in a thread through :meth:`_Lease.run`, which gives the slot
        back when the work ends, also if the awaiting task was cancelled in the meantime.
        ``lends=False`` is the asyncio form of :meth:`reserve`: run the work with
        :meth:`_Lease.run_plain`.
        """
        # Imported here, so that a program that never awaits a hasher does not load asyncio.
        import asyncio

        loop = asyncio.get_running_loop()
        admitted: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_settle, admitted)

        ticket = _Ticket(need, wake, lends)
        evicted: list[Engine] = []
        with self._lock:
            self._enqueue(ticket, evicted)
        _release_all(evicted)
        busy: HasherBusyError | None = None
        try:
            await asyncio.wait_for(asyncio.shield(admitted), timeout)
        except asyncio.TimeoutError:
            with self._lock:
                if not ticket.granted:
                    self._withdraw(ticket, evicted)
                    busy = self._busy(ticket, timeout)
        except BaseException:
            # Cancelled while waiting: leave the queue, or give back a slot granted meanwhile.
            with self._lock:
                self._withdraw(ticket, evicted)
            raise
        finally:
            _release_all(evicted)
        if busy is not None:
            raise busy
        lease = _Lease(self, ticket)
        try:
            yield lease
        finally:
            lease.abandon()

    # -- the queue ---------------------------------------------------------------------------------

    def _enqueue(self, ticket: _Ticket, evicted: list[Engine]) -> None:
        """Join the queue (lock held) and admit whoever can go now."""
        self._queue.append(ticket)
        self._admit(evicted)

    def _admit(self, evicted: list[Engine]) -> None:
        """Grant the head of the queue while both limits allow it (lock held).

        Idle engines are let go (into ``evicted``, released by the caller outside the lock)
        when their memory is what stands in the way.
        """
        while self._queue and self._in_flight < self.max_concurrency:
            ticket = self._queue[0]
            engine = self._free[-1] if self._free and ticket.lends else None
            kept = 0 if engine is None else engine.buffer_bytes
            charge = max(ticket.need, kept)
            while (
                self._charged + self._idle_bytes - kept + charge > self.max_total_memory
                and self._free
            ):
                dropped = self._free.pop(0)
                self._idle_bytes -= dropped.buffer_bytes
                evicted.append(dropped)
                engine = self._free[-1] if self._free and ticket.lends else None
                kept = 0 if engine is None else engine.buffer_bytes
                charge = max(ticket.need, kept)
            if self._charged + self._idle_bytes - kept + charge > self.max_total_memory:
                return
            self._queue.popleft()
            if engine is not None:
                self._free.pop()
                self._idle_bytes -= kept
            ticket.granted = True
            ticket.charge = charge
            ticket.engine = engine
            self._in_flight += 1
            self._charged += charge
            ticket.wake()

    def _withdraw(self, ticket: _Ticket, evicted: list[Engine]) -> None:
        """Leave the queue, or give back the slot if it was granted (lock held)."""
        if ticket.granted:
            self._finish(ticket, ticket.engine, evicted)
        else:
            with contextlib.suppress(ValueError):
                self._queue.remove(ticket)
            self._admit(evicted)

    def _finish(self, ticket: _Ticket, engine: Engine | None, evicted: list[Engine]) -> None:
        """Give back a slot, and keep ``engine`` for reuse if given (lock held)."""
        ticket.granted = False
        ticket.engine = None
        self._in_flight -= 1
        self._charged -= ticket.charge
        if engine is not None and len(self._free) < self.max_concurrency:
            self._free.append(engine)
            self._idle_bytes += engine.buffer_bytes
        self._admit(evicted)

    def _busy(self, ticket: _Ticket, timeout: float | None) -> HasherBusyError:
        """The error of a caller that waited ``timeout`` seconds in vain (lock held)."""
        if self._in_flight >= self.max_concurrency:
            limit = f"max_concurrency={self.max_concurrency} hashes running"
        else:
            limit = (
                f"{format_size(ticket.need)} of max_total_memory "
                f"({format_size(self.max_total_memory)}, {format_size(self._charged)} in use)"
            )
        return HasherBusyError(
            f"the hasher is busy: waited {timeout:g} s (timeout) for {limit}, "
            f"with {len(self._queue)} callers queued"
        )

    # -- running -----------------------------------------------------------------------------------

    def _lend(self, ticket: _Ticket) -> Iterator[Engine]:
        """Lend the ticket's engine (or a new one) for one call, then give the slot back."""
        evicted: list[Engine] = []
        engine = ticket.engine
        returned: Engine | None = None
        try:
            if engine is None:
                engine = self._new_engine()
            yield engine
            # An engine whose call raised (including KeyboardInterrupt) is dropped, not reused;
            # one grown for an unusual request gives its larger buffer up.
            if engine.buffer_bytes > self._own_memory:
                engine.release()
            returned = engine
        finally:
            with self._lock:
                self._finish(ticket, returned, evicted)
            _release_all(evicted)

    def _hold(self, ticket: _Ticket) -> Iterator[None]:
        """Hold the ticket's slot, lending no engine, for one call; then give it back."""
        evicted: list[Engine] = []
        try:
            yield
        finally:
            with self._lock:
                self._finish(ticket, None, evicted)
            _release_all(evicted)

    def clear(self) -> None:
        """Let go of every idle engine and its memory (zeroed first if the engine wipes)."""
        with self._lock:
            idle, self._free = self._free, []
            self._idle_bytes = 0
        _release_all(idle)


class _Lease:
    """An admitted asyncio caller's slot: :meth:`run` does the work in a thread."""

    __slots__ = ("_admission", "_started", "_ticket")

    def __init__(self, admission: Admission, ticket: _Ticket) -> None:
        self._admission = admission
        self._ticket = ticket
        self._started = False

    async def run(self, work: Callable[[Engine], _T]) -> _T:
        """Run ``work(engine)`` in a worker thread; the slot is given back when it ends.

        The thread's future is shielded: cancelling the awaiting task lets the work finish
        (a compiled fill cannot be stopped half-way) and give its slot and engine back.
        """
        import asyncio

        self._started = True
        loop = asyncio.get_running_loop()
        return await asyncio.shield(loop.run_in_executor(None, self._run, work))

    def _run(self, work: Callable[[Engine], _T]) -> _T:
        lend = contextlib.contextmanager(self._admission._lend)
        with lend(self._ticket) as engine:
            return work(engine)

    async def run_plain(self, work: Callable[[], _T]) -> _T:
        """Run ``work()`` in a worker thread, lending no engine (see :meth:`Admission.reserve`)."""
        import asyncio

        self._started = True
        loop = asyncio.get_running_loop()
        return await asyncio.shield(loop.run_in_executor(None, self._run_plain, work))

    def _run_plain(self, work: Callable[[], _T]) -> _T:
        hold = contextlib.contextmanager(self._admission._hold)
        with hold(self._ticket):
            return work()

    def abandon(self) -> None:
        """Give the slot back if :meth:`run` was never called."""
        if not self._started:
            self._started = True
            evicted: list[Engine] = []
            with self._admission._lock:
                self._admission._finish(self._ticket, self._ticket.engine, evicted)
            _release_all(evicted)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _release_all(engines: list[Engine]) -> None:
    for engine in engines:
        engine.release()
    engines.clear()


# Every live admission, so that a forked child can empty them (their waiters and calls are
# threads of the parent that do not exist in the child).
_LIVE: weakref.WeakSet[Admission] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for admission in list(_LIVE):
        admission._reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
