"""Plain-Python Keccak: the truth for every Keccak-based mode of the lane engine.

Everything follows FIPS 202 (Keccak-f[1600], SHA-3, SHAKE), NIST SP 800-185 (cSHAKE,
ParallelHash) and RFC 9861 (TurboSHAKE, KangarooTwelve).  The state is a list of 25 Python
integers, lane ``x + 5*y``.  The round constants and rotation offsets are derived here from their
defining recurrences, not copied from a table.  This module is slow (about 100 kB/s) and meant
for tests and small inputs only.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "RATE_SHA3_256",
    "RATE_SHA3_512",
    "RATE_SHAKE128",
    "RATE_SHAKE256",
    "ROTATION_OFFSETS",
    "ROUND_CONSTANTS",
    "cshake128",
    "cshake256",
    "keccak_p1600",
    "kt128",
    "kt256",
    "kt_final_node",
    "left_encode",
    "length_encode",
    "parallelhash128",
    "parallelhash256",
    "right_encode",
    "sha3",
    "sha3_224",
    "sha3_256",
    "sha3_384",
    "sha3_512",
    "shake128",
    "shake256",
    "sponge",
    "turboshake128",
    "turboshake256",
]

_MASK64 = (1 << 64) - 1

RATE_SHAKE128 = 168
RATE_SHAKE256 = 136
RATE_SHA3_256 = 136
RATE_SHA3_512 = 72

# KangarooTwelve's chunk size, and the bytes that separate the first chunk from the chaining values.
KT_CHUNK = 8192
_KT_SEPARATOR = b"\x03" + bytes(7)


def _round_constant_bit(t: int) -> int:
    """Return rc(t) of FIPS 202 Algorithm 5: the output of the degree-8 LFSR after t steps."""
    r = 0x01
    for _ in range(t % 255):
        r <<= 1
        if r & 0x100:
            r ^= 0x171
    return r & 1


def _make_round_constants() -> tuple[int, ...]:
    """Derive the 24 iota constants: bit 2**j - 1 of RC[i] is rc(j + 7*i) (FIPS 202 Algorithm 6)."""
    constants = []
    for i in range(24):
        rc = 0
        for j in range(7):
            rc |= _round_constant_bit(j + 7 * i) << ((1 << j) - 1)
        constants.append(rc)
    return tuple(constants)


def _make_rotation_offsets() -> tuple[int, ...]:
    """Derive the rho offsets by walking (x, y) -> (y, 2x + 3y) from (1, 0) (FIPS 202 Alg. 2)."""
    offsets = [0] * 25
    x, y = 1, 0
    for t in range(24):
        offsets[x + 5 * y] = ((t + 1) * (t + 2) // 2) % 64
        x, y = y, (2 * x + 3 * y) % 5
    return tuple(offsets)


ROUND_CONSTANTS = _make_round_constants()
ROTATION_OFFSETS = _make_rotation_offsets()


def _rotl64(v: int, n: int) -> int:
    """Rotate a 64-bit value left by n bits."""
    n %= 64
    return ((v << n) | (v >> (64 - n))) & _MASK64


def keccak_p1600(state: list[int], rounds: int = 24) -> None:
    """Apply Keccak-p[1600, rounds] in place: the last ``rounds`` rounds of Keccak-f[1600]."""
    for ir in range(24 - rounds, 24):
        parity = [
            state[x] ^ state[x + 5] ^ state[x + 10] ^ state[x + 15] ^ state[x + 20]
            for x in range(5)
        ]
        for x in range(5):
            d = parity[(x - 1) % 5] ^ _rotl64(parity[(x + 1) % 5], 1)
            for y in range(5):
                state[x + 5 * y] ^= d
        moved = [0] * 25
        for x in range(5):
            for y in range(5):
                moved[y + 5 * ((2 * x + 3 * y) % 5)] = _rotl64(
                    state[x + 5 * y], ROTATION_OFFSETS[x + 5 * y]
                )
        for x in range(5):
            for y in range(5):
                state[x + 5 * y] = moved[x + 5 * y] ^ (
                    (~moved[(x + 1) % 5 + 5 * y]) & moved[(x + 2) % 5 + 5 * y]
                )
        state[0] ^= ROUND_CONSTANTS[ir]


def sponge(data: bytes, rate: int, domain: int, length: int, rounds: int = 24) -> bytes:
    """Run the Keccak sponge: pad ``data`` with ``domain`` and pad10*1, absorb, squeeze ``length``.

    ``domain`` is the first padding byte, which holds the domain-separation bits followed by the
    first bit of pad10*1 (0x06 for SHA-3, 0x1F for SHAKE, 0x04 for cSHAKE, D for TurboSHAKE).
    """
    padded = bytearray(data)
    padded.append(domain)
    padded.extend(bytes(-len(padded) % rate))
    padded[-1] ^= 0x80
    state = [0] * 25
    for start in range(0, len(padded), rate):
        for w in range(rate // 8):
            lane = padded[start + 8 * w : start + 8 * w + 8]
            state[w] ^= int.from_bytes(lane, "little")
        keccak_p1600(state, rounds)
    out = bytearray()
    while True:
        for w in range(rate // 8):
            out.extend(state[w].to_bytes(8, "little"))
        if len(out) >= length:
            return bytes(out[:length])
        keccak_p1600(state, rounds)


def sha3(data: bytes, bits: int) -> bytes:
    """Return SHA3-``bits`` of ``data`` for bits in 224, 256, 384, 512."""
    return sponge(data, 200 - bits // 4, 0x06, bits // 8)


def sha3_224(data: bytes) -> bytes:
    """Return SHA3-224 of ``data``."""
    return sha3(data, 224)


def sha3_256(data: bytes) -> bytes:
    """Return SHA3-256 of ``data``."""
    return sha3(data, 256)


def sha3_384(data: bytes) -> bytes:
    """Return SHA3-384 of ``data``."""
    return sha3(data, 384)


def sha3_512(data: bytes) -> bytes:
    """Return SHA3-512 of ``data``."""
    return sha3(data, 512)


def shake128(data: bytes, length: int) -> bytes:
    """Return ``length`` bytes of SHAKE128 of ``data``."""
    return sponge(data, RATE_SHAKE128, 0x1F, length)


def shake256(data: bytes, length: int) -> bytes:
    """Return ``length`` bytes of SHAKE256 of ``data``."""
    return sponge(data, RATE_SHAKE256, 0x1F, length)


def turboshake128(data: bytes, length: int, domain: int = 0x1F) -> bytes:
    """Return ``length`` bytes of TurboSHAKE128 (12-round Keccak-p, rate 168) with domain byte D."""
    return sponge(data, RATE_SHAKE128, domain, length, rounds=12)


def turboshake256(data: bytes, length: int, domain: int = 0x1F) -> bytes:
    """Return ``length`` bytes of TurboSHAKE256 (12-round Keccak-p, rate 136) with domain byte D."""
    return sponge(data, RATE_SHAKE256, domain, length, rounds=12)


def left_encode(x: int) -> bytes:
    """SP 800-185 left_encode: the byte count of x, then x big-endian (x = 0 is one zero byte)."""
    body = x.to_bytes(max(1, (x.bit_length() + 7) // 8), "big")
    return bytes([len(body)]) + body


def right_encode(x: int) -> bytes:
    """SP 800-185 right_encode: x big-endian (x = 0 is one zero byte), then its byte count."""
    body = x.to_bytes(max(1, (x.bit_length() + 7) // 8), "big")
    return body + bytes([len(body)])


def _encode_string(s: bytes) -> bytes:
    """SP 800-185 encode_string: left_encode of the bit length, then the string."""
    return left_encode(8 * len(s)) + s


def _bytepad(x: bytes, w: int) -> bytes:
    """SP 800-185 bytepad: left_encode(w) ‖ x, zero-filled to a multiple of w bytes."""
    z = left_encode(w) + x
    return z + bytes(-len(z) % w)


def _cshake(data: bytes, length: int, name: bytes, custom: bytes, rate: int) -> bytes:
    """cSHAKE with the given rate; with empty N and S it is SHAKE (SP 800-185 §3.3)."""
    if not name and not custom:
        return sponge(data, rate, 0x1F, length)
    prefix = _bytepad(_encode_string(name) + _encode_string(custom), rate)
    return sponge(prefix + data, rate, 0x04, length)


def cshake128(data: bytes, length: int, name: bytes = b"", custom: bytes = b"") -> bytes:
    """Return ``length`` bytes of cSHAKE128(X, L, N, S)."""
    return _cshake(data, length, name, custom, RATE_SHAKE128)


def cshake256(data: bytes, length: int, name: bytes = b"", custom: bytes = b"") -> bytes:
    """Return ``length`` bytes of cSHAKE256(X, L, N, S)."""
    return _cshake(data, length, name, custom, RATE_SHAKE256)


def _parallelhash(
    data: bytes, block_size: int, length: int, custom: bytes, xof: bool, security: int
) -> bytes:
    """ParallelHash (SP 800-185 §6) with leaves of SHAKE128 (security 128) or SHAKE256 (256)."""
    rate = RATE_SHAKE128 if security == 128 else RATE_SHAKE256
    leaf_len = security // 4
    n = -(-len(data) // block_size)
    leaves = [
        sponge(data[i * block_size : (i + 1) * block_size], rate, 0x1F, leaf_len) for i in range(n)
    ]
    z = left_encode(block_size) + b"".join(leaves) + right_encode(n)
    z += right_encode(0 if xof else 8 * length)
    return _cshake(z, length, b"ParallelHash", custom, rate)


def parallelhash128(
    data: bytes, block_size: int, length: int, custom: bytes = b"", xof: bool = False
) -> bytes:
    """Return ParallelHash128(X, B, L, S), or ParallelHashXOF128 when ``xof`` is true."""
    return _parallelhash(data, block_size, length, custom, xof, 128)


def parallelhash256(
    data: bytes, block_size: int, length: int, custom: bytes = b"", xof: bool = False
) -> bytes:
    """Return ParallelHash256(X, B, L, S), or ParallelHashXOF256 when ``xof`` is true."""
    return _parallelhash(data, block_size, length, custom, xof, 256)


def length_encode(x: int) -> bytes:
    """RFC 9861 length_encode: x big-endian in the fewest bytes (none for 0), then their count."""
    body = x.to_bytes((x.bit_length() + 7) // 8, "big")
    return body + bytes([len(body)])


def kt_final_node(first_chunk: bytes, chaining_values: Sequence[bytes]) -> bytes:
    """Assemble the KT final node S_0 ‖ 03 00.. ‖ CV_1 ‖ … ‖ length_encode(n−1) ‖ FF FF."""
    return (
        first_chunk
        + _KT_SEPARATOR
        + b"".join(chaining_values)
        + length_encode(len(chaining_values))
        + b"\xff\xff"
    )


def _kt(data: bytes, custom: bytes, length: int, rate: int, cv_len: int) -> bytes:
    """KangarooTwelve over TurboSHAKE with the given rate and chaining-value size (RFC 9861)."""
    s = data + custom + length_encode(len(custom))
    if len(s) <= KT_CHUNK:
        return sponge(s, rate, 0x07, length, rounds=12)
    cvs = [
        sponge(s[i : i + KT_CHUNK], rate, 0x0B, cv_len, rounds=12)
        for i in range(KT_CHUNK, len(s), KT_CHUNK)
    ]
    return sponge(kt_final_node(s[:KT_CHUNK], cvs), rate, 0x06, length, rounds=12)


def kt128(data: bytes, length: int, custom: bytes = b"") -> bytes:
    """Return ``length`` bytes of KT128(M, C) (KangarooTwelve, RFC 9861)."""
    return _kt(data, custom, length, RATE_SHAKE128, 32)


def kt256(data: bytes, length: int, custom: bytes = b"") -> bytes:
    """Return ``length`` bytes of KT256(M, C) (RFC 9861)."""
    return _kt(data, custom, length, RATE_SHAKE256, 64)
