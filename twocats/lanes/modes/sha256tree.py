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

import hashlib
import math
from collections.abc import Sequence
from typing import Any

from twocats.exceptions import InvalidParametersError
from twocats.lanes.algorithm import Algorithm, each
from twocats.lanes.modes._common import as_data, check_bytes, check_messages, pack
from twocats.lanes.modes.widths import SHA256_NARROW
from twocats.lanes.reference import painted
from twocats.lanes.reference import sha256tree as ref
from twocats.simd.family import KernelKey, family_of, ready
from twocats.simd.registry import resolve_backend

__all__ = [
    "ALGORITHMS",
    "FAMILY",
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


def _kernel(name: str, backend: str) -> Any:
    """The checked SHA-2 tree kernel ``name`` of :data:`FAMILY` on ``backend``."""
    return ready(FAMILY, KernelKey(name, backend))


def _check(kernel: Any, key: KernelKey) -> bool:
    """A SHA-2 tree kernel's known-answer check, the reference deciding: j-lanes of every width
    over a message that leaves the lanes unequal; mh_sha256 of nothing, of one whole round of
    segments and of a round and a part; j-pointers over messages at the blocks' edges, as many
    as the narrow kernel takes and more (the wide one)."""
    import numpy as np

    if key.kernel == "sha256_jlanes":
        (data,) = painted(300)
        iv = np.array(ref.SHA256_IV, dtype=np.uint32)
        return all(
            _jlanes(kernel, data, j, iv, ref.SHA256_IV) == ref.jlanes_sha256(data, j)
            for j in ref.JLANES_WIDTHS
        )
    if key.kernel == "sha256_mh":
        return all(_mh(kernel, data) == ref.mh_sha256(data) for data in painted(0, 1024, 1500))
    hash_name = key.kernel.removesuffix("_pointers")
    block = 64 if hash_name == "sha256" else 128
    messages = painted(0, 1, block - 9, block - 8, block, block + 1, 2 * block + 3, 5, 7, 9)
    return all(
        hashlib.new(hash_name, _leaf_digests(kernel, *pack(batch), hash_name)).digest()
        == ref.jpointers_messages(batch, hash_name)
        for batch in (messages[:SHA256_NARROW], messages)
    )


def _scratch(width: int, word: str) -> list[Any]:
    """The zeroed state of ``width`` SHA-2 lanes: H (8, width), M (16, width), T, F."""
    import numpy as np

    shapes = (((8, width), word), ((16, width), word), (width, np.uint64), (width, word))
    return [np.zeros(shape, kind) for shape, kind in shapes]


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

    iv = _check_iv("leaf_iv", leaf_iv)
    _check_iv("root_iv", root_iv)
    return _jlanes(_kernel("sha256_jlanes", chosen), data, j, iv, root_iv)


def _jlanes(kernel: Any, data: bytes, j: int, iv: Any, root_iv: Sequence[int]) -> bytes:
    """j-lanes SHA-256 of ``data`` by ``kernel``, the leaves from the words ``iv``."""
    import numpy as np

    # Up to SHA256_NARROW lanes run on the narrow lane kernel (extra lanes idle).
    width = SHA256_NARROW if j <= SHA256_NARROW else j
    out = np.zeros((j, 8), dtype=np.uint32)
    lanes = [np.zeros(j, np.uint64), np.zeros(j, np.uint64)]
    kernel(_buffer(data), len(data), j, iv, out, *_scratch(width, "uint32"), *lanes)
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
    return _mh(_kernel("sha256_mh", chosen), data)


def _mh(kernel: Any, data: bytes) -> bytes:
    """mh_sha256 of ``data`` by ``kernel``."""
    import numpy as np

    out = np.zeros((16, 8), dtype=np.uint32)
    kernel(_buffer(data), len(data), out, *_scratch(16, "uint32"))
    # The root input is word-major: word i of segments 0..15, each little-endian.
    return hashlib.sha256(out.T.astype("<u4").tobytes()).digest()


def _pointers(hash_name: str, backend: str) -> Any:
    """The checked j-pointers kernel of ``hash_name``'s word size."""
    return _kernel("sha256_pointers" if hash_name == "sha256" else "sha512_pointers", backend)


def _leaf_digests(kernel: Any, data: Any, starts: Any, lengths: Any, hash_name: str) -> bytes:
    """Hash the given messages in lanes with ``hash_name`` by ``kernel``; return their digests
    joined."""
    import numpy as np

    bits, iv, size = _POINTER_KERNELS[hash_name]
    count = len(lengths)
    word = f"uint{bits}"
    out = np.zeros((count, 8), dtype=word)
    if count:
        # SHA-256 runs up to SHA256_NARROW messages on its narrow lane kernel.
        narrow = SHA256_NARROW if bits == 32 else 0
        width = narrow if count <= narrow else count
        lanes = [*_scratch(width, word), np.zeros(count, np.uint64)]
        kernel(data, starts, lengths, np.array(iv, dtype=word), out, *lanes)
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
    leaves = _leaf_digests(_pointers(hash_name, chosen), _buffer(data), starts, lengths, hash_name)
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
    leaves = _leaf_digests(_pointers(hash_name, chosen), data, starts, lengths, hash_name)
    return hashlib.new(hash_name, leaves).digest()


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


def _pointers_signature(word: str) -> str:
    arguments = f"uint8[:], uint64[:], uint64[:], {word}[:], {word}[:, :]"
    return f"{arguments}, {word}[:, :], {word}[:, :], uint64[:], {word}[:], uint64[:]"


#: The SHA-2 tree kernels (:mod:`twocats.lanes.modes.kernels.sha256tree`), as
#: :func:`twocats.simd.family.ready` knows them.
FAMILY = family_of(
    "sha256tree",
    "twocats.lanes.modes.kernels.sha256tree",
    {
        "sha256_jlanes": "uint8[:], int64, int64, uint32[:], uint32[:, :], uint32[:, :], "
        "uint32[:, :], uint64[:], uint32[:], uint64[:], uint64[:]",
        "sha256_mh": "uint8[:], int64, uint32[:, :], uint32[:, :], uint32[:, :], uint64[:], "
        "uint32[:]",
        "sha256_pointers": _pointers_signature("uint32"),
        "sha512_pointers": _pointers_signature("uint64"),
    },
    _check,
    __file__,
)
