"""Block dependency graphs of Argon2, TwoCats and a generic power-law design.

A graph lists the blocks a hash computes in an order the hash allows (every block after the blocks
it reads), as arrays of node numbers: ``prev[i]``, the block that node ``i`` continues (the
previous block of its lane or region, -1 for a block made from the initial hash alone),
``ref[i]``, the one block it reads from elsewhere in memory (-1 for none), and ``old[i]``, the block
it overwrites and XORs into its new value (Argon2 version 1.3 after the first pass; -1 otherwise).
A block overwritten by a later pass is a new node, so a multi-pass hash is one longer graph.
``prev_held[i]`` tells whether the hardware computing the blocks in order still holds ``prev[i]``
when node ``i`` is due (it is the node its lane computed just before); only then is ``prev[i]``
free in the forward pass.  ``independent[i]`` tells whether the address of ``ref[i]`` is known
before the hash runs (data-independent addressing), and ``dies[i]`` is the step at which the
defender's memory slot of node ``i`` is overwritten (the number of nodes when it never is), so
that the defender holds node ``i`` after steps ``i`` to ``dies[i] - 1``.

Data-independent reference indices are the real ones: Argon2i's come from its address blocks, made
with Argon2's compression function G in counter mode (RFC 9106 section 3.4.1.2), and TwoCats'
from its sliding bit-reversal (:func:`twocats.kdf.reference.sliding_reverse`).  Data-dependent
ones depend on block contents that only the password decides; they are drawn from a seeded
pseudo-random source, which gives one graph of the family per seed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Final

import numpy as np
import numpy.typing as npt

from twocats.exceptions import InvalidParametersError
from twocats.kdf import geometry
from twocats.kdf.geometry import LevelPlan
from twocats.kdf.reference import sliding_reverse
from twocats.params import Params
from twocats.perf.tradeoff.model import Core, argon2_core, twocats_core

__all__ = [
    "ARGON2_KINDS",
    "ARGON2_VERSIONS",
    "MAX_NODES",
    "BlockLayout",
    "Graph",
    "argon2",
    "argon2_address_words",
    "argon2_compress",
    "argon2_reference_columns",
    "power",
    "twocats",
    "twocats_name",
]

#: The Argon2 types by name, with the type number hashed into Argon2i's address blocks.
ARGON2_KINDS: Final = {"argon2d": 0, "argon2i": 1, "argon2id": 2}

#: Argon2's versions by name: 1.3 XORs the block a later pass overwrites into the new one, 1.2.1
#: replaced it (the specification's "Memory optimization attack" contrasts the two).
ARGON2_VERSIONS: Final = {"1.3": 0x13, "1.2.1": 0x10}

#: The most nodes a graph may have.  A graph takes 19 bytes a node and an attack on it up to
#: about 40 more, so this bounds the simulator's memory to about 500 MiB (one graph is held at a
#: time).
MAX_NODES: Final = 1 << 23

#: Addresses (64-bit words) in one Argon2 address block.
_ADDRESSES_PER_BLOCK: Final = 128

#: Bytes of an Argon2 block.
ARGON2_BLOCK_BYTES: Final = 1024

_MASK32: Final = np.uint64(0xFFFFFFFF)
_ALL64: Final = np.iinfo(np.uint64).max

Nodes = npt.NDArray[np.int32]
Flags = npt.NDArray[np.bool_]


@dataclasses.dataclass(frozen=True)
class BlockLayout:
    """TwoCats' block hash over the nodes ``[first, end)`` of one level (twocats.md section 9).

    A block is ``steps`` rows of ``lanes`` words, each row one step of the lane states: row ``j``
    of the new block is made from row ``j - 1`` (through the states), row ``j`` of the reference
    block and one row of the previous block.  In the password-dependent slices the previous block
    is read in ``sub_blocks`` sub-blocks, each chosen by the first word of the reference block's
    sub-block at the same place; the data-independent slices read it in order.  ``chain`` is the
    number of multiplications in one row of the multiply chain, which runs beside the rows from
    the block's start state and meets the state only at the block's end; ``repeats`` is how many
    times the March 2014 version hashes each block over (1 otherwise).
    """

    first: int
    end: int
    steps: int
    sub_blocks: int
    chain: int
    repeats: int = 1


@dataclasses.dataclass(frozen=True)
class Graph:
    """One block dependency graph: the inputs and flags of each node, in order (module text).

    ``memory_blocks`` is the defender's memory in blocks (its peak: the largest level or the
    lanes' blocks), ``block_bytes`` the size of its blocks, ``core`` the compression core an
    attacker replicates (:mod:`.model`), ``state_bytes`` the small state that
    recomputing a TwoCats block needs besides its inputs (0 for Argon2), ``outputs`` the nodes the
    hash's output reads after the last step, and ``layouts`` the TwoCats block hash of each
    level (empty for Argon2 and the power graphs, whose compression is not iterative).
    """

    name: str
    prev: Nodes
    ref: Nodes
    old: Nodes
    prev_held: Flags
    independent: Flags
    dies: Nodes
    outputs: Nodes
    memory_blocks: int
    block_bytes: int
    core: Core
    state_bytes: int = 0
    layouts: tuple[BlockLayout, ...] = ()

    @property
    def nodes(self) -> int:
        """The number of block computations in the graph."""
        return int(self.prev.shape[0])

    @property
    def memory_bytes(self) -> int:
        """The defender's memory in bytes."""
        return self.memory_blocks * self.block_bytes

    @property
    def addressing(self) -> str:
        """How the nodes find their references: "independent", "dependent" or "hybrid"."""
        known = int(np.count_nonzero(self.independent))
        if known == self.nodes:
            return "independent"
        return "dependent" if known == 0 else "hybrid"


def _checked_nodes(count: int) -> int:
    """Refuse a graph larger than :data:`MAX_NODES`."""
    if count > MAX_NODES:
        raise InvalidParametersError(
            f"the graph would compute {count} blocks (every pass and level counted); the simulator "
            f"allows at most {MAX_NODES}: lower --blocks (or the passes, or the memory cost)"
        )
    return count


# -- Argon2 ----------------------------------------------------------------------------------------


def _rotr(x: npt.NDArray[np.uint64], bits: int) -> npt.NDArray[np.uint64]:
    rotated: npt.NDArray[np.uint64] = (x >> np.uint64(bits)) | (x << np.uint64(64 - bits))
    return rotated


def _mix(v: npt.NDArray[np.uint64], a: int, b: int, c: int, d: int) -> None:
    """Argon2's GB: BLAKE2b's G with each addition ``x + y`` made ``x + y + 2 * lo(x) * lo(y)``."""
    two = np.uint64(2)
    for rotate_d, rotate_b in ((32, 24), (16, 63)):
        v[:, a] = v[:, a] + v[:, b] + two * (v[:, a] & _MASK32) * (v[:, b] & _MASK32)
        v[:, d] = _rotr(v[:, d] ^ v[:, a], rotate_d)
        v[:, c] = v[:, c] + v[:, d] + two * (v[:, c] & _MASK32) * (v[:, d] & _MASK32)
        v[:, b] = _rotr(v[:, b] ^ v[:, c], rotate_b)


def _permute(v: npt.NDArray[np.uint64]) -> None:
    """Argon2's P on 16 words per row of ``v`` (one BLAKE2b round without message words)."""
    for a, b, c, d in (
        (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
        (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14),
    ):  # fmt: skip
        _mix(v, a, b, c, d)


def argon2_compress(x: npt.NDArray[np.uint64], y: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Argon2's compression G on blocks of 128 words, one block per row of ``x`` and ``y``.

    ``R = X xor Y`` is seen as 8 rows of 16 words; P permutes each row, then each column (words
    ``2j, 2j + 1`` of every row); the result is the permuted value XOR ``R`` (RFC 9106 3.5).
    """
    r = x ^ y
    q = r.reshape(-1, 8, 16).copy()
    for row in range(8):
        block = q[:, row, :].copy()
        _permute(block)
        q[:, row, :] = block
    columns = q.reshape(-1, 8, 8, 2)
    for column in range(8):
        block = columns[:, :, column, :].reshape(-1, 16).copy()
        _permute(block)
        columns[:, :, column, :] = block.reshape(-1, 8, 2)
    result: npt.NDArray[np.uint64] = columns.reshape(-1, 128) ^ r
    return result


def argon2_address_words(
    pass_: int, lane: int, slice_: int, memory_blocks: int, passes: int, kind: int, count: int
) -> npt.NDArray[np.uint64]:
    """The first ``count`` pseudo-random words of one Argon2i segment (RFC 9106 3.4.1.2).

    Address block ``k`` (counter ``k + 1``) is ``G(0, G(0, Z))`` with ``Z`` the words ``pass, lane,
    slice, m', t, type, counter`` and zeros; word ``i`` of the segment serves its block ``i``.
    """
    blocks = -(-count // _ADDRESSES_PER_BLOCK)
    z = np.zeros((blocks, 128), dtype=np.uint64)
    z[:, :6] = np.array([pass_, lane, slice_, memory_blocks, passes, kind], dtype=np.uint64)
    z[:, 6] = np.arange(1, blocks + 1, dtype=np.uint64)
    zero = np.zeros_like(z)
    return argon2_compress(zero, argon2_compress(zero, z)).reshape(-1)[:count]


def argon2_reference_columns(
    pass_: int,
    slice_: int,
    lane: int,
    index: npt.NDArray[np.int64],
    words: npt.NDArray[np.uint64],
    lanes: int,
    lane_length: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The lanes and columns that blocks ``index`` of one segment read (RFC 9106 3.4.1.1-3.4.2).

    ``words`` holds each block's pseudo-random 64-bit value: J1 is its low half, J2 its high half.
    The reference lane is ``J2 mod lanes`` except in the first slice of the first pass, which reads
    its own lane; J1 picks the block within the reference set by ``1 - (J1^2 / 2^64)`` scaled to
    the set's size, so recent blocks are read most often.
    """
    segment = lane_length // 4
    j1 = words & _MASK32
    j2 = words >> np.uint64(32)
    if pass_ == 0 and slice_ == 0:
        ref_lane = np.full(index.shape, lane, dtype=np.int64)
    else:
        ref_lane = (j2 % np.uint64(lanes)).astype(np.int64)
    same = ref_lane == lane
    first = (index == 0).astype(np.int64)
    if pass_ == 0:
        area = np.where(same, slice_ * segment + index - 1, slice_ * segment - first)
        start = 0
    else:
        area = np.where(same, lane_length - segment + index - 1, lane_length - segment - first)
        start = 0 if slice_ == 3 else (slice_ + 1) * segment
    x = (j1 * j1) >> np.uint64(32)
    y = (area.astype(np.uint64) * x) >> np.uint64(32)
    relative = area - 1 - y.astype(np.int64)
    return ref_lane, (start + relative) % lane_length


def argon2(
    kind: str, blocks: int, passes: int, lanes: int, seed: int, version: str = "1.3"
) -> Graph:
    """The graph of Argon2d, Argon2i or Argon2id over ``blocks`` KiB blocks (RFC 9106).

    ``blocks`` is rounded down to a multiple of ``4 * lanes`` as Argon2 does.  Nodes are ordered
    pass by pass, slice by slice, lane by lane.  Argon2id addresses data-independently in the first
    two slices of the first pass.  ``version`` "1.3" (RFC 9106) XORs the overwritten block into
    the new one after the first pass; "1.2.1" replaced it, so that block is no input.
    """
    if kind not in ARGON2_KINDS:
        raise InvalidParametersError(f"kind must be one of {', '.join(ARGON2_KINDS)}; got {kind!r}")
    if version not in ARGON2_VERSIONS:
        names = ", ".join(ARGON2_VERSIONS)
        raise InvalidParametersError(f"the Argon2 version must be one of {names}; got {version!r}")
    if not 1 <= passes <= 16:
        raise InvalidParametersError(f"t (passes) must be from 1 to 16; got {passes}")
    if not 1 <= lanes <= 64:
        raise InvalidParametersError(f"lanes must be from 1 to 64; got {lanes}")
    if blocks < 8 * lanes:
        raise InvalidParametersError(
            f"blocks must be at least 8 per lane ({8 * lanes} for {lanes} lanes); got {blocks}"
        )
    memory = 4 * lanes * (blocks // (4 * lanes))
    lane_length = memory // lanes
    segment = lane_length // 4
    total = _checked_nodes(passes * memory)
    rng = np.random.default_rng(seed)
    prev = np.empty(total, dtype=np.int32)
    ref = np.empty(total, dtype=np.int32)
    old = np.full(total, -1, dtype=np.int32)
    dies = np.full(total, total, dtype=np.int32)
    independent = np.zeros(total, dtype=np.bool_)
    position = np.full((lanes, lane_length), -1, dtype=np.int64)
    index = np.arange(segment, dtype=np.int64)
    xor = version == "1.3"
    base = 0
    for pass_ in range(passes):
        for slice_ in range(4):
            known = kind == "argon2i" or (kind == "argon2id" and pass_ == 0 and slice_ < 2)
            for lane in range(lanes):
                if known:
                    words = argon2_address_words(
                        pass_, lane, slice_, memory, passes, ARGON2_KINDS[kind], segment
                    )
                else:
                    words = rng.integers(0, _ALL64, size=segment, dtype=np.uint64, endpoint=True)
                ids = base + index
                columns = slice_ * segment + index
                here = slice(base, base + segment)
                prev[here] = ids - 1
                prev[base] = position[lane, (columns[0] - 1) % lane_length]
                overwritten = position[lane, columns]
                if pass_:
                    dies[overwritten] = ids
                    if xor:
                        old[here] = overwritten
                position[lane, columns] = ids
                ref_lane, ref_column = argon2_reference_columns(
                    pass_, slice_, lane, index, words, lanes, lane_length
                )
                ref[here] = position[ref_lane, ref_column]
                independent[here] = known
                if pass_ == 0 and slice_ == 0:
                    # The first two blocks of each lane come from the initial hash alone.
                    prev[base : base + 2] = -1
                    ref[base : base + 2] = -1
                base += segment
    suffix = "" if xor else ",v=1.2.1"
    return Graph(
        f"{kind}:t={passes},lanes={lanes}{suffix}",
        prev,
        ref,
        old,
        np.ones(total, dtype=np.bool_),
        independent,
        dies,
        position[:, lane_length - 1].astype(np.int32),
        memory,
        ARGON2_BLOCK_BYTES,
        argon2_core(),
    )


# -- the generic power-law graph -------------------------------------------------------------------


def power(gamma: float, blocks: int, seed: int) -> Graph:
    """A one-pass, one-lane graph whose block ``i`` reads ``i - 2 - floor((i - 1) * U**gamma)``.

    ``U`` is uniform on [0, 1): the distance back from the previous block is distributed as
    ``U**gamma`` of the blocks before it (gamma 2 is Argon2's indexing, 3 the shape of TwoCats'
    cubic distance, 1 uniform).  Block 0 comes from the initial hash, block 1 from block 0 alone.
    The references stand for data-dependent ones (drawn per seed, unknown in advance).
    """
    if not (math.isfinite(gamma) and 0.25 <= gamma <= 16):
        raise InvalidParametersError(f"GAMMA must be a number from 0.25 to 16; got {gamma}")
    if blocks < 8:
        raise InvalidParametersError(f"blocks must be at least 8; got {blocks}")
    total = _checked_nodes(blocks)
    rng = np.random.default_rng(seed)
    i = np.arange(total, dtype=np.int64)
    back = np.floor(np.maximum(i - 1, 0) * rng.random(total) ** gamma).astype(np.int64)
    ref = (i - 2 - back).astype(np.int32)
    prev = (i - 1).astype(np.int32)
    ref[:2] = -1
    return Graph(
        f"power:{gamma:g}",
        prev,
        ref,
        np.full(total, -1, dtype=np.int32),
        np.ones(total, dtype=np.bool_),
        np.zeros(total, dtype=np.bool_),
        np.full(total, total, dtype=np.int32),
        np.array([total - 1], dtype=np.int32),
        total,
        ARGON2_BLOCK_BYTES,
        argon2_core(),
    )


# -- TwoCats ---------------------------------------------------------------------------------------


def _cubic_back(v: npt.NDArray[np.uint64], i: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """TwoCats' password-dependent reference block of block ``i`` from state word ``v`` (§8)."""
    v2 = (v * v) >> np.uint64(32)
    v3 = (v * v2) >> np.uint64(32)
    d = ((i - 1).astype(np.uint64) * v3) >> np.uint64(32)
    target: npt.NDArray[np.int64] = i - 1 - d.astype(np.int64)
    return target


def _words32(rng: np.random.Generator, count: int) -> npt.NDArray[np.uint64]:
    return rng.integers(0, 1 << 32, size=count, dtype=np.uint64)


def _layout(params: Params, plan: LevelPlan, first: int, end: int) -> BlockLayout:
    """The block hash of one level: rows, sub-blocks and multiplications per row."""
    march = params.variant == "2014-03"
    return BlockLayout(
        first,
        end,
        steps=max(1, plan.blocklen // params.lanes),
        sub_blocks=max(1, plan.blocklen // plan.sub_blocklen),
        chain=params.multiplies * (1 if march else 2),
        repeats=1 << (params.time_cost or 0) if march else 1,
    )


def twocats(params: Params, seed: int) -> Graph:
    """The graph of a TwoCats derivation with ``params``: every level that fills memory, in order.

    Each level follows :func:`twocats.kdf.geometry.plan`: four slices per region, the first
    ``resistant_slices`` addressed by sliding bit-reversal, the others by the cubic distance from
    the region state; the 2014 version runs the last slice of a main level ``2**time_cost`` times.
    The March 2014 version's repetition of every block hash adds work per block, not edges, and is
    not a graph property.  A level starts from the small key the previous level left, not from its
    memory, so each level's first blocks have no ``prev``, and its blocks die when the next level
    starts.
    """
    plans = [plan for plan in geometry.plan(params) if plan.fills]
    repeat = 1 << (params.time_cost or 0) if params.variant == "2014" else 1
    total = 0
    for plan in plans:
        slices = 3 + (repeat if plan.main else 1)
        total += plan.parallelism * plan.per_slice * slices
    _checked_nodes(total)
    rng = np.random.default_rng(seed)
    prev = np.empty(total, dtype=np.int32)
    ref = np.empty(total, dtype=np.int32)
    held = np.ones(total, dtype=np.bool_)
    independent = np.ones(total, dtype=np.bool_)
    dies = np.full(total, total, dtype=np.int32)
    layouts = []
    memory, block_bytes = 0, 0
    base = 0
    for plan in plans:
        regions, bpt, per = plan.parallelism, plan.blocks_per_region, plan.per_slice
        if regions * bpt > memory:
            memory, block_bytes = regions * bpt, 4 * plan.blocklen
        first = base
        position = np.full((regions, bpt), -1, dtype=np.int64)
        reversed_targets = np.array(
            [0] + [sliding_reverse(i) for i in range(1, bpt)], dtype=np.int64
        )
        for slice_ in range(4):
            done = slice_ * per
            i = np.arange(done, done + per, dtype=np.int64)
            dependent = slice_ >= plan.resistant_slices
            runs = repeat if (plan.main and slice_ == 3) else 1
            for run in range(runs):
                for region in range(regions):
                    ids = base + np.arange(per, dtype=np.int64)
                    here = slice(base, base + per)
                    prev[here] = ids - 1
                    prev[base] = position[region, done - 1] if done else -1
                    # A repeated slice starts from memory block done - 1, not from the block
                    # its region computed just before (the end of the previous run).
                    held[base] = run == 0
                    if dependent:
                        target = _cubic_back(_words32(rng, per), i)
                        chosen = (_words32(rng, per) % np.uint64(regions)).astype(np.int64)
                    else:
                        target = reversed_targets[i]
                        chosen = i % regions
                    source = np.where(target < done, chosen, region)
                    if run:
                        dies[position[region, i]] = ids
                    position[region, i] = ids
                    ref[here] = position[source, target]
                    independent[here] = not dependent
                    if done == 0:
                        # Block 0 is expanded from the region state alone.
                        prev[base] = -1
                        ref[base] = -1
                    base += per
        dies[first:base] = np.minimum(dies[first:base], base)
        layouts.append(_layout(params, plan, first, base))
    if base == 0:
        raise InvalidParametersError("these TwoCats parameters fill no memory: no graph to analyse")
    return Graph(
        twocats_name(params),
        prev,
        ref,
        np.full(total, -1, dtype=np.int32),
        held,
        independent,
        dies,
        np.empty(0, dtype=np.int32),
        memory,
        block_bytes,
        twocats_core(params.hash_type),
        state_bytes=4 * params.lanes,
        layouts=tuple(layouts),
    )


def twocats_name(params: Params) -> str:
    """The name of the TwoCats graph of ``params``: version, memory cost, regions and mode."""
    mode = "side-channel-resistant" if params.side_channel_resistant else "hybrid"
    return f"twocats:v={params.variant},m={params.mem_cost},p={params.parallelism},{mode}"
