"""Keccak in lanes: multi-message SHA-3 and SHAKE, TurboSHAKE, KangarooTwelve and ParallelHash.

Usage::

    from twocats.lanes.modes import keccak

    keccak.sha3_256_many([b"a", b"b" * 5000])          # list of 32-byte digests (= hashlib)
    keccak.shake128_many(messages, 100)                  # 100 output bytes per message
    keccak.kt128(data, 32, custom=b"")                   # KangarooTwelve (RFC 9861)
    keccak.parallelhash256(data, 8192, 64, custom=b"")   # SP 800-185
    keccak.keccak_p1600_x8(states)                       # Keccak-f[1600] on a (25, 8) uint64 array

Every function takes ``backend``: "simd" (default, or ``$TWOCATS_BACKEND``), "scalar" (the same
kernels compiled with the vectorizers off) or "reference" (plain Python).  The compiled path
advances 4 or 8 Keccak states in lock-step (uint64 lanes, state layout (25, K): lane i of state k at
row i, column k); messages are grouped by length so that the states of a group finish together, and
KangarooTwelve's chunks and ParallelHash's blocks are exactly such equal-length groups.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from twocats._signature import parameters_of
from twocats.exceptions import InvalidParametersError
from twocats.lanes.algorithm import Algorithm, each
from twocats.lanes.located import locate
from twocats.lanes.modes._common import (
    as_data,
    check_bytes,
    check_int,
    check_messages,
    unpack,
)
from twocats.lanes.reference import keccak as ref
from twocats.lanes.reference import painted
from twocats.simd.family import KernelKey, family_of, ready
from twocats.simd.registry import resolve_backend

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ALGORITHMS",
    "FAMILY",
    "MAX_OUTPUT",
    "cshake128",
    "cshake256",
    "keccak_p1600_x4",
    "keccak_p1600_x8",
    "kt128",
    "kt256",
    "parallelhash128",
    "parallelhash256",
    "sha3_224_many",
    "sha3_256_many",
    "sha3_384_many",
    "sha3_512_many",
    "shake128_many",
    "shake256_many",
    "sponge_many",
    "turboshake128",
    "turboshake256",
]

#: The largest output length in bytes accepted by the extendable-output functions.
MAX_OUTPUT = 1 << 30


# The sponge's arguments: the messages' addresses, lengths and order, the rate, first round and
# domain byte, the output rows, then its scratch: the states and four words of bookkeeping each.
_SPONGE = "uint64[:], int64[:], uint64[:], int64, int64, int64, uint8[:, :]" + ", uint64[:]" * 5


def _kernel(name: str, backend: str) -> Any:
    """The checked Keccak kernel ``name`` of :data:`FAMILY` on the "scalar" or "simd" backend."""
    return ready(FAMILY, KernelKey(name, backend))


def _check(kernel: Any, key: KernelKey) -> bool:
    """A Keccak kernel's known-answer check, the reference deciding.

    A sponge hashes messages at the rates' edges (as many as four states take, and more for
    eight) as SHA3-256 and as a 12-round SHAKE128 squeezing two blocks; a permutation runs
    Keccak-f[1600] and its 12 last rounds.
    """
    import numpy as np

    width = 4 if key.kernel.endswith("x4") else 8
    if key.kernel.startswith("keccak_sponge"):
        messages = painted(0, 1, 135, 136, 137, 167, 168, 169, 300)[: 4 if width == 4 else 9]
        addresses, lengths, _keep = locate(messages)
        return all(
            unpack(_sponge(kernel, width, addresses, lengths, rate, domain, size, rounds))
            == [ref.sponge(m, rate, domain, size, rounds) for m in messages]
            for rate, domain, size, rounds in ((136, 0x06, 32, 24), (168, 0x1F, 200, 12))
        )
    words = np.arange(25 * width, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for rounds in (24, 12):
        states, expected = words.reshape(25, width).copy(), words.reshape(25, width).copy()
        kernel(states.reshape(-1), 24 - rounds)
        _permute(expected, width, rounds, "reference")
        if not np.array_equal(states, expected):
            return False
    return True


def _sponge(
    kernel: Any,
    width: int,
    addresses: npt.NDArray[np.uint64],
    lengths: npt.NDArray[np.int64],
    rate: int,
    domain: int,
    length: int,
    rounds: int,
) -> npt.NDArray[np.uint8]:
    """Run the compiled sponge ``kernel`` of ``width`` states on the messages of ``lengths[i]``
    bytes at ``addresses[i]`` (which the caller keeps alive); return a (messages, length) uint8
    array."""
    import numpy as np

    count = len(lengths)
    out = np.zeros((count, length), dtype=np.uint8)
    if count == 0 or length == 0:
        return out
    # Longest messages first, so that the states stay busy to the end.
    order = np.argsort(lengths, kind="stable")[::-1].astype(np.uint64)
    scratch = [np.zeros(25 * width, np.uint64), *(np.zeros(width, np.uint64) for _ in range(4))]
    kernel(addresses, lengths, order, rate, 24 - rounds, domain, out, *scratch)
    return out


def _compiled_sponge(
    addresses: npt.NDArray[np.uint64],
    lengths: npt.NDArray[np.int64],
    rate: int,
    domain: int,
    length: int,
    rounds: int,
    backend: str,
) -> npt.NDArray[np.uint8]:
    """The sponge of :func:`_sponge` on 4 states for up to 4 messages, else on 8."""
    width = 4 if len(lengths) <= 4 else 8
    kernel = _kernel(f"keccak_sponge_x{width}", backend)
    return _sponge(kernel, width, addresses, lengths, rate, domain, length, rounds)


def sponge_many(
    messages: Sequence[bytes],
    rate: int,
    domain: int,
    length: int,
    *,
    rounds: int = 24,
    backend: str | None = None,
) -> list[bytes]:
    """Return ``length`` output bytes of the Keccak sponge for each message.

    ``rate`` is in bytes (a multiple of 8 below 200), ``domain`` the first padding byte (0x06 SHA-3,
    0x1F SHAKE, 0x04 cSHAKE, D for TurboSHAKE) and ``rounds`` 24 (Keccak-f) or 12 (TurboSHAKE).
    """
    msgs = check_messages(messages)
    if rate % 8 or not 8 <= rate <= 192:
        raise InvalidParametersError("rate must be a multiple of 8 from 8 to 192")
    check_int("domain", domain, 1, 0xFF)
    check_int("length", length, 0, MAX_OUTPUT)
    check_int("rounds", rounds, 1, 24)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        return [ref.sponge(m, rate, domain, length, rounds) for m in msgs]
    addresses, lengths, _keep = locate(msgs)
    # ``_keep`` holds every message the kernel reads until it returns.
    return unpack(_compiled_sponge(addresses, lengths, rate, domain, length, rounds, chosen))


def sha3_224_many(messages: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
    """Return SHA3-224 of each message."""
    return sponge_many(messages, 144, 0x06, 28, backend=backend)


def sha3_256_many(messages: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
    """Return SHA3-256 of each message."""
    return sponge_many(messages, 136, 0x06, 32, backend=backend)


def sha3_384_many(messages: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
    """Return SHA3-384 of each message."""
    return sponge_many(messages, 104, 0x06, 48, backend=backend)


def sha3_512_many(messages: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
    """Return SHA3-512 of each message."""
    return sponge_many(messages, 72, 0x06, 64, backend=backend)


def shake128_many(
    messages: Sequence[bytes], length: int, *, backend: str | None = None
) -> list[bytes]:
    """Return ``length`` bytes of SHAKE128 of each message."""
    return sponge_many(messages, ref.RATE_SHAKE128, 0x1F, length, backend=backend)


def shake256_many(
    messages: Sequence[bytes], length: int, *, backend: str | None = None
) -> list[bytes]:
    """Return ``length`` bytes of SHAKE256 of each message."""
    return sponge_many(messages, ref.RATE_SHAKE256, 0x1F, length, backend=backend)


def _one(data: bytes, rate: int, domain: int, length: int, rounds: int, backend: str) -> bytes:
    """Run one sponge on the chosen backend (the compiled path uses the 4-state kernel)."""
    if backend == "reference":
        return ref.sponge(data, rate, domain, length, rounds)
    return sponge_many([data], rate, domain, length, rounds=rounds, backend=backend)[0]


def _turboshake(data: bytes, rate: int, length: int, domain: int, backend: str | None) -> bytes:
    """TurboSHAKE of one message at ``rate`` (12 rounds), its arguments checked first."""
    check_int("domain", domain, 0x01, 0x7F)
    chosen = resolve_backend(backend)
    return _one(check_bytes("data", data), rate, domain, length, 12, chosen)


def turboshake128(
    data: bytes, length: int, *, domain: int = 0x1F, backend: str | None = None
) -> bytes:
    """Return ``length`` bytes of TurboSHAKE128(data, D=domain) (RFC 9861), D in 0x01..0x7F."""
    return _turboshake(data, ref.RATE_SHAKE128, length, domain, backend)


def turboshake256(
    data: bytes, length: int, *, domain: int = 0x1F, backend: str | None = None
) -> bytes:
    """Return ``length`` bytes of TurboSHAKE256(data, D=domain) (RFC 9861), D in 0x01..0x7F."""
    return _turboshake(data, ref.RATE_SHAKE256, length, domain, backend)


def _cshake_input(data: bytes, rate: int, name: bytes, custom: bytes) -> tuple[bytes, int]:
    """Return the sponge input and domain byte of cSHAKE(data, N=name, S=custom)."""
    if not name and not custom:
        return data, 0x1F
    encoded = ref.left_encode(8 * len(name)) + name + ref.left_encode(8 * len(custom)) + custom
    prefix = ref.left_encode(rate) + encoded
    prefix += bytes(-len(prefix) % rate)
    return prefix + data, 0x04


def _cshake(
    data: bytes, rate: int, length: int, name: bytes, custom: bytes, backend: str | None
) -> bytes:
    """cSHAKE of one message at ``rate`` (24 rounds), its arguments checked first."""
    chosen = resolve_backend(backend)
    message, domain = _cshake_input(
        check_bytes("data", data), rate, check_bytes("name", name), check_bytes("custom", custom)
    )
    return _one(message, rate, domain, check_int("length", length, 0, MAX_OUTPUT), 24, chosen)


def cshake128(
    data: bytes, length: int, *, name: bytes = b"", custom: bytes = b"", backend: str | None = None
) -> bytes:
    """Return ``length`` bytes of cSHAKE128(data, L, N=name, S=custom) (SP 800-185)."""
    return _cshake(data, ref.RATE_SHAKE128, length, name, custom, backend)


def cshake256(
    data: bytes, length: int, *, name: bytes = b"", custom: bytes = b"", backend: str | None = None
) -> bytes:
    """Return ``length`` bytes of cSHAKE256(data, L, N=name, S=custom) (SP 800-185)."""
    return _cshake(data, ref.RATE_SHAKE256, length, name, custom, backend)


def _leaves(
    data: bytes | memoryview,
    size: int,
    rate: int,
    domain: int,
    length: int,
    rounds: int,
    backend: str,
) -> bytes:
    """Hash the consecutive ``size``-byte slices of ``data`` as separate sponges; join outputs."""
    import numpy as np

    count = -(-len(data) // size)
    if count == 0:
        return b""
    buffer = as_data(data)
    starts = np.arange(count, dtype=np.int64) * size
    lengths = np.minimum(len(data) - starts, size).astype(np.int64)
    addresses = starts.astype(np.uint64) + np.uint64(buffer.ctypes.data)
    out = _compiled_sponge(addresses, lengths, rate, domain, length, rounds, backend)
    return out.tobytes()


def _kt(data: bytes, custom: bytes, length: int, rate: int, cv: int, backend: str | None) -> bytes:
    """KangarooTwelve with leaves of ``cv`` bytes, the chunks hashed as parallel sponges.

    S = data ‖ custom ‖ length_encode(|custom|) is never built whole: the chunks that lie inside
    ``data`` are hashed from it in place, and only the last chunks, which reach into the suffix,
    are copied.
    """
    chosen = resolve_backend(backend)
    check_int("length", length, 0, MAX_OUTPUT)
    data = check_bytes("data", data)
    custom = check_bytes("custom", custom)
    if chosen == "reference":
        return ref.kt128(data, length, custom) if cv == 32 else ref.kt256(data, length, custom)
    suffix = custom + ref.length_encode(len(custom))
    chunk = ref.KT_CHUNK
    if len(data) + len(suffix) <= chunk:
        return _one(data + suffix, rate, 0x07, length, 12, chosen)
    if len(data) >= chunk:
        # Chunks 1 .. inside-1 lie wholly in data; S continues at byte inside * chunk.
        inside = len(data) // chunk
        first = data[:chunk]
        body = memoryview(data)[chunk : inside * chunk]
        cvs = _leaves(body, chunk, rate, 0x0B, cv, 12, chosen)
        rest = data[inside * chunk :] + suffix
    else:
        whole = data + suffix
        first, cvs, rest = whole[:chunk], b"", whole[chunk:]
    cvs += _leaves(rest, chunk, rate, 0x0B, cv, 12, chosen)
    count = len(cvs) // cv
    node = ref.kt_final_node(first, [cvs[i * cv : (i + 1) * cv] for i in range(count)])
    return _one(node, rate, 0x06, length, 12, chosen)


def kt128(data: bytes, length: int, *, custom: bytes = b"", backend: str | None = None) -> bytes:
    """Return ``length`` bytes of KT128(data, custom) (KangarooTwelve, RFC 9861)."""
    return _kt(data, custom, length, ref.RATE_SHAKE128, 32, backend)


def kt256(data: bytes, length: int, *, custom: bytes = b"", backend: str | None = None) -> bytes:
    """Return ``length`` bytes of KT256(data, custom) (RFC 9861)."""
    return _kt(data, custom, length, ref.RATE_SHAKE256, 64, backend)


def _parallelhash(
    security: int,
    data: bytes,
    block_size: int,
    length: int,
    *,
    custom: bytes,
    xof: bool,
    backend: str | None,
) -> bytes:
    """ParallelHash (SP 800-185 §6) with its leaves hashed as parallel SHAKE sponges."""
    chosen = resolve_backend(backend)
    data = check_bytes("data", data)
    custom = check_bytes("custom", custom)
    check_int("block_size", block_size, 1, MAX_OUTPUT)
    check_int("length", length, 0, MAX_OUTPUT)
    if chosen == "reference":
        func = ref.parallelhash128 if security == 128 else ref.parallelhash256
        return func(data, block_size, length, custom, xof)
    rate = ref.RATE_SHAKE128 if security == 128 else ref.RATE_SHAKE256
    count = -(-len(data) // block_size)
    leaves = _leaves(data, block_size, rate, 0x1F, security // 4, 24, chosen) if count else b""
    z = ref.left_encode(block_size) + leaves + ref.right_encode(count)
    z += ref.right_encode(0 if xof else 8 * length)
    message, domain = _cshake_input(z, rate, b"ParallelHash", custom)
    return _one(message, rate, domain, length, 24, chosen)


def parallelhash128(
    data: bytes,
    block_size: int,
    length: int,
    *,
    custom: bytes = b"",
    xof: bool = False,
    backend: str | None = None,
) -> bytes:
    """Return ParallelHash128(data, B=block_size, L=8*length, S=custom), or the XOF variant."""
    return _parallelhash(128, data, block_size, length, custom=custom, xof=xof, backend=backend)


@parameters_of(parallelhash128)
def parallelhash256(data: bytes, block_size: int, length: int, **options: Any) -> bytes:
    """Return ParallelHash256(data, B=block_size, L=8*length, S=custom), or the XOF variant."""
    return _parallelhash(256, data, block_size, length, **options)


def _permute(states: npt.NDArray[np.uint64], width: int, rounds: int, backend: str | None) -> None:
    """Apply Keccak-p[1600, rounds] in place to every column of a (25, width) uint64 array."""
    import numpy as np

    if (
        not isinstance(states, np.ndarray)
        or states.dtype != np.uint64
        or states.shape != (25, width)
        or not states.flags.c_contiguous
    ):
        raise InvalidParametersError(f"states must be a C-contiguous (25, {width}) uint64 array")
    check_int("rounds", rounds, 1, 24)
    chosen = resolve_backend(backend)
    if chosen == "reference":
        for k in range(width):
            column = [int(v) for v in states[:, k]]
            ref.keccak_p1600(column, rounds)
            states[:, k] = np.array(column, dtype=np.uint64)
        return
    _kernel(f"keccak_x{width}", chosen)(states.reshape(-1), 24 - rounds)


def keccak_p1600_x4(
    states: npt.NDArray[np.uint64], *, rounds: int = 24, backend: str | None = None
) -> None:
    """Apply Keccak-p[1600, rounds] in place to the 4 states of a (25, 4) uint64 array."""
    _permute(states, 4, rounds, backend)


def keccak_p1600_x8(
    states: npt.NDArray[np.uint64], *, rounds: int = 24, backend: str | None = None
) -> None:
    """Apply Keccak-p[1600, rounds] in place to the 8 states of a (25, 8) uint64 array."""
    _permute(states, 8, rounds, backend)


class ShakeStream:
    """hashlib's SHAKE of a fixed output length, as a stream of ``twocats sum`` (the backend is
    hashlib's own)."""

    def __init__(self, security: int, length: int, *, backend: str | None = None) -> None:
        self._hasher = hashlib.shake_128() if security == 128 else hashlib.shake_256()
        self._length = length

    def update(self, data: bytes) -> None:
        """Hash more input."""
        self._hasher.update(data)

    def digest(self) -> bytes:
        """Return the output."""
        return bytes(self._hasher.digest(self._length))


#: The registry's rows (:mod:`twocats.lanes.registry`); KangarooTwelve and ParallelHash, which
#: stream, are :mod:`twocats.lanes.modes.keccak_stream`'s.
ALGORITHMS = (
    Algorithm(
        "sha3-224",
        28,
        sha3_224_many,
        "sha3_224",
        "SHA3-224 over 8 Keccak states",
    ),
    Algorithm(
        "sha3-256",
        32,
        sha3_256_many,
        "sha3_256",
        "SHA3-256 over 8 Keccak states",
    ),
    Algorithm(
        "sha3-384",
        48,
        sha3_384_many,
        "sha3_384",
        "SHA3-384 over 8 Keccak states",
    ),
    Algorithm(
        "sha3-512",
        64,
        sha3_512_many,
        "sha3_512",
        "SHA3-512 over 8 Keccak states",
    ),
    Algorithm(
        "shake128",
        32,
        partial(shake128_many, length=32),
        None,
        "SHAKE128 with a 32-byte output",
        stream=partial(ShakeStream, 128, 32),
    ),
    Algorithm(
        "shake256",
        64,
        partial(shake256_many, length=64),
        None,
        "SHAKE256 with a 64-byte output",
        stream=partial(ShakeStream, 256, 64),
    ),
    Algorithm(
        "turboshake128",
        32,
        each(turboshake128, length=32),
        None,
        "TurboSHAKE128 (D = 0x1F), 32 bytes",
    ),
    Algorithm(
        "turboshake256",
        64,
        each(turboshake256, length=64),
        None,
        "TurboSHAKE256 (D = 0x1F), 64 bytes",
    ),
)

#: The Keccak kernels (:mod:`twocats.lanes.modes.kernels.keccak`), as
#: :func:`twocats.simd.family.ready` knows them.
FAMILY = family_of(
    "keccak",
    "twocats.lanes.modes.kernels.keccak",
    {
        "keccak_sponge_x4": _SPONGE,
        "keccak_sponge_x8": _SPONGE,
        "keccak_x4": "uint64[:], int64",
        "keccak_x8": "uint64[:], int64",
    },
    _check,
    __file__,
)
