"""The convenience APIs of the reference implementation: ``full``, ``simple`` and ``phs``.

Each derives its parameters exactly as the reference does; ``full_params``, ``simple_params`` and
``phs_params`` return those parameters without hashing.
"""

from __future__ import annotations

from twocats.exceptions import InvalidParametersError
from twocats.kdf.api import derive
from twocats.params import BOUNDS, VARIANTS, Params, check_int, refuse

__all__ = ["full", "full_params", "phs", "phs_params", "simple", "simple_params"]

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
