"""The raw derivation: ``derive``, its client and server halves, ``update``, and the engines.

See :mod:`twocats.kdf` for the whole interface; this module imports neither numpy nor numba.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from twocats._signature import parameters_of
from twocats.params import Params

if TYPE_CHECKING:
    from twocats.kdf.engine import Engine

__all__ = ["client", "default_engine", "derive", "memory_required", "server", "update"]

_local = threading.local()


def default_engine(backend: str | None = None) -> Engine:
    """Return this thread's default engine for ``backend`` (None: ``$TWOCATS_BACKEND``/"simd")."""
    from twocats.kdf.engine import Engine
    from twocats.simd.registry import resolve_backend

    name = resolve_backend(backend)
    engines: dict[str, Engine] | None = getattr(_local, "engines", None)
    if engines is None:
        engines = {}
        _local.engines = engines
    engine = engines.get(name)
    if engine is None:
        engine = engines[name] = Engine(name)
    return engine


def memory_required(params: Params, *, old_mem_cost: int | None = None) -> int:
    """Return the bytes of work memory ``derive`` (or ``update`` from old_mem_cost) needs."""
    from twocats.kdf.engine import Engine

    return Engine.memory_required(params, old_mem_cost=old_mem_cost)


def client(
    password: bytes,
    salt: bytes,
    params: Params,
    *,
    data: bytes = b"",
    backend: str | None = None,
    max_memory: int | None = None,
    max_work: int | None = None,
) -> bytes:
    """Derive the client half of server relief: ``derive`` without its final hash."""
    engine = default_engine(backend)
    return engine.client(
        password, salt, params, data=data, max_memory=max_memory, max_work=max_work
    )


@parameters_of(client)
def derive(password: bytes, salt: bytes, params: Params, **options: Any) -> bytes:
    """Derive the TwoCats output of ``password`` and ``salt`` (the reference's extended API).

    ``data`` is the associated data (secondary key) hashed with them.  The output has
    ``params.output_size`` bytes.  ``max_memory`` (bytes) refuses a derivation that needs more
    work memory before anything is allocated; without it the limit is the machine's memory.
    ``max_work`` refuses a costlier derivation (:class:`~twocats.exceptions.HashLimitError`,
    see :func:`twocats.kdf.limits.estimated_work`); pass it, or check with
    :func:`twocats.kdf.limits.check_stored_params`, whenever ``params`` come from storage.
    The parameters are those of :func:`client`, whose output this finishes with :func:`server`.
    """
    return server(client(password, salt, params, **options), params)


def server(client_output: bytes, params: Params) -> bytes:
    """Finish a ``client`` output: one more hash, cheap enough for a busy server."""
    from twocats.kdf.core import check_params, server_output

    return server_output(check_params(params), client_output)


def update(
    stored: bytes,
    params: Params,
    old_mem_cost: int,
    *,
    backend: str | None = None,
    max_memory: int | None = None,
    max_work: int | None = None,
) -> bytes:
    """Raise the memory cost of a stored ``derive`` output without the password.

    ``old_mem_cost`` is the mem_cost ``stored`` was derived with and ``params.mem_cost`` the new
    one (larger).  The result equals ``derive`` with ``params`` and ``start_mem_cost`` of the
    stored output; only the levels above ``old_mem_cost`` are computed.  (The reference's
    ``UpdatePassword`` takes ``oldMemCost = old_mem_cost + 1`` instead.)  ``max_memory`` is as
    for :func:`derive`, and so is ``max_work``.
    """
    engine = default_engine(backend)
    return engine.update(stored, params, old_mem_cost, max_memory=max_memory, max_work=max_work)
