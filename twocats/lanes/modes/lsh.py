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
from typing import Any

from twocats.lanes.modes._common import (
    as_data,
    check_bytes,
    check_int,
    check_messages,
    chunks,
    unpack,
)
from twocats.lanes.reference import lsh as ref
from twocats.simd.registry import resolve_backend

__all__ = ["lsh256", "lsh256_many", "lsh512", "lsh512_many"]


def _kernels() -> Any:
    """Import the LSH drivers (this imports numpy and numba)."""
    from twocats.lanes.modes import drivers

    return drivers


def _iv(v: ref.LshVariant, digest_size: int) -> Any:
    """Return the IV of the given digest size as a numpy array of words."""
    import numpy as np

    return np.array(ref.initial_value(v, 8 * digest_size), dtype=f"uint{v.word_bits}")


def _one(v: ref.LshVariant, data: bytes, digest_size: int, backend: str | None) -> bytes:
    """Hash one message with the single-message kernel of the chosen backend."""
    data = check_bytes("data", data)
    check_int("digest_size", digest_size, 1, v.max_digest)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        return ref.lsh256(data, digest_size) if v is ref.LSH256 else ref.lsh512(data, digest_size)
    import numpy as np

    out = np.zeros(digest_size, dtype=np.uint8)
    kernel = getattr(_kernels(), f"{v.name}_one").get(chosen)
    kernel(as_data(data), len(data), _iv(v, digest_size), out)
    return out.tobytes()


def _many(
    v: ref.LshVariant, messages: Sequence[bytes], digest_size: int, backend: str | None
) -> list[bytes]:
    """Hash many messages, 8 per group in lock-step, longest first."""
    msgs = check_messages(messages)
    check_int("digest_size", digest_size, 1, v.max_digest)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        func = ref.lsh256 if v is ref.LSH256 else ref.lsh512
        return [func(m, digest_size) for m in msgs]
    import numpy as np

    out = np.zeros((len(msgs), digest_size), dtype=np.uint8)
    if msgs:
        kernel = getattr(_kernels(), f"{v.name}_many_x8").get(chosen)
        iv = _iv(v, digest_size)
        for first, end, data, starts, lengths in chunks(msgs):
            order = np.argsort(lengths, kind="stable")[::-1].astype(np.uint64)
            kernel(data, starts, lengths, order, iv, out[first:end])
    return unpack(out)


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
