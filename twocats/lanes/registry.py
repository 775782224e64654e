"""The one table of lane algorithms: the four primitives and the modes from the literature.

:data:`ALGORITHMS` maps every name that :func:`twocats.lanes.hash_many` and ``twocats sum`` accept
to an :class:`Algorithm`, whose ``many(messages, backend=...)`` returns one digest per message, so
that a multi-message front end can dispatch on the name::

    from twocats.lanes.registry import ALGORITHMS, PRIMITIVES

    PRIMITIVES                                   # ("blake2s", "blake2b", "sha256", "sha512")
    ALGORITHMS["lsh-256-256"].digest_size        # 32

The primitives are :mod:`twocats.lanes.primitives`; the modes are families, each a module of
:mod:`twocats.lanes.modes` with reference, scalar and simd backends::

    keccak      multi-message SHA-3/SHAKE over 4 or 8 Keccak states; TurboSHAKE, KT128/KT256,
                cSHAKE and ParallelHash built on them
    blake2tree  BLAKE2sp and BLAKE2bp (leaves in lanes), keyed, any output length
    lsh         LSH-256 and LSH-512 (KS X 3262), single-message and multi-message
    sha1        multi-buffer SHA-1 (legacy integrity checks only)
    sha256tree  j-lanes SHA-256, Intel's mh_sha256, j-pointers

The plain-Python references live in :mod:`twocats.lanes.reference` (the official vector readers
are test code, in ``tests/support/modes_kat.py``).  Importing this module imports neither numpy
nor numba.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from twocats.exceptions import InvalidParametersError
from twocats.hashes import by_name
from twocats.lanes import primitives
from twocats.lanes.modes import blake2tree, keccak, lsh, sha1, sha256tree
from twocats.lanes.primitives import PRIMITIVES

__all__ = ["ALGORITHMS", "PRIMITIVES", "Algorithm", "algorithm_named"]

#: The signature of a multi-message function: messages and a backend in, digests out.
ManyFunction = Callable[..., list[bytes]]


@dataclass(frozen=True)
class Algorithm:
    """One algorithm of the table: its multi-message function and facts a front end needs."""

    name: str
    digest_size: int
    many: ManyFunction
    #: The ``hashlib.new`` name of the same function, for streaming large inputs, or None.
    hashlib_name: str | None
    summary: str
    #: True for SHA-1: integrity checks of old data only, never for passwords or new designs.
    legacy: bool = False
    #: True for the four primitives, whose lane count and threads the caller may choose.
    primitive: bool = False


def _each(func: Callable[..., bytes], **fixed: object) -> ManyFunction:
    """Turn a one-message tree hash into a multi-message function (one tree per message)."""

    def many(messages: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
        from twocats.lanes.modes._common import check_messages

        return [func(m, backend=backend, **fixed) for m in check_messages(messages)]

    many.__doc__ = f"Apply {func.__qualname__} to each message."
    return many


def _primitives() -> list[Algorithm]:
    """The four primitives, in hash-code order."""
    return [
        Algorithm(
            name,
            by_name(name).digest_size,
            partial(primitives.digest_list, name),
            name,
            f"{name}, {primitives.DEFAULT_LANES[name]} messages in lanes by default",
            primitive=True,
        )
        for name in PRIMITIVES
    ]


def _modes() -> list[Algorithm]:
    """The lane modes from the literature."""
    modes = [
        Algorithm(
            "sha1", 20, sha1.sha1_many, "sha1", "SHA-1, 8 messages per lane group", legacy=True
        ),
        Algorithm(
            "sha3-224", 28, keccak.sha3_224_many, "sha3_224", "SHA3-224 over 8 Keccak states"
        ),
        Algorithm(
            "sha3-256", 32, keccak.sha3_256_many, "sha3_256", "SHA3-256 over 8 Keccak states"
        ),
        Algorithm(
            "sha3-384", 48, keccak.sha3_384_many, "sha3_384", "SHA3-384 over 8 Keccak states"
        ),
        Algorithm(
            "sha3-512", 64, keccak.sha3_512_many, "sha3_512", "SHA3-512 over 8 Keccak states"
        ),
        Algorithm(
            "shake128",
            32,
            partial(keccak.shake128_many, length=32),
            None,
            "SHAKE128 with a 32-byte output",
        ),
        Algorithm(
            "shake256",
            64,
            partial(keccak.shake256_many, length=64),
            None,
            "SHAKE256 with a 64-byte output",
        ),
        Algorithm(
            "turboshake128",
            32,
            _each(keccak.turboshake128, length=32),
            None,
            "TurboSHAKE128 (D = 0x1F), 32 bytes",
        ),
        Algorithm(
            "turboshake256",
            64,
            _each(keccak.turboshake256, length=64),
            None,
            "TurboSHAKE256 (D = 0x1F), 64 bytes",
        ),
        Algorithm(
            "kt128",
            32,
            _each(keccak.kt128, length=32),
            None,
            "KangarooTwelve KT128, 32 bytes, 8 KiB chunks in lanes",
        ),
        Algorithm(
            "kt256",
            64,
            _each(keccak.kt256, length=64),
            None,
            "KT256, 64 bytes, 8 KiB chunks in lanes",
        ),
        Algorithm(
            "parallelhash128",
            32,
            _each(keccak.parallelhash128, block_size=8192, length=32),
            None,
            "ParallelHash128, B = 8192, 256-bit output",
        ),
        Algorithm(
            "parallelhash256",
            64,
            _each(keccak.parallelhash256, block_size=8192, length=64),
            None,
            "ParallelHash256, B = 8192, 512-bit output",
        ),
        Algorithm("blake2sp", 32, blake2tree.blake2sp_many, None, "BLAKE2sp, 8 BLAKE2s leaves"),
        Algorithm("blake2bp", 64, blake2tree.blake2bp_many, None, "BLAKE2bp, 4 BLAKE2b leaves"),
        Algorithm(
            "mh-sha256",
            32,
            _each(sha256tree.mh_sha256),
            None,
            "Intel multi-hash SHA-256 (ISA-L mh_sha256), 16 segments",
        ),
    ]
    for j in (4, 8, 16):
        modes.append(
            Algorithm(
                f"jlanes-sha256-{j}",
                32,
                _each(sha256tree.jlanes_sha256, j=j),
                None,
                f"j-lanes SHA-256 tree, j = {j}, standard IVs",
            )
        )
    for family, sizes in ((256, (28, 32)), (512, (28, 32, 48, 64))):
        many = lsh.lsh256_many if family == 256 else lsh.lsh512_many
        for size in sizes:
            modes.append(
                Algorithm(
                    f"lsh-{family}-{8 * size}",
                    size,
                    partial(many, digest_size=size),
                    None,
                    f"LSH-{family}-{8 * size} (KS X 3262), 8 messages in lanes",
                )
            )
    return modes


#: Algorithm name -> :class:`Algorithm`: the primitives, then the lane modes.
ALGORITHMS: dict[str, Algorithm] = {entry.name: entry for entry in [*_primitives(), *_modes()]}


def algorithm_named(name: str) -> Algorithm:
    """Return the algorithm called ``name``; an unknown name raises, listing the known ones."""
    entry = ALGORITHMS.get(name)
    if entry is None:
        allowed = ", ".join(ALGORITHMS)
        raise InvalidParametersError(f"algorithm must be one of {allowed}, not {name!r}")
    return entry
