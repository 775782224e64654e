"""TwoCats key derivation: parameters to output, over a choice of compute backends.

The raw derivation and every entry point of the reference implementation::

    from twocats import Params
    from twocats import kdf

    params = Params(mem_cost=10)
    key = kdf.derive(b"password", b"salt", params)            # client + server
    half = kdf.client(b"password", b"salt", params)           # server relief: client half
    assert kdf.server(half, params) == key                    # ... and server half
    bigger = kdf.update(key, Params(mem_cost=12), old_mem_cost=10)
    assert bigger == kdf.derive(b"password", b"salt", Params(mem_cost=12, start_mem_cost=10))

The convenience APIs of the reference (``full``, ``simple``, ``phs``) derive their parameters
exactly as the reference does; ``full_params``, ``simple_params`` and ``phs_params`` return those
parameters without hashing.

Every function here may be called from many threads at once.  Each thread keeps one default
:class:`Engine` per backend, so repeated calls reuse one work buffer per thread and two running
derivations never share one; the compiled fill releases the GIL, so threads hash in parallel.

Memory is checked before it is allocated: ``max_memory`` (bytes) refuses a request that needs
more with a :class:`~twocats.exceptions.MemoryLimitError` naming ``mem_cost``, the size and the
limit, and no request may exceed what the machine can give
(:func:`twocats.kdf.limits.machine_memory`).  Passwords, salts and data may be up to 4 GiB - 1
bytes long (the algorithm's 32-bit length fields); inputs of 100 MB cost about one hash pass over
them.  Create an ``Engine`` of your own to set a standing limit or to zero the work memory after
use (``wipe``).  Importing this package imports neither numpy nor numba.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

from twocats.exceptions import InvalidParametersError
from twocats.params import BOUNDS, VARIANTS, Params, check_int, refuse

if TYPE_CHECKING:
    from twocats.kdf.engine import Engine

__all__ = [
    "Engine",
    "client",
    "default_engine",
    "derive",
    "full",
    "full_params",
    "memory_required",
    "phs",
    "phs_params",
    "server",
    "simple",
    "simple_params",
    "update",
]

#: The block size the reference's convenience APIs start from, and its sub-block size.
_FULL_BLOCK_SIZE = 16384
_FULL_SUB_BLOCK_SIZE = 64

#: The convenience APIs shrink blocks and parallelism until each region has this many blocks.
_FULL_MIN_BLOCKS = 256

#: Lanes, overwrite cost and (for simple/phs) parallelism chosen by the convenience APIs.
_FULL_LANES = 8
_FULL_OVERWRITE_COST = 6
_SIMPLE_PARALLELISM = 2

#: The only output length the final version's PHS accepts.
_PHS_OUTLEN = 32

_local = threading.local()


def __getattr__(name: str) -> Any:
    if name == "Engine":
        value = importlib.import_module("twocats.kdf.engine").Engine
        globals()[name] = value
        return value
    raise AttributeError(f"module 'twocats.kdf' has no attribute {name!r}")


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


# -- raw derivation --------------------------------------------------------------------------------


def derive(
    password: bytes,
    salt: bytes,
    params: Params,
    *,
    data: bytes = b"",
    backend: str | None = None,
    max_memory: int | None = None,
    max_work: int | None = None,
) -> bytes:
    """Derive the TwoCats output of ``password`` and ``salt`` (the reference's extended API).

    ``data`` is the associated data (secondary key) hashed with them.  The output has
    ``params.output_size`` bytes.  ``max_memory`` (bytes) refuses a derivation that needs more
    work memory before anything is allocated; without it the limit is the machine's memory.
    ``max_work`` refuses a costlier derivation (:class:`~twocats.exceptions.HashLimitError`,
    see :func:`twocats.kdf.limits.estimated_work`); pass it, or check with
    :func:`twocats.kdf.limits.check_stored_params`, whenever ``params`` come from storage.
    """
    engine = default_engine(backend)
    return engine.derive(
        password, salt, params, data=data, max_memory=max_memory, max_work=max_work
    )


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


# -- the reference's convenience APIs --------------------------------------------------------------


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        refuse("variant", "one of " + ", ".join(repr(v) for v in VARIANTS), variant)


def _multiplies_for(mem_cost: int) -> int:
    if mem_cost <= 4:
        return 1
    if mem_cost <= 9:
        return 2
    return 3


def full_params(
    mem_cost: int,
    parallelism: int,
    *,
    hash_type: str = "blake2s",
    side_channel_resistant: bool = False,
    variant: str = "2015",
    time_cost: int | None = None,
    hash_size: int | None = None,
) -> Params:
    """The parameters the reference's ``HashPasswordFull`` derives from a memory cost.

    multiplies is 1, 2 or 3 by mem_cost; lanes 8; for 2015 and 2014 the block size starts at 16
    KiB and is halved (not below 32 bytes) and then parallelism lowered until each region has 256
    blocks, with 64-byte sub-blocks (or the block size if smaller) and overwrite cost 6.  For
    2014-03 the sizes stay 16 KiB / 64 bytes because that version resizes every level itself.
    """
    _check_variant(variant)
    mem_cost = check_int("mem_cost", mem_cost, *BOUNDS["mem_cost"])
    parallelism = check_int("parallelism", parallelism, *BOUNDS["parallelism"])
    # 2014-03 resizes every level itself and has no overwrite cost.
    block_size, sub_block_size, overwrite_cost = _FULL_BLOCK_SIZE, _FULL_SUB_BLOCK_SIZE, None
    if variant != "2014-03":
        memory = 1024 << mem_cost
        while block_size >= 64 and memory // (parallelism * block_size) < _FULL_MIN_BLOCKS:
            block_size //= 2
        while parallelism > 1 and memory // (parallelism * block_size) < _FULL_MIN_BLOCKS:
            parallelism -= 1
        sub_block_size = min(_FULL_SUB_BLOCK_SIZE, block_size)
        overwrite_cost = _FULL_OVERWRITE_COST
    return Params(
        variant=variant,
        hash_type=hash_type,
        mem_cost=mem_cost,
        time_cost=time_cost,
        multiplies=_multiplies_for(mem_cost),
        lanes=_FULL_LANES,
        parallelism=parallelism,
        block_size=block_size,
        sub_block_size=sub_block_size,
        overwrite_cost=overwrite_cost,
        side_channel_resistant=side_channel_resistant,
        hash_size=hash_size,
    )


def full(
    password: bytes,
    salt: bytes,
    mem_cost: int,
    parallelism: int,
    *,
    hash_type: str = "blake2s",
    side_channel_resistant: bool = False,
    variant: str = "2015",
    time_cost: int | None = None,
    hash_size: int | None = None,
    backend: str | None = None,
    max_memory: int | None = None,
) -> bytes:
    """The reference's ``HashPasswordFull``: ``derive`` with :func:`full_params`, no data."""
    params = full_params(
        mem_cost,
        parallelism,
        hash_type=hash_type,
        side_channel_resistant=side_channel_resistant,
        variant=variant,
        time_cost=time_cost,
        hash_size=hash_size,
    )
    return derive(password, salt, params, backend=backend, max_memory=max_memory)


def simple_params(
    mem_cost: int,
    *,
    hash_type: str = "blake2s",
    variant: str = "2015",
    hash_size: int | None = None,
) -> Params:
    """The parameters of the reference's ``HashPassword``: ``full_params`` with parallelism 2.

    The 2014 and 2014-03 versions also fix time_cost at 0.
    """
    time_cost = None if variant == "2015" else 0
    return full_params(
        mem_cost,
        _SIMPLE_PARALLELISM,
        hash_type=hash_type,
        variant=variant,
        time_cost=time_cost,
        hash_size=hash_size,
    )


def simple(
    password: bytes,
    salt: bytes,
    mem_cost: int,
    *,
    hash_type: str = "blake2s",
    variant: str = "2015",
    hash_size: int | None = None,
    backend: str | None = None,
    max_memory: int | None = None,
) -> bytes:
    """The reference's ``HashPassword``: ``derive`` with :func:`simple_params`."""
    params = simple_params(mem_cost, hash_type=hash_type, variant=variant, hash_size=hash_size)
    return derive(password, salt, params, backend=backend, max_memory=max_memory)


def phs_params(t_cost: int, m_cost: int, *, outlen: int = 32, variant: str = "2015") -> Params:
    """The parameters of the PHC entry point ``PHS(out, outlen, in, salt, t_cost, m_cost)``.

    The final version maps t_cost to parallelism and needs outlen 32; the 2014 version maps t_cost
    to time_cost (parallelism 2) and needs outlen 32; the 2014-03 version maps t_cost to time_cost
    and outlen to hash_size.  All use blake2s.
    """
    _check_variant(variant)
    if variant == "2014-03":
        return full_params(
            m_cost, _SIMPLE_PARALLELISM, variant=variant, time_cost=t_cost, hash_size=outlen
        )
    if outlen != _PHS_OUTLEN:
        raise InvalidParametersError(
            f"outlen must be {_PHS_OUTLEN} for variant {variant!r}; got {outlen!r}"
        )
    if variant == "2014":
        return full_params(m_cost, _SIMPLE_PARALLELISM, variant=variant, time_cost=t_cost)
    t_cost = check_int("t_cost", t_cost, *BOUNDS["parallelism"])
    return full_params(m_cost, t_cost, variant=variant)


def phs(
    password: bytes,
    salt: bytes,
    t_cost: int,
    m_cost: int,
    *,
    outlen: int = 32,
    variant: str = "2015",
    backend: str | None = None,
    max_memory: int | None = None,
) -> bytes:
    """The PHC entry point ``PHS``: ``derive`` with :func:`phs_params`."""
    params = phs_params(t_cost, m_cost, outlen=outlen, variant=variant)
    return derive(password, salt, params, backend=backend, max_memory=max_memory)
