"""Argon2id (RFC 9106, version 0x13) on a GPU: many guesses at once, one guess per thread block.

A thread block runs one guess with 32 threads per lane (``32 * parallelism`` threads, so at most
:data:`MAX_LANES` lanes).  The 32 threads of a lane share its 1 KiB block: each owns the four
64-bit words ``j, j + 32, j + 64, j + 96`` of the XORs into and out of memory (coalesced, 256 bytes
a step), and the permutation's 8 row rounds and 8 column rounds are each 32 calls of the BLAKE2b
``GB`` function, one per thread, on the block in shared memory.  The lanes of a guess meet at
every segment end, which ``syncthreads`` gives them inside one block.

The host computes H0, the first two blocks of every lane (``H'`` of H0) and the tag (``H'`` of the
XOR of the lanes' last blocks, which the device computes); the device does every other block.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from twocats.exceptions import InvalidParametersError
from twocats.gpu._cuda import cuda, device, kernel

__all__ = ["MAX_LANES", "Argon2Batch", "Argon2Params", "hash_many", "long_hash"]

U32 = np.uint32
U64 = np.uint64

#: The most lanes of one guess (32 threads each, at most 512 threads per block).
MAX_LANES = 16

#: Argon2id's type number and the version the kernels implement.
TYPE_ID = 2
VERSION = 0x13

#: 64-bit words per 1 KiB block.
BLOCK_WORDS = 128

_M32 = U64(0xFFFFFFFF)


class Argon2Params:
    """Argon2id's cost parameters: ``time_cost`` passes, ``memory_cost`` KiB, ``parallelism``."""

    def __init__(
        self, time_cost: int, memory_cost: int, parallelism: int, hash_len: int = 32
    ) -> None:
        if not 1 <= parallelism <= MAX_LANES:
            raise InvalidParametersError(
                f"parallelism must be from 1 to {MAX_LANES} for the GPU fill; got {parallelism}"
            )
        if time_cost < 1:
            raise InvalidParametersError(f"time_cost must be at least 1; got {time_cost}")
        if memory_cost < 8 * parallelism:
            raise InvalidParametersError(
                f"memory_cost must be at least 8 * parallelism = {8 * parallelism} KiB; "
                f"got {memory_cost}"
            )
        if not 4 <= hash_len <= 0xFFFFFFFF:
            raise InvalidParametersError(f"hash_len must be at least 4 bytes; got {hash_len}")
        self.time_cost = time_cost
        self.memory_cost = memory_cost
        self.parallelism = parallelism
        self.hash_len = hash_len

    def __repr__(self) -> str:
        return (
            f"Argon2Params(t={self.time_cost}, m={self.memory_cost}, p={self.parallelism}, "
            f"hash_len={self.hash_len})"
        )

    @property
    def blocks(self) -> int:
        """m': the blocks actually used, a multiple of ``4 * parallelism``."""
        return 4 * self.parallelism * (self.memory_cost // (4 * self.parallelism))

    @property
    def lane_length(self) -> int:
        """q: blocks per lane."""
        return self.blocks // self.parallelism


def long_hash(size: int, message: bytes) -> bytes:
    """``H'^size(message)``: Argon2's variable-length hash (RFC 9106 §3.3)."""
    prefixed = struct.pack("<I", size) + message
    if size <= 64:
        return hashlib.blake2b(prefixed, digest_size=size).digest()
    chunks = -(-size // 32) - 2
    v = hashlib.blake2b(prefixed, digest_size=64).digest()
    out = [v[:32]]
    for _ in range(chunks - 1):
        v = hashlib.blake2b(v, digest_size=64).digest()
        out.append(v[:32])
    out.append(hashlib.blake2b(v, digest_size=size - 32 * chunks).digest())
    return b"".join(out)


def _h0(params: Argon2Params, password: bytes, salt: bytes, secret: bytes, data: bytes) -> bytes:
    """H0: the 64-byte digest of the parameters and the inputs."""
    hasher = hashlib.blake2b(digest_size=64)
    hasher.update(
        struct.pack(
            "<6I",
            params.parallelism,
            params.hash_len,
            params.memory_cost,
            params.time_cost,
            VERSION,
            TYPE_ID,
        )
    )
    for part in (password, salt, secret, data):
        hasher.update(struct.pack("<I", len(part)))
        hasher.update(part)
    return hasher.digest()


def first_blocks(params: Argon2Params, password: bytes, salt: bytes) -> np.ndarray:
    """The first two blocks of every lane, ``(parallelism * 2 * 128,)`` 64-bit words."""
    h0 = _h0(params, password, salt, b"", b"")
    blocks = [
        long_hash(1024, h0 + struct.pack("<II", column, lane))
        for lane in range(params.parallelism)
        for column in (0, 1)
    ]
    return np.frombuffer(b"".join(blocks), dtype="<u8").astype(np.uint64)


@device
def _gb(v: Any, lane: Any, a: Any, b: Any, c: Any, d: Any) -> None:
    """Argon2's GB on words a, b, c, d of the lane's block: BLAKE2b's G with multiplications."""
    va, vb, vc, vd = v[lane, a], v[lane, b], v[lane, c], v[lane, d]
    va = va + vb + U64(2) * (va & _M32) * (vb & _M32)
    z = vd ^ va
    vd = (z >> U64(32)) | (z << U64(32))
    vc = vc + vd + U64(2) * (vc & _M32) * (vd & _M32)
    z = vb ^ vc
    vb = (z >> U64(24)) | (z << U64(40))
    va = va + vb + U64(2) * (va & _M32) * (vb & _M32)
    z = vd ^ va
    vd = (z >> U64(16)) | (z << U64(48))
    vc = vc + vd + U64(2) * (vc & _M32) * (vd & _M32)
    z = vb ^ vc
    v[lane, a], v[lane, b], v[lane, c], v[lane, d] = va, (z >> U64(63)) | (z << U64(1)), vc, vd


@device
def _column_word(column: Any, k: Any) -> Any:
    """Word ``k`` (0-15) of column ``column`` (0-7): the 16-byte registers 2·column of each row."""
    return 2 * column + 16 * (k >> 1) + (k & 1)


@device
def _permute(v: Any, lane: Any, j: Any) -> None:
    """The permutation P of RFC 9106 §3.6 over the lane's block ``v[lane]``, thread ``j`` of 32."""
    g = j & 3
    row = 16 * (j >> 2)
    _gb(v, lane, row + g, row + 4 + g, row + 8 + g, row + 12 + g)
    cuda.syncthreads()
    _gb(
        v, lane, row + g, row + 4 + ((g + 1) & 3), row + 8 + ((g + 2) & 3), row + 12 + ((g + 3) & 3)
    )
    cuda.syncthreads()
    col = j >> 2
    _gb(
        v,
        lane,
        _column_word(col, g),
        _column_word(col, 4 + g),
        _column_word(col, 8 + g),
        _column_word(col, 12 + g),
    )
    cuda.syncthreads()
    _gb(
        v,
        lane,
        _column_word(col, g),
        _column_word(col, 4 + ((g + 1) & 3)),
        _column_word(col, 8 + ((g + 2) & 3)),
        _column_word(col, 12 + ((g + 3) & 3)),
    )
    cuda.syncthreads()


@functools.cache
def _fill_kernel(lanes: int) -> Any:
    """Compile (once per lane count) the kernel filling the memory of many guesses."""

    @kernel
    def fill(mem: Any, first: Any, out: Any, passes: Any, lane_length: Any) -> None:
        g = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        lane = tid // 32
        j = tid - 32 * lane
        work = mem[g]
        r_block = cuda.shared.array((lanes, BLOCK_WORDS), np.uint64)
        addresses = cuda.shared.array((lanes, BLOCK_WORDS), np.uint64)
        own = cuda.local.array(4, np.uint64)
        segment = lane_length // 4
        lane_start = lane * lane_length
        for w in range(4):
            for column in range(2):
                idx = j + 32 * w
                work[(lane_start + column) * BLOCK_WORDS + idx] = first[
                    g, (2 * lane + column) * BLOCK_WORDS + idx
                ]
        cuda.syncthreads()
        for pass_no in range(passes):
            for s in range(4):
                independent = pass_no == 0 and s < 2
                start = 2 if pass_no == 0 and s == 0 else 0
                counter = 0
                for i in range(start, segment):
                    if independent and (i % BLOCK_WORDS == 0 or i == start):
                        # The next block of addresses: G(0, G(0, Z)) of the input block Z.
                        counter += 1
                        for w in range(4):
                            idx = j + 32 * w
                            z = U64(0)
                            if idx == 0:
                                z = U64(pass_no)
                            elif idx == 1:
                                z = U64(lane)
                            elif idx == 2:
                                z = U64(s)
                            elif idx == 3:
                                z = U64(lanes * lane_length)
                            elif idx == 4:
                                z = U64(passes)
                            elif idx == 5:
                                z = U64(TYPE_ID)
                            elif idx == 6:
                                z = U64(counter)
                            r_block[lane, idx] = z
                            own[w] = z
                        cuda.syncthreads()
                        _permute(r_block, lane, j)
                        for w in range(4):
                            idx = j + 32 * w
                            z = own[w] ^ r_block[lane, idx]
                            r_block[lane, idx] = z
                            own[w] = z
                        cuda.syncthreads()
                        _permute(r_block, lane, j)
                        for w in range(4):
                            idx = j + 32 * w
                            addresses[lane, idx] = own[w] ^ r_block[lane, idx]
                        cuda.syncthreads()
                    column = s * segment + i
                    prev_column = column - 1 if column > 0 else lane_length - 1
                    prev = (lane_start + prev_column) * BLOCK_WORDS
                    pseudo = addresses[lane, i % BLOCK_WORDS] if independent else work[prev]
                    ref_lane = lane if pass_no == 0 and s == 0 else int(pseudo >> U64(32)) % lanes
                    same = ref_lane == lane
                    if pass_no == 0:
                        if s == 0:
                            area = i - 1
                        elif same:
                            area = s * segment + i - 1
                        else:
                            area = s * segment - (1 if i == 0 else 0)
                        origin = 0
                    else:
                        if same:
                            area = lane_length - segment + i - 1
                        else:
                            area = lane_length - segment - (1 if i == 0 else 0)
                        origin = 0 if s == 3 else (s + 1) * segment
                    low = pseudo & _M32
                    x = (low * low) >> U64(32)
                    relative = area - 1 - int((U64(area) * x) >> U64(32))
                    ref = (ref_lane * lane_length + (origin + relative) % lane_length) * BLOCK_WORDS
                    cur = (lane_start + column) * BLOCK_WORDS
                    for w in range(4):
                        idx = j + 32 * w
                        z = work[prev + idx] ^ work[ref + idx]
                        r_block[lane, idx] = z
                        own[w] = z ^ work[cur + idx] if pass_no > 0 else z
                    cuda.syncthreads()
                    _permute(r_block, lane, j)
                    for w in range(4):
                        idx = j + 32 * w
                        work[cur + idx] = own[w] ^ r_block[lane, idx]
                    cuda.syncthreads()
        if lane == 0:
            for w in range(4):
                idx = j + 32 * w
                z = U64(0)
                for other in range(lanes):
                    z = z ^ work[((other + 1) * lane_length - 1) * BLOCK_WORDS + idx]
                out[g, idx] = z

    return fill


class Argon2Batch:
    """Device memory for ``guesses`` Argon2id guesses of ``params``, and the kernel that fills it.

    ``load`` copies the first two blocks of every lane of every guess to the device, ``run`` fills
    the memory of every guess and waits for the device, and ``final_blocks`` copies back the XOR of
    each guess's last blocks (the input of the tag's ``H'``).
    """

    def __init__(self, params: Argon2Params, guesses: int) -> None:
        if guesses < 1:
            raise InvalidParametersError(f"guesses must be at least 1; got {guesses}")
        self.params = params
        self.guesses = guesses
        self._kernel = _fill_kernel(params.parallelism)
        self._mem = cuda.device_array((guesses, params.blocks * BLOCK_WORDS), dtype=np.uint64)
        self._first = cuda.device_array(
            (guesses, params.parallelism * 2 * BLOCK_WORDS), dtype=np.uint64
        )
        self._out = cuda.device_array((guesses, BLOCK_WORDS), dtype=np.uint64)

    @property
    def memory_bytes(self) -> int:
        """Bytes of device memory the batch holds."""
        return sum(int(array.size) * 8 for array in (self._mem, self._first, self._out))

    def load(self, first: np.ndarray) -> None:
        """Copy the first blocks (``guesses`` rows of :func:`first_blocks`) to the device."""
        self._first.copy_to_device(np.ascontiguousarray(first, dtype=np.uint64))

    def run(self) -> None:
        """Fill the memory of every guess, and wait for the device."""
        params = self.params
        self._kernel[self.guesses, 32 * params.parallelism](
            self._mem, self._first, self._out, params.time_cost, params.lane_length
        )
        cuda.synchronize()

    def final_blocks(self) -> np.ndarray:
        """Copy back, per guess, the XOR of the lanes' last blocks (128 64-bit words)."""
        out: np.ndarray = self._out.copy_to_host()
        return out


def hash_many(
    params: Argon2Params, passwords: Sequence[bytes], salts: Sequence[bytes]
) -> list[bytes]:
    """Return the Argon2id tag of each password with its salt, all guesses on the device at once.

    The tags equal argon2-cffi's ``hash_secret_raw(password, salt, time_cost, memory_cost,
    parallelism, hash_len, Type.ID)``.
    """
    if len(passwords) != len(salts):
        raise InvalidParametersError(
            f"salts must have one salt per password; got {len(salts)} for {len(passwords)}"
        )
    if not passwords:
        return []
    batch = Argon2Batch(params, len(passwords))
    batch.load(
        np.stack(
            [first_blocks(params, pw, salt) for pw, salt in zip(passwords, salts, strict=True)]
        )
    )
    batch.run()
    return [long_hash(params.hash_len, row.astype("<u8").tobytes()) for row in batch.final_blocks()]
