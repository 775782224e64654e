"""Plain-Python LSH-256 and LSH-512 (KS X 3262), the truth for the compiled multi-message kernels.

LSH is a wide-pipe Merkle-Damgård hash: a 16-word chaining value, 32-word message blocks loaded
little-endian, one-zeros padding (0x80 then zeros, no length field), and a compression function of
26 (LSH-256) or 28 (LSH-512) add-rotate-xor steps.  The step constants and the IVs are derived
here from their definitions (SC_j = SC_{j-1} + rotl(SC_{j-1}, 8); IV = compression of a zero
block from (w, n, 0, ...)), so only the first step constant of each variant is a literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

__all__ = [
    "LSH256",
    "LSH512",
    "LshVariant",
    "compress",
    "initial_value",
    "lsh256",
    "lsh512",
    "step_constants",
]

TAU = (3, 2, 0, 1, 7, 4, 5, 6, 11, 10, 8, 9, 15, 12, 13, 14)
SIGMA = (6, 4, 5, 7, 12, 15, 14, 13, 2, 0, 1, 3, 8, 11, 10, 9)


@dataclass(frozen=True)
class LshVariant:
    """The word size and step parameters of LSH-256 or LSH-512."""

    name: str
    word_bits: int
    steps: int
    alpha_even: int
    beta_even: int
    alpha_odd: int
    beta_odd: int
    gamma: tuple[int, ...]
    sc0: tuple[int, ...]

    @property
    def block_bytes(self) -> int:
        """Bytes per message block (128 or 256)."""
        return 32 * self.word_bits // 8

    @property
    def max_digest(self) -> int:
        """Largest digest length in bytes (32 or 64)."""
        return self.word_bits


LSH256 = LshVariant(
    "lsh256",
    32,
    26,
    29,
    1,
    5,
    17,
    (0, 8, 16, 24, 24, 16, 8, 0),
    (
        0x917CAF90,
        0x6C1B10A2,
        0x6F352943,
        0xCF778243,
        0x2CEB7472,
        0x29E96FF2,
        0x8A9BA428,
        0x2EEB2642,
    ),
)
LSH512 = LshVariant(
    "lsh512",
    64,
    28,
    23,
    59,
    7,
    3,
    (0, 16, 32, 48, 8, 24, 40, 56),
    (
        0x97884283C938982A,
        0xBA1FCA93533E2355,
        0xC519A2E87AEB1C03,
        0x9A0FC95462AF17B1,
        0xFC3DDA8AB019A82B,
        0x02825D079A895407,
        0x79F2D0A7EE06A6F7,
        0xD76D15EED9FDF5FE,
    ),
)


def _rotl(x: int, n: int, bits: int) -> int:
    """Rotate a ``bits``-bit value left by n."""
    mask = (1 << bits) - 1
    n %= bits
    return ((x << n) | (x >> (bits - n))) & mask


@cache
def step_constants(v: LshVariant) -> tuple[tuple[int, ...], ...]:
    """Return SC_0 .. SC_{Ns-1} (8 words each): SC_j = SC_{j-1} + rotl(SC_{j-1}, 8)."""
    mask = (1 << v.word_bits) - 1
    rows = [v.sc0]
    for _ in range(1, v.steps):
        prev = rows[-1]
        rows.append(tuple((s + _rotl(s, 8, v.word_bits)) & mask for s in prev))
    return tuple(rows)


def compress(v: LshVariant, cv: list[int], block: bytes) -> None:
    """Apply the LSH compression function to the 16-word chaining value ``cv`` in place."""
    wb = v.word_bits
    mask = (1 << wb) - 1
    nb = wb // 8
    words = [int.from_bytes(block[i : i + nb], "little") for i in range(0, 32 * nb, nb)]
    m_prev, m_cur = words[:16], words[16:]
    m = words[:16]
    sc = step_constants(v)
    for j in range(v.steps):
        if j == 1:
            m = m_cur
        elif j >= 2:
            m = [(m_cur[i] + m_prev[TAU[i]]) & mask for i in range(16)]
            m_prev, m_cur = m_cur, m
        alpha, beta = (v.alpha_even, v.beta_even) if j % 2 == 0 else (v.alpha_odd, v.beta_odd)
        t = [0] * 16
        for col in range(8):
            x = cv[col] ^ m[col]
            y = cv[col + 8] ^ m[col + 8]
            x = _rotl((x + y) & mask, alpha, wb) ^ sc[j][col]
            y = _rotl((x + y) & mask, beta, wb)
            t[col] = (x + y) & mask
            t[col + 8] = _rotl(y, v.gamma[col], wb)
        cv[:] = [t[SIGMA[i]] for i in range(16)]
    m_last = [(m_cur[i] + m_prev[TAU[i]]) & mask for i in range(16)]
    for i in range(16):
        cv[i] ^= m_last[i]


@cache
def initial_value(v: LshVariant, digest_bits: int) -> tuple[int, ...]:
    """Return the IV of LSH-(8w)-n: the compression of a zero block from CV = (w, n, 0, ..., 0)."""
    cv = [v.word_bits, digest_bits] + [0] * 14
    compress(v, cv, bytes(v.block_bytes))
    return tuple(cv)


def _lsh(v: LshVariant, data: bytes, digest_size: int) -> bytes:
    """Hash ``data`` with LSH variant ``v`` and a digest of ``digest_size`` bytes."""
    cv = list(initial_value(v, 8 * digest_size))
    bb = v.block_bytes
    padded = data + b"\x80" + bytes(-(len(data) + 1) % bb)
    for start in range(0, len(padded), bb):
        compress(v, cv, padded[start : start + bb])
    nb = v.word_bits // 8
    return b"".join((cv[i] ^ cv[i + 8]).to_bytes(nb, "little") for i in range(8))[:digest_size]


def lsh256(data: bytes, digest_size: int = 32) -> bytes:
    """Return LSH-256-(8*digest_size) of ``data`` (1 <= digest_size <= 32)."""
    return _lsh(LSH256, data, digest_size)


def lsh512(data: bytes, digest_size: int = 64) -> bytes:
    """Return LSH-512-(8*digest_size) of ``data`` (1 <= digest_size <= 64)."""
    return _lsh(LSH512, data, digest_size)
