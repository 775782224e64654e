"""The 2015 TwoCats garlic loop on a GPU: many guesses at once, one guess per thread block.

A thread block runs one guess with ``parallelism * lanes`` threads: thread ``(p, k)`` is lane ``k``
of region ``p``.  The lanes are the natural threads because the data layout is already interleaved
(twocats.md §9): word ``w`` of a block belongs to lane ``w % lanes``, so the lanes of one row are
consecutive words, one coalesced access of 4 to 64 bytes, and each thread reads back only the words
it wrote itself in the block before (the previous block's rows, permuted per sub-block).  The
regions of a guess meet at the slice barriers and the lanes of a region at each block's state hash,
so they must share one block and its ``syncthreads``; a warp per guess would hold only 8 to 16
lanes of one region.  Every thread runs the serial multiply chain of its region itself (the same
values in every lane), so the warp never diverges for it; lane 0 then computes the block's ``Hv``.

One kernel launch runs one garlic level of every guess (its region states ``Hv(h, p)``, the four
slices, the level result and the scramble between levels); the host hashes the header into the
first key (:func:`twocats.kdf.core`'s initial key) and the client output into the final one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from twocats.exceptions import InvalidParametersError
from twocats.gpu._cuda import cuda, device, kernel
from twocats.gpu.devhash import DIGESTS
from twocats.hashes import HASHES
from twocats.kdf import core, geometry
from twocats.kdf.geometry import LevelPlan
from twocats.kdf.reference import hash_bytes
from twocats.params import Params

__all__ = ["MAX_THREADS", "Batch", "derive_many"]

U32 = np.uint32
U64 = np.uint64

#: The most threads of one thread block: ``parallelism * lanes`` may not exceed it.
MAX_THREADS = 1024


@device
def _sliding_reverse(i: Any) -> Any:
    """The data-independent reference block of block ``i >= 1`` (twocats.md §7)."""
    n = 0
    while (i >> (n + 1)) != 0:
        n += 1
    low = i - (1 << n)
    r = 0
    for bit in range(n):
        if (low >> bit) & 1:
            r |= 1 << (n - 1 - bit)
    if r + (1 << n) < i:
        r += 1 << n
    return r


@device
def _mulhi(x: Any, y: Any) -> Any:
    return U32((U64(x) * U64(y)) >> U64(32))


@functools.cache
def _level_kernel(hash_code: int) -> Any:
    """Compile (once per hash type) the kernel of one garlic level of many guesses."""
    digest = DIGESTS[hash_code]
    width = HASHES[hash_code].state_words

    @kernel
    def level(
        mem: Any,
        keys: Any,
        states: Any,
        lane_states: Any,
        bpt: Any,
        blocklen: Any,
        sub_blocklen: Any,
        parallelism: Any,
        lanes: Any,
        multiplies: Any,
        resistant: Any,
        fills: Any,
        last: Any,
    ) -> None:
        g = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        p = tid // lanes
        k = tid - p * lanes
        work = mem[g]
        key = keys[g]
        st = states[g]
        fresh = lane_states[g]
        so = p * width
        if fills:
            if k == 0:
                digest(key, 0, U32(p), True, st, so)
            cuda.syncthreads()
            per = bpt // 4
            base = p * bpt * blocklen
            for s in range(4):
                done = s * per
                dependent = s >= resistant
                sub = sub_blocklen if dependent else blocklen
                nsub = blocklen // sub
                first = done
                if not dependent and done == 0:
                    # Block 0 is Expand(state, blocklen); the lanes share its digests.
                    chunk = k
                    while chunk < blocklen // width:
                        digest(st, so, U32(chunk), True, work, base + chunk * width)
                        chunk += lanes
                    first = 1
                    cuda.syncthreads()
                for i in range(first, done + per):
                    if dependent:
                        v = U64(st[so])
                        v2 = (v * v) >> U64(32)
                        v3 = (v * v2) >> U64(32)
                        r = i - 1 - int((U64(i - 1) * v3) >> U64(32))
                        region = int(st[so + 1]) % parallelism if r < done else p
                    else:
                        r = _sliding_reverse(i)
                        region = i % parallelism if r < done else p
                    f = (region * bpt + r) * blocklen
                    prev = base + (i - 1) * blocklen
                    t = base + i * blocklen
                    a, b, c, d = st[so], st[so + 1], st[so + 2], st[so + 3]
                    x = st[so + k]
                    for _sub in range(nsub):
                        q = prev + sub * int(work[f] & U32(nsub - 1))
                        for _row in range(sub // lanes):
                            for _step in range(multiplies):
                                a = U32(a ^ _mulhi(b, c))
                                b = U32(b + c)
                                c = U32(c ^ _mulhi(a, d))
                                d = U32(d + a)
                            y = U32(U32(x + work[q + k]) ^ work[f + k])
                            x = U32((y << U32(8)) | (y >> U32(24)))
                            work[t + k] = x
                            q += lanes
                            f += lanes
                            t += lanes
                    fresh[so + k] = x
                    cuda.syncthreads()
                    if k == 0:
                        for w in range(lanes, width):
                            fresh[so + w] = st[so + w]
                        digest(fresh, so, a, True, st, so)
                    cuda.syncthreads()
        if tid == 0:
            if fills:
                for w in range(width):
                    total = key[w]
                    for region in range(parallelism):
                        total = U32(total + st[region * width + w])
                    fresh[w] = total
                digest(fresh, 0, U32(0), False, key, 0)
            if not last:
                digest(key, 0, U32(0), False, key, 0)

    return level


def _check(params: object) -> Params:
    params = core.check_params(params)
    if params.variant != "2015":
        raise InvalidParametersError(
            f"variant must be '2015' for the GPU fill; got {params.variant!r}"
        )
    threads = params.parallelism * params.lanes
    if threads > MAX_THREADS:
        raise InvalidParametersError(
            f"parallelism * lanes must be at most {MAX_THREADS} for the GPU fill (one thread "
            f"per lane of each region); got {params.parallelism} * {params.lanes} = {threads}"
        )
    return params


class Batch:
    """Device memory for ``guesses`` TwoCats guesses of ``params``, and the kernels that fill it.

    ``load`` copies the first keys (one row of W words per guess) to the device, ``run`` runs every
    garlic level of every guess and waits for the device, and ``keys`` copies the client keys back.
    """

    def __init__(self, params: Params, guesses: int) -> None:
        self.params = _check(params)
        if guesses < 1:
            raise InvalidParametersError(f"guesses must be at least 1; got {guesses}")
        self.guesses = guesses
        self.plans: tuple[LevelPlan, ...] = geometry.plan(self.params)
        width = self.params.state_words
        words = max(1, geometry.required_words(self.plans))
        self._kernel = _level_kernel(self.params.hash_code)
        self._mem = cuda.device_array((guesses, words), dtype=np.uint32)
        self._keys = cuda.device_array((guesses, width), dtype=np.uint32)
        self._states = cuda.device_array((guesses, self.params.parallelism * width), np.uint32)
        self._lane_states = cuda.device_array_like(self._states)

    @property
    def memory_bytes(self) -> int:
        """Bytes of device memory the batch holds."""
        arrays = (self._mem, self._keys, self._states, self._lane_states)
        return sum(int(array.size) * 4 for array in arrays)

    def load(self, keys: np.ndarray) -> None:
        """Copy the first keys (``guesses`` rows of W 32-bit words) to the device."""
        self._keys.copy_to_device(np.ascontiguousarray(keys, dtype=np.uint32))

    def run(self) -> None:
        """Run the garlic loop of every guess on the device keys, and wait for the device."""
        params = self.params
        threads = params.parallelism * params.lanes
        for plan in self.plans:
            self._kernel[self.guesses, threads](
                self._mem,
                self._keys,
                self._states,
                self._lane_states,
                plan.blocks_per_region,
                plan.blocklen,
                plan.sub_blocklen,
                plan.parallelism,
                params.lanes,
                params.multiplies,
                plan.resistant_slices,
                plan.fills,
                plan.mem_cost == params.mem_cost,
            )
        cuda.synchronize()

    def client_keys(self) -> np.ndarray:
        """Copy the keys back from the device: after :meth:`run`, the client keys."""
        keys: np.ndarray = self._keys.copy_to_host()
        return keys


def derive_many(
    params: Params, passwords: Sequence[bytes], salts: Sequence[bytes], data: bytes = b""
) -> list[bytes]:
    """Derive the TwoCats output of each password with its salt, all guesses on the device at once.

    The outputs equal :func:`twocats.kdf.derive` with the same ``params`` (variant 2015 only).
    """
    params = _check(params)
    if len(passwords) != len(salts):
        raise InvalidParametersError(
            f"salts must have one salt per password; got {len(salts)} for {len(passwords)}"
        )
    if not passwords:
        return []
    data = core.check_input("data", data)
    first = [
        core._initial_key(
            params, core.check_input("password", pw), core.check_input("salt", salt), data
        )
        for pw, salt in zip(passwords, salts, strict=True)
    ]
    batch = Batch(params, len(first))
    batch.load(np.array(first, dtype=np.uint32))
    batch.run()
    code = params.hash_code
    return [hash_bytes(code, row.astype("<u4").tobytes()) for row in batch.client_keys()]
