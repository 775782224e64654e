"""The memory owner: runs derivations on one backend over a reusable work buffer.

An :class:`Engine` keeps one numpy ``uint32`` buffer and grows it as needed.  A call takes the
buffer out of the engine for its whole duration and puts it back afterwards, so two derivations
running at the same time on one engine never share memory: the second one simply allocates its own
buffer (and the larger of the two is kept for later calls).  Before allocating, the memory a
request needs is compared with ``max_memory``; afterwards the used part is zeroed when ``wipe`` is
set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import numpy as np
import numpy.typing as npt

from twocats.exceptions import BackendError, HashingError, InvalidParametersError, MemoryLimitError
from twocats.kdf import core
from twocats.params import Params
from twocats.simd.registry import resolve_backend

__all__ = ["Engine"]


def _load_fill(backend: str) -> core.FillSlice:
    """Return the seam implementation of ``backend`` (compiled backends are imported lazily)."""
    if backend == "reference":
        from twocats.kdf.reference import fill_slice

        return fill_slice
    try:
        from twocats.simd.fill import get_fill_slice
    except ImportError as error:
        raise BackendError(f"backend {backend!r} is not available: {error}") from error
    fill: core.FillSlice = get_fill_slice(backend)
    return fill


def _check_params(params: object) -> Params:
    if not isinstance(params, Params):
        kind = type(params).__name__
        raise InvalidParametersError(f"params must be a twocats.Params; got {kind}")
    return params


class Engine:
    """Derive TwoCats outputs on one backend, reusing one work buffer across calls.

    ``backend`` is "reference", "scalar" or "simd" (None: ``$TWOCATS_BACKEND``, else "simd").
    ``max_memory`` (bytes) refuses, before allocating, any request that needs more work memory.
    ``wipe`` zeroes the used work memory after every call.
    """

    def __init__(
        self, backend: str | None = None, *, max_memory: int | None = None, wipe: bool = False
    ) -> None:
        self._backend = resolve_backend(backend)
        if max_memory is not None and (
            not isinstance(max_memory, int) or isinstance(max_memory, bool) or max_memory < 0
        ):
            raise InvalidParametersError(
                f"max_memory must be None or a number of bytes from 0 up; got {max_memory!r}"
            )
        self._max_memory = max_memory
        self._wipe = bool(wipe)
        self._fill: core.FillSlice | None = None
        self._lock = threading.Lock()
        self._buffer: npt.NDArray[np.uint32] | None = None

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
        """The largest work memory (bytes) a call may use, or None for no limit."""
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
        return 4 * core.required_words(_check_params(params), old_mem_cost=old_mem_cost)

    def release(self) -> None:
        """Drop the buffer kept for reuse (zeroing it first when ``wipe`` is set)."""
        with self._lock:
            buffer, self._buffer = self._buffer, None
        if buffer is not None and self._wipe:
            buffer.fill(0)

    # -- derivations -------------------------------------------------------------------------------

    def derive(self, password: bytes, salt: bytes, params: Params, *, data: bytes = b"") -> bytes:
        """Derive the final output (``params.output_size`` bytes) from a password and salt."""
        params = _check_params(params)
        return core.derive_output(
            params, password, salt, data, self.fill_slice(), self._memory_for(params)
        )

    def client(self, password: bytes, salt: bytes, params: Params, *, data: bytes = b"") -> bytes:
        """Derive the client half of server relief (everything except the final hash)."""
        params = _check_params(params)
        return core.client_output(
            params, password, salt, data, self.fill_slice(), self._memory_for(params)
        )

    def server(self, client_output: bytes, params: Params) -> bytes:
        """Finish a client output with the server half of server relief (no work memory)."""
        return core.server_output(_check_params(params), client_output)

    def update(self, stored: bytes, params: Params, old_mem_cost: int) -> bytes:
        """Raise the memory cost of a stored output from ``old_mem_cost`` to ``params.mem_cost``.

        ``old_mem_cost`` is the mem_cost the stored output was derived with; the result equals a
        derivation with ``params`` directly, computed without the password.
        """
        params = _check_params(params)
        return core.update_output(
            params, stored, old_mem_cost, self.fill_slice(), self._memory_for(params)
        )

    # -- memory ------------------------------------------------------------------------------------

    def _memory_for(self, params: Params) -> core.Memory:
        """Bind the memory provider to ``params`` so that errors can name mem_cost."""

        def provide(words: int) -> AbstractContextManager[npt.NDArray[np.uint32]]:
            return self._lease(words, params)

        return provide

    @contextmanager
    def _lease(self, words: int, params: Params) -> Iterator[npt.NDArray[np.uint32]]:
        """Lend at least ``words`` words of work memory for the duration of one derivation."""
        needed = 4 * words
        if self._max_memory is not None and needed > self._max_memory:
            raise MemoryLimitError(
                f"mem_cost {params.mem_cost} needs {needed} bytes of work memory, more than "
                f"max_memory ({self._max_memory} bytes)"
            )
        with self._lock:
            buffer, self._buffer = self._buffer, None
        if buffer is None or buffer.size < words:
            # Let go of a buffer that is too small before allocating, so that both never coexist.
            buffer = None
            buffer = self._allocate(words, params)
        try:
            yield buffer[:words]
        finally:
            if self._wipe:
                buffer[:words].fill(0)
            with self._lock:
                if self._buffer is None or self._buffer.size < buffer.size:
                    self._buffer = buffer

    @staticmethod
    def _allocate(words: int, params: Params) -> npt.NDArray[np.uint32]:
        try:
            return np.zeros(words, dtype=np.uint32)
        except (MemoryError, ValueError) as error:
            raise HashingError(
                f"could not allocate {4 * words} bytes of work memory for mem_cost "
                f"{params.mem_cost}"
            ) from error
