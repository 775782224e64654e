"""LSH-256 and LSH-512 (KS X 3262), single-message and multi-message (one message per lane).

Usage::

    from twocats.lanes.modes import lsh

    lsh.lsh256(b"abc")                         # LSH-256-256, 32 bytes
    lsh.lsh512(b"abc", digest_size=48)         # LSH-512-384
    lsh.lsh256_many([b"a", b"b"], digest_size=28)

Every output length from 1 to 32 (LSH-256) or 64 (LSH-512) bytes is supported: the IV depends on
the digest length (it is the compression of a zero block from (w, n, 0, ...)).  ``backend`` is
"simd", "scalar" or "reference" as everywhere in twocats.  The multi-message kernels advance 8
chaining values in lock-step; the single-message kernel keeps one state in locals.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from twocats.lanes.algorithm import Algorithm
from twocats.lanes.located import locate
from twocats.lanes.modes._common import (
    as_data,
    check_bytes,
    check_int,
    check_messages,
    unpack,
)
from twocats.lanes.modes.widths import LSH_WIDTH
from twocats.lanes.reference import lsh as ref
from twocats.lanes.reference import painted
from twocats.simd.family import KernelKey, family_of, ready
from twocats.simd.registry import resolve_backend

__all__ = ["ALGORITHMS", "FAMILY", "lsh256", "lsh256_many", "lsh512", "lsh512_many"]


def _kernel(v: ref.LshVariant, shape: str, backend: str) -> Any:
    """The checked LSH kernel of variant ``v`` and ``shape`` ("many_x8" or "one")."""
    return ready(FAMILY, KernelKey(f"{v.name}_{shape}", backend))


def _variant(key: KernelKey) -> ref.LshVariant:
    return ref.LSH256 if key.kernel.startswith("lsh256") else ref.LSH512


def _check(kernel: Any, key: KernelKey) -> bool:
    """An LSH kernel's known-answer check: messages at the blocks' edges (more of them than
    lanes for the lock-step kernel), their longest digests the reference's."""
    v = _variant(key)
    block = v.block_bytes
    func = ref.lsh256 if v is ref.LSH256 else ref.lsh512
    if key.kernel.endswith("many_x8"):
        messages = painted(0, 1, 3, 5, 7, 11, block - 1, block, block + 1, 2 * block + 5)
        expected = [func(m, v.max_digest) for m in messages]
        return _lanes(kernel, v, messages, v.max_digest) == expected
    return all(
        _single(kernel, v, data, v.max_digest) == func(data, v.max_digest)
        for data in painted(0, block, 2 * block + 1)
    )


def _iv(v: ref.LshVariant, digest_size: int) -> Any:
    """Return the IV of the given digest size as a numpy array of words."""
    import numpy as np

    return np.array(ref.initial_value(v, 8 * digest_size), dtype=f"uint{v.word_bits}")


def _single(kernel: Any, v: ref.LshVariant, data: bytes, digest_size: int) -> bytes:
    """One message's digest by the single-message ``kernel``."""
    import numpy as np

    word = f"uint{v.word_bits}"
    out = np.zeros(digest_size, dtype=np.uint8)
    scratch = np.zeros(16, word), np.zeros(32, word)
    kernel(as_data(data), len(data), _iv(v, digest_size), out, *scratch)
    return out.tobytes()


def _lanes(kernel: Any, v: ref.LshVariant, msgs: list[bytes], digest_size: int) -> list[bytes]:
    """The messages' digests by the lock-step ``kernel`` (at least one message)."""
    import numpy as np

    word, width = f"uint{v.word_bits}", LSH_WIDTH
    out = np.zeros((len(msgs), digest_size), dtype=np.uint8)
    addresses, lengths, _keep = locate(msgs)
    # Longest first, so that the lanes stay busy to the end; ``_keep`` holds every message
    # the kernel reads until it returns.
    order = np.argsort(lengths, kind="stable")[::-1].astype(np.uint64)
    scratch = [np.zeros(size * width, word) for size in (16, 32, 16, 16)]
    scratch += [np.zeros(width, np.uint64) for _ in range(3)]
    kernel(addresses, lengths, order, _iv(v, digest_size), out, *scratch)
    return unpack(out)


def _one(v: ref.LshVariant, data: bytes, digest_size: int, backend: str | None) -> bytes:
    """Hash one message with the single-message kernel of the chosen backend."""
    data = check_bytes("data", data)
    check_int("digest_size", digest_size, 1, v.max_digest)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        return ref.lsh256(data, digest_size) if v is ref.LSH256 else ref.lsh512(data, digest_size)
    return _single(_kernel(v, "one", chosen), v, data, digest_size)


def _many(
    v: ref.LshVariant, messages: Sequence[bytes], digest_size: int, backend: str | None
) -> list[bytes]:
    """Hash many messages, 8 at a time in lock-step, longest first, a lane refilled as it ends."""
    msgs = check_messages(messages)
    check_int("digest_size", digest_size, 1, v.max_digest)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        func = ref.lsh256 if v is ref.LSH256 else ref.lsh512
        return [func(m, digest_size) for m in msgs]
    if not msgs:
        return []
    return _lanes(_kernel(v, "many_x8", chosen), v, msgs, digest_size)


def lsh256(data: bytes, *, digest_size: int = 32, backend: str | None = None) -> bytes:
    """Return LSH-256-(8*digest_size) of ``data`` (digest_size 1..32)."""
    return _one(ref.LSH256, data, digest_size, backend)


def lsh512(data: bytes, *, digest_size: int = 64, backend: str | None = None) -> bytes:
    """Return LSH-512-(8*digest_size) of ``data`` (digest_size 1..64)."""
    return _one(ref.LSH512, data, digest_size, backend)


def lsh256_many(
    messages: Sequence[bytes], *, digest_size: int = 32, backend: str | None = None
) -> list[bytes]:
    """Return LSH-256-(8*digest_size) of each message, 8 messages in lock-step."""
    return _many(ref.LSH256, messages, digest_size, backend)


def lsh512_many(
    messages: Sequence[bytes], *, digest_size: int = 64, backend: str | None = None
) -> list[bytes]:
    """Return LSH-512-(8*digest_size) of each message, 8 messages in lock-step."""
    return _many(ref.LSH512, messages, digest_size, backend)


#: The registry's rows (:mod:`twocats.lanes.registry`).
ALGORITHMS = (
    Algorithm(
        "lsh-256-224",
        28,
        partial(lsh256_many, digest_size=28),
        None,
        "LSH-256-224 (KS X 3262), 8 messages in lanes",
    ),
    Algorithm(
        "lsh-256-256",
        32,
        partial(lsh256_many, digest_size=32),
        None,
        "LSH-256-256 (KS X 3262), 8 messages in lanes",
    ),
    Algorithm(
        "lsh-512-224",
        28,
        partial(lsh512_many, digest_size=28),
        None,
        "LSH-512-224 (KS X 3262), 8 messages in lanes",
    ),
    Algorithm(
        "lsh-512-256",
        32,
        partial(lsh512_many, digest_size=32),
        None,
        "LSH-512-256 (KS X 3262), 8 messages in lanes",
    ),
    Algorithm(
        "lsh-512-384",
        48,
        partial(lsh512_many, digest_size=48),
        None,
        "LSH-512-384 (KS X 3262), 8 messages in lanes",
    ),
    Algorithm(
        "lsh-512-512",
        64,
        partial(lsh512_many, digest_size=64),
        None,
        "LSH-512-512 (KS X 3262), 8 messages in lanes",
    ),
)


def _signatures(word: str) -> dict[str, str]:
    many = f"uint64[:], int64[:], uint64[:], {word}[:], uint8[:, :]" + f", {word}[:]" * 4
    one = f"uint8[:], int64, {word}[:], uint8[:], {word}[:], {word}[:]"
    return {"many_x8": many + ", uint64[:]" * 3, "one": one}


#: The LSH kernels (:mod:`twocats.lanes.modes.kernels.lsh`), as
#: :func:`twocats.simd.family.ready` knows them.
FAMILY = family_of(
    "lsh",
    "twocats.lanes.modes.kernels.lsh",
    {
        f"{v.name}_{shape}": signature
        for v in (ref.LSH256, ref.LSH512)
        for shape, signature in _signatures(f"uint{v.word_bits}").items()
    },
    _check,
    __file__,
)
