"""The fill kernels as a family of :mod:`twocats.simd.family`: what only the fill knows.

Usage::

    from twocats.kdf.fill.family import FILL, fill
    from twocats.simd.family import ready

    key = FILL.keys("simd", params)[0]          # FillKey(8, "simd", 0, 0): the kernel params run
    fill(ready(FILL, key), key.variant, mem, states, args)     # args: a FillArgs

A kernel is one lane count, backend, hash type and block hash (:class:`~twocats.kdf.fill.args.
FillKey`); its numba source is the generated ``fill_<chain>_l<lanes>``, bound to its hash type's
state hash; its known-answer check fills a small job of two slices (:func:`run_check`) exactly
as the pure-Python reference does; its signature takes ``mem``, ``states``, the scratch arrays
and the integers of :class:`~twocats.kdf.fill.args.FillArgs`.  Importing the module imports
neither numpy nor numba; :func:`fill_variants` imports numba.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from typing import Any

from twocats import hashes
from twocats.exceptions import InvalidParametersError
from twocats.hashes import HASHES
from twocats.kdf import words
from twocats.kdf.fill.args import (
    CHAINS,
    LANES,
    SCRATCH,
    FillArgs,
    FillKey,
    kernel_name,
    module_name,
)
from twocats.params import Params
from twocats.simd.family import Family
from twocats.simd.registry import check_compiled

__all__ = ["FILL", "fill", "fill_variants", "keys", "reference_check", "run_check", "scratch"]

# The signature's name of each scratch array's element type.
_ELEMENTS = {"uint32": "uint32[:]", "uint64": "uint64[:]"}


def fill_variants(lanes: int, hash_type: int = 0, variant: int = 0) -> Any:
    """Return the fill kernel of ``lanes``, hash code and ``variant`` as a
    :class:`~twocats.simd._jit.Variants` (both builds); it links its own hash type's state hash
    only.  Calling this imports numba."""
    if lanes not in LANES:
        raise InvalidParametersError(f"lanes must be one of {', '.join(map(str, LANES))}")
    if not 0 <= hash_type < len(HASHES):
        raise InvalidParametersError("hash_type must be 0, 1, 2 or 3")
    if variant not in (0, 1):
        raise InvalidParametersError("variant must be 0 (final/2014) or 1 (March 2014)")
    facts = HASHES[hash_type]
    if lanes > facts.state_words:
        raise InvalidParametersError(
            f"lanes must be at most {facts.state_words} (the {facts.name} state's words)"
        )
    from twocats.kdf.fill.statehash import STATE_HASHES

    module = importlib.import_module(f"twocats.kdf.fill._generated.{module_name(lanes)}")
    source = getattr(module, kernel_name(CHAINS[variant], lanes))
    return source.specialise(
        facts.name, state_hash=STATE_HASHES[hash_type], N_WORDS=facts.state_words
    )


def _kernel(key: FillKey) -> Any:
    return fill_variants(key.lanes, key.hash_type, key.variant).get(key.backend)


def _signature(key: FillKey) -> str:
    chain = SCRATCH[CHAINS[key.variant]]
    arrays = ["uint32[:]", "uint32[:, :]", *(_ELEMENTS[kind] for _name, kind, _count in chain)]
    return ", ".join(arrays + ["int64"] * FillArgs.count(key.variant))


def scratch(variant: int) -> list[memoryview]:
    """Fresh, zeroed scratch arrays for one call of a kernel of ``variant`` (0 or 1)."""
    return [
        memoryview(bytearray(4 * count)).cast("I")
        if kind == "uint32"
        else memoryview(bytearray(8 * count)).cast("Q")
        for _name, kind, count in SCRATCH[CHAINS[variant]]
    ]


def fill(kernel: Any, variant: int, mem: words.Words, states: words.Words, args: FillArgs) -> None:
    """Fill one slice with ``kernel`` (of ``variant``): ``mem`` and ``states`` as words (views or
    numpy arrays), the scratch made for the call and zeroed after it (it holds words derived
    from the password).  The arguments are checked by the caller
    (:mod:`twocats.kdf.fill.threads` validates every slice)."""
    arrays = scratch(variant)
    try:
        kernel(mem, states, *arrays, *args.ints())
    finally:
        for array in arrays:
            words.zero(array)


def run_check(kernel: Any, key: FillKey) -> bytes:
    """Fill a small known job with ``kernel`` and return the digest of memory and states.

    Two slices of two regions, the first data-independent and the second password-dependent with
    64-byte sub-blocks, so that every path of the kernel runs.
    """
    width = HASHES[key.hash_type].state_words
    blocklen = max(32, 2 * key.lanes)
    parallelism, bpt = 2, 4
    mem = words.allocate(parallelism * bpt * blocklen)
    states = words.rows(
        [[(i * 0x9E3779B1) & 0xFFFFFFFF for i in range(p * width, (p + 1) * width)]
         for p in range(parallelism)]
    )  # fmt: skip
    time_cost = 1 if key.variant else None
    for done, dependent in ((0, 0), (2, 1)):
        sub = 16 if dependent else blocklen
        args = FillArgs(0, 1, done, 2, bpt, blocklen, sub, parallelism, 2, dependent, time_cost)
        fill(kernel, key.variant, mem, states, args)
    return hashlib.sha256(mem.tobytes() + states.tobytes()).digest()


@functools.cache
def reference_check(key: FillKey) -> bytes:
    """Return :func:`run_check`'s digest computed by the pure-Python reference fill."""
    from twocats.kdf.reference import fill_slice

    def kernel(mem: words.Words, states: words.Words, *rest: int) -> None:
        # The scratch arrays come first, then the integers of FillArgs.
        args = FillArgs(*rest[len(SCRATCH[CHAINS[key.variant]]) :])
        fill_slice(mem, states, args.job(key.lanes, key.hash_type))

    return run_check(kernel, key)


def _passes(kernel: Any, key: FillKey) -> bool:
    return run_check(kernel, key) == reference_check(key)


def keys(backend: str, params: Params | None) -> list[FillKey]:
    """The fill kernel that deriving with ``params`` on ``backend`` runs, or with ``None`` every
    fill kernel: each hash type, lane count and block hash."""
    check_compiled(backend)
    if params is not None:
        return [FillKey(params.lanes, backend, params.hash_code, int(params.variant == "2014-03"))]
    return [
        FillKey(lanes, backend, facts.code, variant)
        for variant in (0, 1)
        for facts in HASHES
        for lanes in LANES
        if lanes <= facts.state_words
    ]


#: The fill kernels, as :func:`twocats.simd.family.ready` knows them.
FILL: Family[FillKey] = Family(
    "fill", _kernel, _signature, _passes, keys, (__file__, hashes.__file__)
)
