"""A slow Argon2 (RFC 9106, version 1.3) built on the indexing of twocats.perf.tradeoff.graphs.

Test-only code: it fills the memory with the graph module's compression G, address words and
reference columns, so that agreeing with argon2-cffi's hashes checks the Argon2 graphs' edges.
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np

from twocats.perf.tradeoff.graphs import (
    ARGON2_KINDS,
    argon2_address_words,
    argon2_compress,
    argon2_reference_columns,
)

__all__ = ["argon2_hash"]


def _long_hash(message: bytes, size: int) -> bytes:
    """H': BLAKE2b of any output length (RFC 9106 3.3)."""
    prefixed = struct.pack("<I", size) + message
    if size <= 64:
        return hashlib.blake2b(prefixed, digest_size=size).digest()
    rounds = -(-size // 32) - 2
    value = hashlib.blake2b(prefixed).digest()
    out = [value[:32]]
    for _ in range(rounds - 1):
        value = hashlib.blake2b(value).digest()
        out.append(value[:32])
    out.append(hashlib.blake2b(value, digest_size=size - 32 * rounds).digest())
    return b"".join(out)


def _block(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<u8").astype(np.uint64).reshape(1, 128)


def argon2_hash(
    kind: str, password: bytes, salt: bytes, passes: int, kib: int, lanes: int, size: int
) -> bytes:
    """Return the Argon2 tag of ``password`` (no secret key, no associated data)."""
    y = ARGON2_KINDS[kind]
    h0 = hashlib.blake2b(
        struct.pack("<6I", lanes, size, kib, passes, 0x13, y)
        + struct.pack("<I", len(password)) + password
        + struct.pack("<I", len(salt)) + salt
        + struct.pack("<2I", 0, 0)
    ).digest()  # fmt: skip
    memory = 4 * lanes * (kib // (4 * lanes))
    lane_length = memory // lanes
    segment = lane_length // 4
    mem = np.zeros((lanes, lane_length, 128), dtype=np.uint64)
    for lane in range(lanes):
        for column in (0, 1):
            mem[lane, column] = _block(_long_hash(h0 + struct.pack("<2I", column, lane), 1024))
    for pass_ in range(passes):
        for slice_ in range(4):
            independent = kind == "argon2i" or (kind == "argon2id" and pass_ == 0 and slice_ < 2)
            for lane in range(lanes):
                if independent:
                    words = argon2_address_words(pass_, lane, slice_, memory, passes, y, segment)
                for index in range(segment):
                    column = slice_ * segment + index
                    if pass_ == 0 and column < 2:
                        continue
                    prev = mem[lane, (column - 1) % lane_length]
                    word = words[index] if independent else prev[0]
                    ref_lane, ref_column = argon2_reference_columns(
                        pass_, slice_, lane, np.array([index]), np.array([word], dtype=np.uint64),
                        lanes, lane_length,
                    )  # fmt: skip
                    ref = mem[ref_lane[0], ref_column[0]]
                    new = argon2_compress(prev.reshape(1, 128), ref.reshape(1, 128))[0]
                    mem[lane, column] = new ^ mem[lane, column] if pass_ else new
    final = np.bitwise_xor.reduce(mem[:, lane_length - 1], axis=0)
    return _long_hash(final.astype("<u8").tobytes(), size)
