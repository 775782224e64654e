"""Hypothesis strategies that build valid TwoCats parameter sets by construction.

Each field is drawn from the range that the fields drawn before it leave valid, so nothing is
filtered out: no health check can trip on an unlucky draw, and every valid set stays reachable
within the given limits.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from twocats.hashes import HASH_TYPES, by_name
from twocats.kdf.geometry import resize_2014_03
from twocats.params import (
    BOUNDS,
    MAX_PARALLEL_BYTES_2014_03,
    MAX_STRICT_HASH_SIZE,
    Params,
)
from twocats.params import VARIANTS as ALL_VARIANTS

#: Lane counts TwoCats allows (powers of two up to 16).
LANES = (1, 2, 4, 8, 16)


def powers_of_two(low: int, high: int) -> list[int]:
    """The powers of two from ``low`` to ``high`` inclusive."""
    return [1 << n for n in range(BOUNDS["block_size"][1].bit_length()) if low <= 1 << n <= high]


def _up_to(draw: st.DrawFn, low: int, high: int) -> int:
    """Draw an integer from ``low`` to ``high``, small values as often as the whole range."""
    return draw(st.integers(low, min(high, low + 3)) | st.integers(low, high))


def _resized_block_size(mem_cost: int, parallelism: int, block_size: int) -> int:
    """The block size in bytes that a March 2014 main level resizes ``block_size`` to."""
    _, blocklen, _, _ = resize_2014_03(mem_cost, parallelism, block_size // 4, block_size // 4)
    return 4 * blocklen


@st.composite
def param_sets(
    draw: st.DrawFn,
    *,
    variants: tuple[str, ...] = ALL_VARIANTS,
    min_mem_cost: int = 0,
    max_mem_cost: int = BOUNDS["mem_cost"][1],
    max_block_size: int = BOUNDS["block_size"][1],
    max_parallelism: int = BOUNDS["parallelism"][1],
    max_time_cost: int = BOUNDS["time_cost"][1],
    max_overwrite_cost: int = BOUNDS["overwrite_cost"][1],
    min_hash_size: int = 1,
    strict: bool = True,
) -> Params:
    """Draw a parameter set that ``Params(..., strict=strict)`` accepts, within the limits given.

    With ``strict=True`` and the 2015 or 2014 variants the block size is drawn first and bounds
    the memory cost from below; parallelism is then bounded by the blocks per region.  For 2014-03
    the sub-block is drawn last, no longer than the shortest block any main level resizes to.
    """
    mem_costs = (min_mem_cost, max_mem_cost)
    variant = draw(st.sampled_from(variants))
    hash_type = draw(st.sampled_from(HASH_TYPES))
    digest = by_name(hash_type).digest_size
    lanes = draw(st.sampled_from([n for n in LANES if n <= digest // 4]))
    fields: dict[str, Any] = {
        "variant": variant,
        "hash_type": hash_type,
        "lanes": lanes,
        "multiplies": draw(st.integers(*BOUNDS["multiplies"])),
    }
    if variant == "2014-03":
        fields.update(_sizes_2014_03(draw, lanes, mem_costs, max_block_size, max_parallelism))
        fields["time_cost"] = draw(st.integers(0, max_time_cost))
        # Sizes of 256 bytes and more are the reference's 8-bit truncation, refused when strict.
        high_hash = min(MAX_STRICT_HASH_SIZE, fields["block_size"])
        fields["hash_size"] = draw(st.integers(min_hash_size, high_hash))
    else:
        fields.update(
            _sizes(draw, digest, lanes, mem_costs, max_block_size, max_parallelism, strict)
        )
        fields["overwrite_cost"] = draw(st.integers(0, max_overwrite_cost))
        if variant == "2014":
            fields["time_cost"] = draw(st.integers(0, max_time_cost))
        else:
            fields["side_channel_resistant"] = draw(st.booleans())
    return Params(**fields, strict=strict)


def _sizes(
    draw: st.DrawFn,
    digest: int,
    lanes: int,
    mem_costs: tuple[int, int],
    max_block_size: int,
    max_parallelism: int,
    strict: bool,
) -> dict[str, int]:
    """Sizes, memory and parallelism of a 2015 or 2014 set."""
    # Strict sets hold four blocks per region: 256 << mem_cost bytes per region at parallelism 1.
    low_mem, high_mem = mem_costs
    highest_block = min(max_block_size, 256 << high_mem) if strict else max_block_size
    block_size = draw(st.sampled_from(powers_of_two(digest, highest_block)))
    lowest_mem = max(low_mem, block_size.bit_length() - 1 - 8) if strict else low_mem
    mem_cost = draw(st.integers(lowest_mem, high_mem))
    most = (256 << mem_cost) // block_size if strict else max_parallelism
    return {
        "block_size": block_size,
        "sub_block_size": draw(st.sampled_from(powers_of_two(4 * lanes, block_size))),
        "mem_cost": mem_cost,
        "start_mem_cost": draw(st.integers(0, mem_cost)),
        "parallelism": _up_to(draw, 1, min(max_parallelism, most)),
    }


def _sizes_2014_03(
    draw: st.DrawFn,
    lanes: int,
    mem_costs: tuple[int, int],
    max_block_size: int,
    max_parallelism: int,
) -> dict[str, int]:
    """Sizes, memory and parallelism of a 2014-03 set."""
    block_size = draw(st.sampled_from(powers_of_two(max(32, 4 * lanes), max_block_size)))
    most = min(max_parallelism, MAX_PARALLEL_BYTES_2014_03 // block_size - 1)
    parallelism = _up_to(draw, 1, most)
    mem_cost = draw(st.integers(*mem_costs))
    start_mem_cost = draw(st.integers(0, mem_cost))
    # A sub-block may not be longer than the block of any main level after resizing; resizing
    # never goes below 32 bytes, so 32-byte sub-blocks are always possible.
    shortest = min(
        _resized_block_size(m, parallelism, block_size) for m in range(start_mem_cost, mem_cost + 1)
    )
    return {
        "block_size": block_size,
        "sub_block_size": draw(st.sampled_from(powers_of_two(32, min(block_size, shortest)))),
        "mem_cost": mem_cost,
        "start_mem_cost": start_mem_cost,
        "parallelism": parallelism,
    }
