"""Memory geometry of the TwoCats garlic loop: which levels run, and how each level is laid out.

This module is plain Python (no numpy) so that memory accounting and the orchestration read the
same plan; of the project it imports only the March 2014 resizing, which ``twocats.params`` holds
because its validation needs it too.  It also declares the seam every backend implements,
:class:`FillSlice`, and its argument record :class:`SliceJob`.  It covers the three published
versions:

* ``2015`` and ``2014``: every level uses the caller's block sizes; a level too small for four
  blocks per region does no memory work (twocats.md §5, §6.1).
* ``2014-03``: every active level is resized until each region has at least 256 blocks, shrinking
  the block, then the parallelism, then the number of blocks; the sub-block length then follows the
  block length (twocats-2014-03.md §7, including the reference's sub-block bug).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from twocats.params import resize_2014_03

if TYPE_CHECKING:
    from twocats.kdf.words import Words

__all__ = [
    "FillSlice",
    "LevelPlan",
    "PlanParams",
    "SliceJob",
    "absolute_overwrite_level",
    "garlic_levels",
    "plan",
    "required_words",
    "resize_2014_03",
    "work_memory",
]

#: Levels below ``start - OVERWRITE_GAP_2014_03`` are the hard-wired overwrite levels of March 2014.
OVERWRITE_GAP_2014_03 = 6


@dataclass(frozen=True, slots=True)
class SliceJob:
    """One call of the seam: fill blocks ``[done, done + per_slice)`` of every region.

    Block ``b`` of region ``q`` starts at word ``(q * bpt + b) * blocklen`` of the work area.  In a
    data-independent slice starting at ``done == 0`` block 0 of each region is first set to
    ``Expand(states[p], blocklen)``.  ``dependent`` is False for sliding bit-reversal addressing
    with one sub-block per block (then ``sub_blocklen == blocklen``) and True for cubic
    password-dependent addressing with ``sub_blocklen`` sub-blocks.  ``variant`` is 0 for the
    final/2014 block hash and 1 for the March 2014 one, which repeats each block hash
    ``2**time_cost`` times (``time_cost`` is 0 for variant 0).  Lengths are in 32-bit words;
    ``hash_type`` is the hash code of :mod:`twocats.hashes`.
    """

    done: int
    per_slice: int
    bpt: int
    blocklen: int
    sub_blocklen: int
    parallelism: int
    lanes: int
    multiplies: int
    dependent: bool
    hash_type: int
    variant: int
    time_cost: int


class FillSlice(Protocol):
    """The seam between the orchestration and a backend: fill one slice of every region.

    ``mem`` is the work area, 1-D C-contiguous 32-bit words (:data:`twocats.kdf.words.Words`: a
    memoryview of format "I" or a numpy ``uint32`` array); ``states`` holds words of shape
    ``(parallelism, W)`` whose row ``p`` is region ``p``'s state, updated in place.  The call
    returns when every region has finished the slice (the barrier).
    """

    def __call__(self, mem: Words, states: Words, job: SliceJob) -> None: ...


class PlanParams(Protocol):
    """The parameters :func:`plan` reads (a :class:`twocats.params.Params` has them all)."""

    @property
    def variant(self) -> str: ...
    @property
    def mem_cost(self) -> int: ...
    @property
    def start_mem_cost(self) -> int | None: ...
    @property
    def parallelism(self) -> int: ...
    @property
    def block_size(self) -> int: ...
    @property
    def sub_block_size(self) -> int: ...
    @property
    def overwrite_cost(self) -> int | None: ...
    @property
    def side_channel_resistant(self) -> bool: ...


@dataclass(frozen=True)
class LevelPlan:
    """The layout of one active garlic level.

    ``fills`` is False for a 2015/2014 level too small for four blocks per region: such a level
    touches no memory and only contributes its scramble step.
    """

    mem_cost: int
    parallelism: int
    blocklen: int
    sub_blocklen: int
    blocks_per_region: int
    resistant_slices: int
    main: bool
    fills: bool

    @property
    def per_slice(self) -> int:
        """Blocks per region in each of the four slices."""
        return self.blocks_per_region // 4

    @property
    def words(self) -> int:
        """Words of memory this level writes (0 when it does no memory work)."""
        if not self.fills:
            return 0
        return self.parallelism * self.blocks_per_region * self.blocklen


def absolute_overwrite_level(start_mem_cost: int, overwrite_cost: int) -> int:
    """Convert the relative overwrite cost to the level below which levels are overwrite levels."""
    if overwrite_cost == 0 or overwrite_cost >= start_mem_cost:
        return 0
    return start_mem_cost - overwrite_cost


def garlic_levels(
    variant: str,
    *,
    start_mem_cost: int,
    stop_mem_cost: int,
    parallelism: int,
    block_size: int,
    sub_block_size: int,
    overwrite_level: int,
    side_channel_resistant: bool,
    update: bool,
) -> tuple[LevelPlan, ...]:
    """List the active levels ``0 .. stop_mem_cost`` in order, with their layouts.

    ``overwrite_level`` is the absolute level of §4 (2015/2014; 0 in update mode) and is ignored for
    2014-03, whose overwrite levels are hard-wired and absent in update mode.
    """
    blocklen = block_size // 4
    sub_blocklen = sub_block_size // 4
    plans = []
    for m in range(stop_mem_cost + 1):
        main = m >= start_mem_cost
        if variant == "2014-03":
            if not (main or (not update and m + OVERWRITE_GAP_2014_03 < start_mem_cost)):
                continue
            p, bl, sbl, bpt = resize_2014_03(m, parallelism, blocklen, sub_blocklen)
            plans.append(LevelPlan(m, p, bl, sbl, bpt, 2 if main else 4, main, fills=True))
            continue
        if not (main or m < overwrite_level):
            continue
        bpt = 4 * ((256 << m) // (4 * parallelism * blocklen))
        resistant = 4 if (not main or side_channel_resistant) else 2
        plans.append(
            LevelPlan(m, parallelism, blocklen, sub_blocklen, bpt, resistant, main, fills=bpt >= 4)
        )
    return tuple(plans)


def required_words(plans: tuple[LevelPlan, ...]) -> int:
    """Return the words of work memory the levels need (the largest level; 0 if none fills)."""
    return max((plan.words for plan in plans), default=0)


def work_memory(params: PlanParams, *, old_mem_cost: int | None = None) -> int:
    """Return the bytes of work memory a derivation (or an update from ``old_mem_cost``) needs."""
    return 4 * required_words(plan(params, old_mem_cost=old_mem_cost))


def plan(params: PlanParams, *, old_mem_cost: int | None = None) -> tuple[LevelPlan, ...]:
    """Return the active garlic levels of a derivation with ``params``.

    ``old_mem_cost`` selects update mode: only the levels above it run, with no overwrite levels.
    """
    assert params.start_mem_cost is not None
    update = old_mem_cost is not None
    start = old_mem_cost + 1 if old_mem_cost is not None else params.start_mem_cost
    overwrite = 0
    if not update and params.overwrite_cost is not None:
        overwrite = absolute_overwrite_level(params.start_mem_cost, params.overwrite_cost)
    return garlic_levels(
        params.variant,
        start_mem_cost=start,
        stop_mem_cost=params.mem_cost,
        parallelism=params.parallelism,
        block_size=params.block_size,
        sub_block_size=params.sub_block_size,
        overwrite_level=overwrite,
        side_channel_resistant=params.side_channel_resistant,
        update=update,
    )
