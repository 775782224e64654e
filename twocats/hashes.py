"""The facts of the hashes, declared once: names, codes, sizes, IVs and round constants.

:data:`HASHES` holds the four hash types of TwoCats; :data:`LANE_HASHES` adds SHA-1, which only
the lanes compute (legacy integrity checks, never passwords).  Parameters, the compiled fill, the
lane kernels, the code generator and the plain-Python references read these tables; nothing else
spells a digest size, an IV or a round constant.  Importing it is cheap (no numpy)::

    from twocats.hashes import HASHES, by_name

    HASHES[0].name                  # "blake2s": the index is the hash code used everywhere
    by_name("sha512").digest_size   # 64
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "HASHES",
    "HASH_TYPES",
    "LANE_HASHES",
    "SCRATCH_WORDS",
    "SHA1",
    "SIGMA",
    "HashFacts",
    "by_name",
]


def _primes(count: int) -> list[int]:
    found: list[int] = []
    candidate = 2
    while len(found) < count:
        if all(candidate % p for p in found if p * p <= candidate):
            found.append(candidate)
        candidate += 1
    return found


def _iroot(n: int, k: int) -> int:
    """The integer ``k``-th root of ``n`` (the largest r with r**k <= n)."""
    r = 1 << ((n.bit_length() + k - 1) // k)
    while True:
        s = ((k - 1) * r + n // r ** (k - 1)) // k
        if s >= r:
            break
        r = s
    while r**k > n:
        r -= 1
    while (r + 1) ** k <= n:
        r += 1
    return r


def _fraction_bits(p: int, root: int, bits: int) -> int:
    """The first ``bits`` bits of the fractional part of the ``root``-th root of ``p``."""
    return _iroot(p << (root * bits), root) & ((1 << bits) - 1)


_PRIMES = _primes(80)

#: Words of each scratch array of a compiled state hash: chaining value (8), message block (16),
#: the digest as 32-bit words (up to 16, in the uint32 array).
SCRATCH_WORDS = 40

#: The BLAKE2 message permutations; BLAKE2b's rounds 10 and 11 reuse rows 0 and 1.
SIGMA: tuple[tuple[int, ...], ...] = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)


@dataclass(frozen=True)
class HashFacts:
    """Everything that distinguishes one hash type."""

    name: str
    #: The hash code: the index in :data:`LANE_HASHES` (for a TwoCats hash type also in
    #: :data:`HASHES`), passed to the compiled kernels.
    code: int
    digest_size: int
    #: Bits per word of the state and the message block (32 or 64).
    word_bits: int
    rounds: int
    #: The initial chaining value (SHA-1, SHA-2) or the IV (BLAKE2); BLAKE2 and SHA-2 share them.
    iv: tuple[int, ...]
    #: A word's bytes are read big-endian (SHA-1, SHA-2) or little-endian (BLAKE2).
    big_endian: bool
    #: BLAKE2's four G rotations, SHA-2's Sigma0, Sigma1, sigma0, sigma1 (three each), or
    #: SHA-1's left rotations of a, of b and of a schedule word.
    rotations: tuple[int, ...]
    #: SHA-2's round constants, or SHA-1's one constant per 20 rounds (empty for BLAKE2).
    k: tuple[int, ...] = ()
    #: True for SHA-1: integrity checks of old data only, never for passwords or new designs.
    legacy: bool = False

    @property
    def is_blake2(self) -> bool:
        """True for the BLAKE2 family."""
        return self.name.startswith("blake2")

    @property
    def is_sha1(self) -> bool:
        """True for SHA-1 (big-endian words and SHA-2's padding, its own rounds)."""
        return self.name == "sha1"

    @property
    def chain_words(self) -> int:
        """Words of the chaining value: 8, or SHA-1's 5."""
        return len(self.iv)

    @property
    def word_bytes(self) -> int:
        """Bytes per word."""
        return self.word_bits // 8

    @property
    def block_bytes(self) -> int:
        """Bytes per message block (16 words)."""
        return 16 * self.word_bytes

    @property
    def state_words(self) -> int:
        """W: the 32-bit words of a digest (a TwoCats region state)."""
        return self.digest_size // 4

    @property
    def word_type(self) -> str:
        """The numpy scalar alias generated code uses for one word."""
        return "U32" if self.word_bits == 32 else "U64"


_IV32 = tuple(_fraction_bits(p, 2, 32) for p in _PRIMES[:8])
_IV64 = tuple(_fraction_bits(p, 2, 64) for p in _PRIMES[:8])

#: The hash types in hash-code order.
HASHES: tuple[HashFacts, ...] = (
    HashFacts("blake2s", 0, 32, 32, 10, _IV32, False, (16, 12, 8, 7)),
    HashFacts("blake2b", 1, 64, 64, 12, _IV64, False, (32, 24, 16, 63)),
    HashFacts(
        "sha256", 2, 32, 32, 64, _IV32, True,
        (2, 13, 22, 6, 11, 25, 7, 18, 3, 17, 19, 10),
        tuple(_fraction_bits(p, 3, 32) for p in _PRIMES[:64]),
    ),
    HashFacts(
        "sha512", 3, 64, 64, 80, _IV64, True,
        (28, 34, 39, 14, 18, 41, 1, 8, 7, 19, 61, 6),
        tuple(_fraction_bits(p, 3, 64) for p in _PRIMES[:80]),
    ),
)  # fmt: skip

#: The hash type names in hash-code order.
HASH_TYPES: tuple[str, ...] = tuple(facts.name for facts in HASHES)

#: SHA-1 (FIPS 180-4), a lane hash only.  Its round constants are the first 30 fractional bits
#: of the square roots of 2, 3, 5 and 10 (with the integer part, 2**30 times the root).
SHA1 = HashFacts(
    "sha1", len(HASHES), 20, 32, 80, (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0),
    True, (5, 30, 1), tuple(_iroot(n << 60, 2) for n in (2, 3, 5, 10)), legacy=True,
)  # fmt: skip

#: The hashes the lanes compute, in hash-code order: the TwoCats hash types, then SHA-1.
LANE_HASHES: tuple[HashFacts, ...] = (*HASHES, SHA1)


def by_name(name: str) -> HashFacts:
    """Return the facts of the lane hash ``name`` (:data:`LANE_HASHES`); KeyError for an unknown
    name.  A TwoCats hash type is a name of :data:`HASH_TYPES`."""
    for facts in LANE_HASHES:
        if facts.name == name:
            return facts
    raise KeyError(name)
