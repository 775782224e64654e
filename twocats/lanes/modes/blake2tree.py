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
from typing import Any

from twocats.lanes.algorithm import Algorithm
from twocats.lanes.modes._common import as_data, check_bytes, check_int, check_messages
from twocats.lanes.reference import blake2tree as ref
from twocats.lanes.reference import painted
from twocats.simd.family import KernelKey, family_of, ready
from twocats.simd.registry import resolve_backend

__all__ = ["ALGORITHMS", "FAMILY", "blake2bp", "blake2bp_many", "blake2sp", "blake2sp_many"]


@functools.cache
def _init_rows(v: ref.Blake2Variant, digest_size: int, key_size: int) -> Any:
    """Return the initial chaining values of the leaves (rows 0..n-1) and the root (row n), as a
    read-only array (made once per shape of tree)."""
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
    init = np.array(rows, dtype=f"uint{v.word_bits}")
    init.flags.writeable = False
    return init


def _variant(key: KernelKey) -> ref.Blake2Variant:
    return ref.BLAKE2S if key.kernel.startswith("blake2sp") else ref.BLAKE2B


def _check(kernel: Any, key: KernelKey) -> bool:
    """A tree kernel's known-answer check: the tree of nothing, of a message that fills every
    leaf and more, and of a short one with the longest key, the reference's."""
    v = _variant(key)
    func = ref.blake2sp if v is ref.BLAKE2S else ref.blake2bp
    empty, long, short = painted(0, v.leaves * v.block_bytes + 100, 100)
    longest = bytes(range(v.max_digest))
    return all(
        _run(kernel, v, data, key_, v.max_digest) == func(data, key_, v.max_digest)
        for data, key_ in ((empty, b""), (long, b""), (short, longest))
    )


def _run(kernel: Any, v: ref.Blake2Variant, data: bytes, key: bytes, digest_size: int) -> bytes:
    """One message's tree by ``kernel``, its arguments checked."""
    import numpy as np

    padded_key = key + bytes(v.block_bytes - len(key))
    word = f"uint{v.word_bits}"
    key_words = np.frombuffer(padded_key, dtype=f"<u{v.word_bits // 8}").astype(word)
    out = np.zeros(digest_size, dtype=np.uint8)
    k = v.leaves
    scratch = [np.zeros(8 * k, word), np.zeros(16 * k, word), np.zeros(k, np.uint64)]
    scratch += [np.zeros(k, word), np.zeros(k, word), np.zeros(8 * k, word)]
    scratch += [np.zeros(k, np.uint64), np.zeros(k, np.uint64)]
    init = _init_rows(v, digest_size, len(key))
    kernel(as_data(data), len(data), init, key_words, bool(key), out, *scratch)
    return out.tobytes()


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
    kernel = ready(FAMILY, KernelKey(f"{v.name}p_hash", chosen))
    return _run(kernel, v, data, key, digest_size)


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


def _signature(word: str) -> str:
    arguments = f"uint8[:], int64, {word}[:, :], {word}[:], int64, uint8[:]"
    return (
        arguments
        + f", {word}[:], {word}[:], uint64[:], {word}[:], {word}[:], {word}[:]"
        + (", uint64[:]" * 2)
    )


#: The BLAKE2 tree kernels (:mod:`twocats.lanes.modes.kernels.blake2tree`), as
#: :func:`twocats.simd.family.ready` knows them.
FAMILY = family_of(
    "blake2tree",
    "twocats.lanes.modes.kernels.blake2tree",
    {"blake2sp_hash": _signature("uint32"), "blake2bp_hash": _signature("uint64")},
    _check,
    __file__,
)
