"""BLAKE2sp and BLAKE2bp: the parallel BLAKE2 trees with their leaves in SIMD lanes.

Usage::

    from twocats.lanes.modes import blake2tree

    blake2tree.blake2sp(data)                                # 32 bytes, 8 BLAKE2s leaves
    blake2tree.blake2sp(data, key=b"k" * 32, digest_size=16)
    blake2tree.blake2bp(data)                                # 64 bytes, 4 BLAKE2b leaves
    blake2tree.blake2sp_many([b"a", b"b"])                   # one tree per message

The message's 64-byte (BLAKE2sp) or 128-byte (BLAKE2bp) blocks go round-robin to the leaves, so one
512-byte stride feeds one block to every lane; the compiled kernel compresses all leaves in
lock-step and then hashes the leaf digests in the root.  Keyed trees and every output length follow
the BLAKE2 specification (each leaf absorbs the key block; the root only declares the key length).
``backend`` is "simd", "scalar" or "reference".
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from functools import partial
from typing import Any

from twocats.lanes.algorithm import Algorithm
from twocats.lanes.modes._common import as_data, check_bytes, check_int, check_messages
from twocats.lanes.reference import blake2tree as ref
from twocats.simd.registry import resolve_backend

__all__ = ["ALGORITHMS", "blake2bp", "blake2bp_many", "blake2sp", "blake2sp_many"]


def _init_rows(v: ref.Blake2Variant, digest_size: int, key_size: int) -> Any:
    """Return the initial chaining values of the leaves (rows 0..n-1) and the root (row n)."""
    import numpy as np

    wb = v.word_bits // 8
    rows = []
    for offset, depth in [(i, 0) for i in range(v.leaves)] + [(0, 1)]:
        params = ref.node_parameter_block(v, digest_size, key_size, offset, depth)
        rows.append(
            [
                iv ^ int.from_bytes(params[wb * i : wb * i + wb], "little")
                for i, iv in enumerate(v.iv)
            ]
        )
    return np.array(rows, dtype=f"uint{v.word_bits}")


@functools.cache
def _kernels() -> Any:
    """Import the BLAKE2 tree drivers and give each its known-answer check (imports numpy and
    numba)."""
    from twocats.lanes.modes.kernels import blake2tree as drivers

    for v in (ref.BLAKE2S, ref.BLAKE2B):
        getattr(drivers, f"{v.name}p_hash").checked_by(partial(_passes, v))
    return drivers


def _passes(v: ref.Blake2Variant, backend: str) -> bool:
    """A driver's check: the tree of nothing, of a message that fills every leaf and more, and
    of a short one with the longest key."""
    from twocats.lanes.known_answers import agrees, painted

    tree = partial(_tree, v, digest_size=v.max_digest)
    empty, long, short = painted(0, v.leaves * v.block_bytes + 100, 100)
    key = bytes(range(v.max_digest))
    return (
        agrees(tree, backend, empty, key=b"")
        and agrees(tree, backend, long, key=b"")
        and agrees(tree, backend, short, key=key)
    )


def _tree(
    v: ref.Blake2Variant, data: bytes, key: bytes, digest_size: int, backend: str | None
) -> bytes:
    """Hash one message with the parallel tree of variant ``v``."""
    data = check_bytes("data", data)
    key = check_bytes("key", key, v.max_digest)
    check_int("digest_size", digest_size, 1, v.max_digest)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        func = ref.blake2sp if v is ref.BLAKE2S else ref.blake2bp
        return func(data, key, digest_size)
    import numpy as np

    padded_key = key + bytes(v.block_bytes - len(key))
    key_words = np.frombuffer(padded_key, dtype=f"<u{v.word_bits // 8}").astype(
        f"uint{v.word_bits}"
    )
    buffer = as_data(data)
    out = np.zeros(digest_size, dtype=np.uint8)
    kernel = getattr(_kernels(), f"{v.name}p_hash").get(chosen)
    kernel(buffer, len(data), _init_rows(v, digest_size, len(key)), key_words, bool(key), out)
    return out.tobytes()


def blake2sp(
    data: bytes, *, key: bytes = b"", digest_size: int = 32, backend: str | None = None
) -> bytes:
    """Return BLAKE2sp of ``data`` (key of at most 32 bytes, digest_size 1..32)."""
    return _tree(ref.BLAKE2S, data, key, digest_size, backend)


def blake2bp(
    data: bytes, *, key: bytes = b"", digest_size: int = 64, backend: str | None = None
) -> bytes:
    """Return BLAKE2bp of ``data`` (key of at most 64 bytes, digest_size 1..64)."""
    return _tree(ref.BLAKE2B, data, key, digest_size, backend)


def blake2sp_many(
    messages: Sequence[bytes],
    *,
    key: bytes = b"",
    digest_size: int = 32,
    backend: str | None = None,
) -> list[bytes]:
    """Return BLAKE2sp of each message (each message is its own 8-leaf tree)."""
    return [
        blake2sp(m, key=key, digest_size=digest_size, backend=backend)
        for m in check_messages(messages)
    ]


def blake2bp_many(
    messages: Sequence[bytes],
    *,
    key: bytes = b"",
    digest_size: int = 64,
    backend: str | None = None,
) -> list[bytes]:
    """Return BLAKE2bp of each message (each message is its own 4-leaf tree)."""
    return [
        blake2bp(m, key=key, digest_size=digest_size, backend=backend)
        for m in check_messages(messages)
    ]


#: The registry's rows (:mod:`twocats.lanes.registry`).
ALGORITHMS = (
    Algorithm(
        "blake2sp",
        32,
        blake2sp_many,
        None,
        "BLAKE2sp, 8 BLAKE2s leaves",
    ),
    Algorithm(
        "blake2bp",
        64,
        blake2bp_many,
        None,
        "BLAKE2bp, 4 BLAKE2b leaves",
    ),
)
