"""The memory owner: runs derivations on one backend over a reusable work buffer.

An :class:`Engine` keeps one buffer of 32-bit words (:mod:`twocats.kdf.words`) and grows it as
needed.  A call takes the buffer out of the engine for its whole duration and puts it back
afterwards, so two derivations running at the same time on one engine never share memory: the second
one simply allocates its own buffer (and the larger of the two is kept for later calls).  A call
that fails or is interrupted does not put its buffer back, since a fill thread of an interrupted
call may still be writing to it.

Before allocating, the memory a request needs is compared with the engine's limit (its
``max_memory``, never more than :func:`twocats.kdf.limits.machine_memory`) and with the call's own
``max_memory`` if one is given; afterwards the used part is zeroed when ``wipe`` is set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from twocats._signature import parameters_of
from twocats._units import format_size
from twocats.exceptions import HashingError
from twocats.kdf import core, limits, words
from twocats.kdf.fill.threads import get_fill_slice
from twocats.params import Params, check_int
from twocats.simd.registry import resolve_backend

__all__ = ["Engine"]


def _load_fill(backend: str) -> core.FillSlice:
    """Return the seam implementation of ``backend`` (its kernels compile or load on first use)."""
    if backend == "reference":
        from twocats.kdf.reference import fill_slice

        return fill_slice
    fill: core.FillSlice = get_fill_slice(backend)
    return fill


def _check_limit(max_memory: object) -> int | None:
    if max_memory is None:
        return None
    return check_int("max_memory", max_memory, 0, allowed="None or a number of bytes from 0 up")


def _check_work(params: Params, max_work: int | None, old_mem_cost: int | None = None) -> None:
    """Refuse a call whose estimated work is above ``max_work`` (None: no work limit)."""
    if max_work is not None:
        allowed = limits.StoredLimits.relative_to(params, max_work=max_work)
        allowed.check(params, old_mem_cost=old_mem_cost, subject="the derivation", memory=False)


class Engine:
    """Derive TwoCats outputs on one backend, reusing one work buffer across calls.

    ``backend`` is "reference", "scalar" or "simd" (None: ``$TWOCATS_BACKEND``, else "simd").

    ``max_memory`` (bytes) refuses, before allocating, any request that needs more work memory,
    with a :class:`~twocats.exceptions.MemoryLimitError` naming ``mem_cost``, the size needed and
    the limit.  The limit is never above what the machine can give
    (:func:`twocats.kdf.limits.machine_memory`), which is also the limit when ``max_memory`` is
    None.  Memory the operating system refuses anyway becomes a
    :class:`~twocats.exceptions.HashingError`.

    ``wipe`` zeroes the used work memory after every call (and the kept buffer on
    :meth:`release`), so the blocks derived from a password do not outlive the call; the small
    region states and the kernels' scratch are zeroed after every level and slice in any case.
    It costs one single-threaded write pass over the work memory per call, about a quarter to a
    third more time per hash: measured on the project machine (2 cores, shared with other jobs), a
    256 MiB hash took 285 ms without and 375 ms with wiping (121 and 154 ms of CPU), a 1 GiB one
    488 and 612 ms.  Python's immutable copies of the inputs and the few small intermediate keys
    cannot be wiped by any Python library.

    One engine may be shared by many threads: concurrent calls never share a buffer.
    """

    def __init__(
        self, backend: str | None = None, *, max_memory: int | None = None, wipe: bool = False
    ) -> None:
        self._backend = resolve_backend(backend)
        self._max_memory, self._limit_name = limits.effective_limit(_check_limit(max_memory))
        self._wipe = bool(wipe)
        self._fill: core.FillSlice | None = None
        self._lock = threading.Lock()
        self._buffer: memoryview | None = None

    def __repr__(self) -> str:
        return (
            f"Engine(backend={self._backend!r}, max_memory={self._max_memory!r}, "
            f"wipe={self._wipe!r})"
        )

    @property
    def backend(self) -> str:
        """The resolved backend name."""
        return self._backend

    @property
    def max_memory(self) -> int | None:
        """The largest work memory (bytes) a call may use: ``max_memory`` or the machine's memory.

        None only when no ``max_memory`` was given and the platform does not report its memory.
        """
        return self._max_memory

    @property
    def wipe(self) -> bool:
        """Whether the used work memory is zeroed after each call."""
        return self._wipe

    @property
    def buffer_bytes(self) -> int:
        """Size in bytes of the buffer currently kept for reuse (0 if none)."""
        buffer = self._buffer
        return 0 if buffer is None else buffer.nbytes

    def fill_slice(self) -> core.FillSlice:
        """Return (loading it on first use) the seam implementation of this engine's backend."""
        if self._fill is None:
            self._fill = _load_fill(self._backend)
        return self._fill

    @staticmethod
    def memory_required(params: Params, *, old_mem_cost: int | None = None) -> int:
        """Return the bytes of work memory a derivation (or an update from old_mem_cost) needs."""
        return 4 * core.required_words(core.check_params(params), old_mem_cost=old_mem_cost)

    def check_memory(
        self, params: Params, *, old_mem_cost: int | None = None, max_memory: int | None = None
    ) -> int:
        """Return the work memory a call with ``params`` needs, or raise if it is over the limit.

        Every call makes this check first, before it loads (or compiles) a kernel or allocates
        anything; it is offered on its own so that a caller can refuse a request before doing
        anything else, such as asking for a password.  Raises
        :class:`~twocats.exceptions.MemoryLimitError`.
        """
        needed = self.memory_required(params, old_mem_cost=old_mem_cost)
        limit, name = self._limit(max_memory)
        if limit is not None and needed > limit:
            raise limits.memory_limit_error(params.mem_cost, needed, limit, name)
        return needed

    def release(self) -> None:
        """Drop the buffer kept for reuse (zeroing it first when ``wipe`` is set)."""
        with self._lock:
            buffer, self._buffer = self._buffer, None
        if buffer is not None and self._wipe:
            words.zero(buffer)

    # -- derivations -------------------------------------------------------------------------------

    def derive(
        self,
        password: bytes,
        salt: bytes,
        params: Params,
        *,
        data: bytes = b"",
        max_memory: int | None = None,
        max_work: int | None = None,
    ) -> bytes:
        """Derive the final output (``params.output_size`` bytes) from a password and salt.

        ``max_memory`` lowers the engine's memory limit for this call; ``max_work`` (work units
        of :func:`twocats.kdf.limits.estimated_work`) refuses costlier parameters with
        :class:`~twocats.exceptions.HashLimitError`, as a hasher refuses a stored hash: pass
        it whenever the parameters come from storage or a file.  The output is :meth:`client`'s
        finished by :meth:`server`, computed here without their calls between the caller and
        the fill.
        """
        params, fill, memory = self._prepare(params, max_memory, max_work)
        half = core.client_output(params, password, salt, data, fill, memory)
        return core.server_output(params, half)

    @parameters_of(derive)
    def client(self, password: bytes, salt: bytes, params: Params, **options: Any) -> bytes:
        """Derive the client half of server relief (everything except the final hash), with
        :meth:`derive`'s parameters."""
        params, fill, memory = self._prepare(params, options["max_memory"], options["max_work"])
        return core.client_output(params, password, salt, options["data"], fill, memory)

    def server(self, client_output: bytes, params: Params) -> bytes:
        """Finish a client output with the server half of server relief (no work memory)."""
        return core.server_output(core.check_params(params), client_output)

    def update(
        self,
        stored: bytes,
        params: Params,
        old_mem_cost: int,
        *,
        max_memory: int | None = None,
        max_work: int | None = None,
    ) -> bytes:
        """Raise the memory cost of a stored output from ``old_mem_cost`` to ``params.mem_cost``.

        ``old_mem_cost`` is the mem_cost the stored output was derived with; the result equals a
        derivation with ``params`` directly, computed without the password.
        """
        params, fill, memory = self._prepare(params, max_memory, max_work, old_mem_cost)
        return core.update_output(params, stored, old_mem_cost, fill, memory)

    def _prepare(
        self,
        params: Params,
        max_memory: int | None,
        max_work: int | None,
        old_mem_cost: int | None = None,
    ) -> tuple[Params, core.FillSlice, core.Memory]:
        """Check a call's parameters and limits before anything is loaded or allocated.

        Returns the checked parameters, the seam and the work memory bound to the call's limit.
        """
        params = core.check_params(params)
        self.check_memory(params, old_mem_cost=old_mem_cost, max_memory=max_memory)
        _check_work(params, max_work, old_mem_cost)
        return params, self.fill_slice(), self._memory_for(params, max_memory)

    # -- memory ------------------------------------------------------------------------------------

    def _limit(self, max_memory: int | None) -> tuple[int | None, str]:
        """Return the limit of a call with its own ``max_memory``, and the limit's name."""
        call_limit = _check_limit(max_memory)
        if call_limit is not None and (self._max_memory is None or call_limit < self._max_memory):
            return call_limit, limits.MAX_MEMORY_NAME
        return self._max_memory, self._limit_name

    def _memory_for(self, params: Params, max_memory: int | None) -> core.Memory:
        """Bind the memory provider to ``params`` and the call's limit, so errors name both."""
        limit, name = self._limit(max_memory)

        def provide(count: int) -> AbstractContextManager[memoryview]:
            return self._lease(count, params, limit, name)

        return provide

    @contextmanager
    def _lease(
        self, count: int, params: Params, limit: int | None, limit_name: str
    ) -> Iterator[memoryview]:
        """Lend ``count`` words of work memory for the duration of one derivation."""
        needed = 4 * count
        if limit is not None and needed > limit:
            raise limits.memory_limit_error(params.mem_cost, needed, limit, limit_name)
        with self._lock:
            buffer, self._buffer = self._buffer, None
        if buffer is None or len(buffer) < count:
            # Let go of a buffer that is too small before allocating, so that both never coexist.
            buffer = None
            buffer = self._allocate(count, params)
        try:
            yield buffer[:count]
        except BaseException as error:
            # The buffer is dropped, not kept, so that it never serves another call.  The fill
            # joins its region threads before an error leaves the slice, so the wipe below comes
            # after their last write; only a second interrupt during that join can cut it short.
            if self._wipe:
                words.zero(buffer[:count])
            if isinstance(error, MemoryError):
                raise HashingError(
                    f"ran out of memory during the derivation (mem_cost={params.mem_cost})"
                ) from error
            raise
        if self._wipe:
            words.zero(buffer[:count])
        with self._lock:
            if self._buffer is None or len(self._buffer) < len(buffer):
                self._buffer = buffer

    @staticmethod
    def _allocate(count: int, params: Params) -> memoryview:
        try:
            return words.allocate(count)
        except MemoryError as error:
            size = 4 * count
            raise HashingError(
                f"could not allocate {format_size(size)} of work memory ({size} bytes) "
                f"for mem_cost={params.mem_cost}: the system is out of memory"
            ) from error
