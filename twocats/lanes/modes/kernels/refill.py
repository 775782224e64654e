"""The lane bookkeeping the multi-message drivers share (the Keccak sponge and LSH).

Per lane, three arrays hold the message it carries, the block it is at and its blocks in all.
A free lane takes the next waiting message; a lane whose message ends is freed by moving the last
busy lane into it, so that lanes 0..active-1 are the busy ones.
"""

from __future__ import annotations

from typing import Any

from twocats.lanes._words import U64
from twocats.simd._jit import jit

__all__ = ["move_lane", "start_lane"]


@jit
def start_lane(
    order: Any,
    waiting: Any,
    lengths: Any,
    block: Any,
    message: Any,
    step: Any,
    blocks: Any,
    lane: Any,
) -> None:
    """Put message order[waiting] on ``lane`` at its first block.

    Its blocks are its bytes and one padding byte, in blocks of ``block`` bytes.
    """
    m = order[waiting]
    message[lane] = m
    step[lane] = U64(0)
    blocks[lane] = U64(lengths[m]) // U64(block) + U64(1)


@jit
def move_lane(message: Any, step: Any, blocks: Any, to: Any, source: Any) -> None:
    """Move the bookkeeping of lane ``source`` into lane ``to``."""
    message[to] = message[source]
    step[to] = step[source]
    blocks[to] = blocks[source]
