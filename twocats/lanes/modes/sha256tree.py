"""SHA-2 tree modes in lanes: j-lanes SHA-256, Intel's mh_sha256, and j-pointers.

Usage::

    from twocats.lanes.modes import sha256tree

    sha256tree.jlanes_sha256(data, j=16)                 # j in 4, 8, 16; IVs are parameters
    sha256tree.mh_sha256(data)                            # ISA-L multi-hash layout (16 segments)
    sha256tree.jpointers(data, j=8, hash_name="sha384")   # BIKE-style padding-aligned slices
    sha256tree.jpointers_messages([m0, m1, m2])           # H(H(m0) ‖ H(m1) ‖ H(m2))

The constructions are defined by :mod:`twocats.lanes.reference.sha256tree`.  The compiled
backends run the lanes (the j word-interleaved lanes, the 16 segments, the j slices) on the
project's SHA-256/SHA-512 lane kernels; the short root hash runs in ``hashlib`` when it uses the
standard IV and in the reference otherwise.  j-lanes with ``j=16`` fills one 512-bit register of
32-bit words and is the fast choice for a single long message on AVX-512.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

from twocats.exceptions import InvalidParametersError
from twocats.lanes.algorithm import Algorithm, each
from twocats.lanes.modes._common import as_data, check_bytes, check_messages, pack
from twocats.lanes.reference import sha256tree as ref
from twocats.simd.registry import resolve_backend

__all__ = [
    "ALGORITHMS",
    "SHA384_IV",
    "jlanes_sha256",
    "jpointers",
    "jpointers_messages",
    "mh_sha256",
]


def _sqrt_fraction_bits(p: int) -> int:
    """Return the first 64 bits of the fractional part of the square root of p."""
    return math.isqrt(p << 128) & ((1 << 64) - 1)


#: The SHA-384 IV: the first 64 fraction bits of the square roots of the 9th to 16th primes.
SHA384_IV = tuple(_sqrt_fraction_bits(p) for p in (23, 29, 31, 37, 41, 43, 47, 53))
_SHA512_IV = tuple(_sqrt_fraction_bits(p) for p in (2, 3, 5, 7, 11, 13, 17, 19))

# Hash name -> (kernel word bits, IV, digest size).
_POINTER_KERNELS: dict[str, tuple[int, tuple[int, ...], int]] = {
    "sha256": (32, ref.SHA256_IV, 32),
    "sha384": (64, SHA384_IV, 48),
    "sha512": (64, _SHA512_IV, 64),
}


@functools.cache
def _kernels() -> Any:
    """Import the SHA-2 tree drivers and give each its known-answer check (imports numpy and
    numba)."""
    from twocats.lanes.modes.kernels import sha256tree as drivers

    drivers.sha256_jlanes.checked_by(_jlanes_passes)
    drivers.sha256_mh.checked_by(_mh_passes)
    drivers.sha256_pointers.checked_by(partial(_pointers_passes, "sha256"))
    drivers.sha512_pointers.checked_by(partial(_pointers_passes, "sha512"))
    return drivers


def _jlanes_passes(backend: str) -> bool:
    """j-lanes SHA-256 of every width over a message that leaves the lanes unequal."""
    from twocats.lanes.known_answers import agrees, painted

    (data,) = painted(300)
    return all(agrees(jlanes_sha256, backend, data, j=j) for j in ref.JLANES_WIDTHS)


def _mh_passes(backend: str) -> bool:
    """mh_sha256 of nothing, of one whole round of segments and of a round and a part."""
    from twocats.lanes.known_answers import agrees, painted

    return all(agrees(mh_sha256, backend, data) for data in painted(0, 1024, 1500))


def _pointers_passes(hash_name: str, backend: str) -> bool:
    """j-pointers over messages at the blocks' edges, as many as the narrow kernel takes and
    more (the wide one)."""
    from twocats.lanes.known_answers import agrees, painted
    from twocats.lanes.modes.widths import SHA256_NARROW

    block = 64 if hash_name == "sha256" else 128
    messages = painted(0, 1, block - 9, block - 8, block, block + 1, 2 * block + 3, 5, 7, 9)
    return all(
        agrees(jpointers_messages, backend, batch, hash_name=hash_name)
        for batch in (messages[:SHA256_NARROW], messages)
    )


def _buffer(data: bytes) -> Any:
    """View ``data`` as a uint8 array (a one-byte dummy for empty input)."""
    return as_data(data)


def _root(leaves: bytes, root_iv: Sequence[int]) -> bytes:
    """SHA-256 of the joined leaf digests from ``root_iv`` (hashlib for the standard IV)."""
    if tuple(root_iv) == ref.SHA256_IV:
        return hashlib.sha256(leaves).digest()
    return ref.sha256_with_iv(leaves, root_iv)


def jlanes_sha256(
    data: bytes,
    *,
    j: int = 8,
    leaf_iv: Sequence[int] = ref.SHA256_IV,
    root_iv: Sequence[int] = ref.SHA256_IV,
    backend: str | None = None,
) -> bytes:
    """Return the j-lanes SHA-256 tree hash of ``data`` (j in 4, 8, 16; IVs of 8 words)."""
    data = check_bytes("data", data)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        return ref.jlanes_sha256(data, j, leaf_iv, root_iv)
    if j not in ref.JLANES_WIDTHS:
        raise InvalidParametersError(f"j must be one of {ref.JLANES_WIDTHS}")
    import numpy as np

    iv = _check_iv("leaf_iv", leaf_iv)
    _check_iv("root_iv", root_iv)
    out = np.zeros((j, 8), dtype=np.uint32)
    _kernels().sha256_jlanes.get(chosen)(_buffer(data), len(data), j, iv, out)
    return _root(out.astype(">u4").tobytes(), root_iv)


def _check_iv(name: str, iv: Sequence[int]) -> Any:
    """Return an IV as a uint32 array, or raise if it is not eight 32-bit words."""
    import numpy as np

    if len(iv) != 8 or any(not 0 <= v <= 0xFFFFFFFF for v in iv):
        raise InvalidParametersError(f"{name} must be 8 integers in [0, 2**32 - 1]")
    return np.array(iv, dtype=np.uint32)


def mh_sha256(data: bytes, *, backend: str | None = None) -> bytes:
    """Return Intel's multi-hash SHA-256 (ISA-L ``mh_sha256``) of ``data``."""
    data = check_bytes("data", data)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        return ref.mh_sha256(data)
    import numpy as np

    out = np.zeros((16, 8), dtype=np.uint32)
    _kernels().sha256_mh.get(chosen)(_buffer(data), len(data), out)
    # The root input is word-major: word i of segments 0..15, each little-endian.
    return hashlib.sha256(out.T.astype("<u4").tobytes()).digest()


def _leaf_digests(data: Any, starts: Any, lengths: Any, hash_name: str, backend: str) -> bytes:
    """Hash the given messages in lanes with ``hash_name``; return their digests joined."""
    import numpy as np

    bits, iv, size = _POINTER_KERNELS[hash_name]
    count = len(lengths)
    out = np.zeros((count, 8), dtype=f"uint{bits}")
    if count:
        kernel = getattr(_kernels(), f"sha{256 if bits == 32 else 512}_pointers").get(backend)
        kernel(data, starts, lengths, np.array(iv, dtype=f"uint{bits}"), out)
    digests = out.astype(f">u{bits // 8}")
    return b"".join(row.tobytes()[:size] for row in digests)


def jpointers(
    data: bytes, *, j: int = 8, hash_name: str = "sha256", backend: str | None = None
) -> bytes:
    """Return j-pointers over j padding-aligned slices of ``data`` plus its tail (BIKE form)."""
    data = check_bytes("data", data)
    chosen = resolve_backend(backend)
    ls = ref.jpointers_slice_length(len(data), j, hash_name)
    if chosen == "reference":
        return ref.jpointers(data, j, hash_name)
    import numpy as np

    starts = np.arange(j, dtype=np.uint64) * np.uint64(ls)
    lengths = np.full(j, ls, dtype=np.uint64)
    leaves = _leaf_digests(_buffer(data), starts, lengths, hash_name, chosen)
    return hashlib.new(hash_name, leaves + data[j * ls :]).digest()


def jpointers_messages(
    messages: Sequence[bytes], *, hash_name: str = "sha256", backend: str | None = None
) -> bytes:
    """Return H(H(m_0) ‖ … ‖ H(m_{j-1})): j separate messages hashed in lanes, then the root."""
    msgs = check_messages(messages)
    chosen = resolve_backend(backend)
    if hash_name not in _POINTER_KERNELS:
        allowed = ", ".join(_POINTER_KERNELS)
        raise InvalidParametersError(f"hash_name must be one of: {allowed}")
    if chosen == "reference":
        return ref.jpointers_messages(msgs, hash_name)
    data, starts, lengths = pack(msgs)
    return hashlib.new(hash_name, _leaf_digests(data, starts, lengths, hash_name, chosen)).digest()


#: The registry's rows (:mod:`twocats.lanes.registry`).
ALGORITHMS = (
    Algorithm(
        "mh-sha256",
        32,
        each(mh_sha256),
        None,
        "Intel multi-hash SHA-256 (ISA-L mh_sha256), 16 segments",
    ),
    Algorithm(
        "jlanes-sha256-4",
        32,
        each(jlanes_sha256, j=4),
        None,
        "j-lanes SHA-256 tree, j = 4, standard IVs",
    ),
    Algorithm(
        "jlanes-sha256-8",
        32,
        each(jlanes_sha256, j=8),
        None,
        "j-lanes SHA-256 tree, j = 8, standard IVs",
    ),
    Algorithm(
        "jlanes-sha256-16",
        32,
        each(jlanes_sha256, j=16),
        None,
        "j-lanes SHA-256 tree, j = 16, standard IVs",
    ),
)
