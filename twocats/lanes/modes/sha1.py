"""Multi-buffer SHA-1, for legacy integrity checks only.

SHA-1 is broken for collision resistance.  It is offered so that old manifests and checksum files
can be verified quickly; it is never used for passwords or for anything new.  Usage::

    from twocats.lanes.modes import sha1

    sha1.sha1_many([b"a", b"b" * 5000])   # list of 20-byte digests, equal to hashlib.sha1

``backend`` is "simd", "scalar" or "reference".  The compiled kernel runs 8 messages in lock-step
(one per 32-bit lane) and groups messages by length so that the lanes of a group finish together.
"""

from __future__ import annotations

from collections.abc import Sequence

from twocats.lanes.algorithm import Algorithm
from twocats.lanes.modes._common import check_messages, chunks, unpack
from twocats.lanes.reference import sha1 as ref
from twocats.simd.registry import resolve_backend

__all__ = ["ALGORITHMS", "sha1_many"]


def sha1_many(messages: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
    """Return the SHA-1 digest of each message (legacy integrity checks only)."""
    msgs = check_messages(messages)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        return ref.sha1_many(msgs)
    import numpy as np

    from twocats.lanes.modes.kernels import sha1 as drivers

    out = np.zeros((len(msgs), 20), dtype=np.uint8)
    kernel = drivers.sha1_many_x8.get(chosen)
    for first, end, data, starts, lengths in chunks(msgs):
        order = np.argsort(lengths, kind="stable")[::-1].astype(np.uint64)
        kernel(data, starts, lengths, order, out[first:end])
    return unpack(out)


#: The registry's row (:mod:`twocats.lanes.registry`).
ALGORITHMS = (
    Algorithm(
        "sha1",
        20,
        sha1_many,
        "sha1",
        "SHA-1, 8 messages per lane group",
        "78695d520a0bc11e42860bb32ded5f72bcbee13e4aa18b7228743cbd768eda8b",
        legacy=True,
    ),
)
