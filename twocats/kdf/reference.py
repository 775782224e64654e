"""The plain-Python TwoCats slice fill: slow, obvious, and the truth for the fast path.

This module implements the seam ``fill_slice`` (see ``twocats.kdf.core``) for both block hashes:

* variant 0, the final and 2014 block hash (twocats.md §7-§9): the a/b/c/d multiply chain with
  ``mulhi``, sub-block randomisation in password-dependent slices, little-endian ``Hv``;
* variant 1, the March 2014 block hash (twocats-2014-03.md §9-§11): the single ``lo``/``r``
  chain over the odd block-start state, every block hash repeated ``2**time_cost`` times, and a
  big-endian ``Hv``.

The words of the work area are copied into a Python list for the duration of one call (indexing a
list is much faster than indexing a buffer element by element), and the blocks the slice wrote
are copied back at the end.  Hashes come from :mod:`hashlib`.
"""

from __future__ import annotations

import hashlib
import struct
from array import array

from twocats.hashes import HASH_TYPES
from twocats.kdf import words as _words
from twocats.kdf.geometry import SliceJob

__all__ = [
    "block_hash",
    "block_hash_2014_03",
    "expand",
    "fill_slice",
    "hash_bytes",
    "hash_parts",
    "sliding_reverse",
    "state_hash",
]

MASK = 0xFFFFFFFF


def hash_bytes(hash_code: int, message: bytes) -> bytes:
    """Return the plain digest of ``message`` with hash type ``hash_code``."""
    return hashlib.new(HASH_TYPES[hash_code], message).digest()


def hash_parts(hash_code: int, *parts: bytes) -> bytes:
    """Return the digest of the concatenated ``parts`` without building the concatenation.

    Inputs of hundreds of megabytes are then hashed where they lie, with no copy.
    """
    hasher = hashlib.new(HASH_TYPES[hash_code])
    for part in parts:
        hasher.update(part)
    return hasher.digest()


def _order(big_endian: bool) -> str:
    return ">" if big_endian else "<"


def state_hash(hash_code: int, state: list[int], value: int, big_endian: bool) -> list[int]:
    """``Hv(state, value)``: hash the whole state and a 32-bit value, read the digest as words."""
    order = _order(big_endian)
    message = struct.pack(f"{order}{len(state)}I", *state) + struct.pack(f"{order}I", value)
    digest = hash_bytes(hash_code, message)
    return list(struct.unpack(f"{order}{len(digest) // 4}I", digest))


def expand(hash_code: int, seed: list[int], count: int, big_endian: bool) -> list[int]:
    """Expand a state into block words: ``Hv(seed, 0) || Hv(seed, 1) || ...``.

    The final version writes whole digests only (``count // W`` of them; validation makes ``count``
    a multiple of W), while March 2014 truncates the last digest to exactly ``count`` words.
    """
    words = len(seed)
    chunks = -(-count // words) if big_endian else count // words
    out: list[int] = []
    for k in range(chunks):
        out.extend(state_hash(hash_code, seed, k, big_endian))
    return out[:count]


def sliding_reverse(i: int) -> int:
    """The data-independent reference block of block ``i >= 1`` (sliding bit-reversal window)."""
    n = i.bit_length() - 1
    low = i & ((1 << n) - 1)
    r = int(format(low, f"0{n}b")[::-1], 2) if n else 0
    if r + (1 << n) < i:
        r += 1 << n
    return r


def _cubic_distance(v: int, i: int) -> int:
    """The password-dependent reference block of block ``i``, from state word ``v``."""
    v2 = (v * v) >> 32
    v3 = (v * v2) >> 32
    return i - 1 - (((i - 1) * v3) >> 32)


def _lane_row(mem: list[int], state: list[int], q: int, f: int, t: int, lanes: int) -> None:
    """One row of lanes: ``state[k] = rotl8((state[k] + mem[q + k]) ^ mem[f + k]) = mem[t + k]``."""
    for k in range(lanes):
        x = ((state[k] + mem[q + k]) & MASK) ^ mem[f + k]
        x = ((x << 8) | (x >> 24)) & MASK
        state[k] = x
        mem[t + k] = x


def block_hash(
    mem: list[int],
    state: list[int],
    src: int,
    prev: int,
    dst: int,
    blocklen: int,
    sub_blocklen: int,
    lanes: int,
    multiplies: int,
    hash_code: int,
) -> None:
    """The final (and 2014) block hash: write block ``dst`` from ``src`` and ``prev``."""
    nsub = blocklen // sub_blocklen
    a, b, c, d = state[0], state[1], state[2], state[3]
    f = src
    t = dst
    for _ in range(nsub):
        q = prev + sub_blocklen * (mem[f] & (nsub - 1))
        for _row in range(sub_blocklen // lanes):
            for _step in range(multiplies):
                a ^= (b * c) >> 32
                b = (b + c) & MASK
                c ^= (a * d) >> 32
                d = (d + a) & MASK
            _lane_row(mem, state, q, f, t, lanes)
            q, f, t = q + lanes, f + lanes, t + lanes
    state[:] = state_hash(hash_code, state, a, big_endian=False)


def block_hash_2014_03(
    mem: list[int],
    state: list[int],
    src: int,
    prev: int,
    dst: int,
    blocklen: int,
    sub_blocklen: int,
    lanes: int,
    multiplies: int,
    hash_code: int,
    time_cost: int,
) -> None:
    """The March 2014 block hash, repeated ``2**time_cost`` times over the same three blocks."""
    nsub = blocklen // sub_blocklen
    odd = [word | 1 for word in state]
    lo = 1
    for _repetition in range(1 << time_cost):
        f = src
        t = dst
        for _ in range(nsub):
            r = mem[f]
            q = prev + sub_blocklen * (r & (nsub - 1))
            for _row in range(sub_blocklen // lanes):
                for k in range(multiplies):
                    product = lo * odd[k]
                    lo = (product & MASK) ^ r
                    r = (r + (product >> 32)) & MASK
                _lane_row(mem, state, q, f, t, lanes)
                q, f, t = q + lanes, f + lanes, t + lanes
    state[:] = state_hash(hash_code, state, lo, big_endian=True)


def fill_slice(mem: _words.Words, states: _words.Words, job: SliceJob) -> None:
    """Fill one slice of every region: the seam :class:`twocats.kdf.geometry.FillSlice`."""
    work, flat_states = _words.flat(mem), _words.flat(states)
    done, per_slice, bpt, blocklen = job.done, job.per_slice, job.bpt, job.blocklen
    sub_blocklen, parallelism, lanes, multiplies = (
        job.sub_blocklen, job.parallelism, job.lanes, job.multiplies,
    )  # fmt: skip
    dependent, hash_type, variant, time_cost = (
        job.dependent, job.hash_type, job.variant, job.time_cost,
    )  # fmt: skip
    used = parallelism * bpt * blocklen
    words: list[int] = work[:used].tolist()
    width = len(flat_states) // parallelism
    march = variant == 1
    for p in range(parallelism):
        state: list[int] = flat_states[p * width : (p + 1) * width].tolist()
        base = p * bpt * blocklen
        first = done
        if not dependent and done == 0:
            block = expand(hash_type, state, blocklen, big_endian=march)
            words[base : base + len(block)] = block
            first = 1
        for i in range(first, done + per_slice):
            if dependent:
                r = _cubic_distance(state[0], i)
                region = state[1] % parallelism if r < done else p
                sub = sub_blocklen
            else:
                r = sliding_reverse(i)
                region = i % parallelism if r < done else p
                sub = blocklen
            src = (region * bpt + r) * blocklen
            prev = base + (i - 1) * blocklen
            dst = base + i * blocklen
            if march:
                block_hash_2014_03(
                    words,
                    state,
                    src,
                    prev,
                    dst,
                    blocklen,
                    sub,
                    lanes,
                    multiplies,
                    hash_type,
                    time_cost,
                )
            else:
                block_hash(
                    words, state, src, prev, dst, blocklen, sub, lanes, multiplies, hash_type
                )
        flat_states[p * width : (p + 1) * width] = array(_words.WORD, state)
        start = base + done * blocklen
        stop = base + (done + per_slice) * blocklen
        work[start:stop] = array(_words.WORD, words[start:stop])
