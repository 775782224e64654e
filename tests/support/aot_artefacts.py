"""Build ahead-of-time fill kernels into a test folder, and forget them afterwards."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.environment import need
from twocats.kdf.fill.args import FillKey
from twocats.lanes.aot import LaneKey
from twocats.lanes.primitives import PRIMITIVES
from twocats.simd import _jit, aot, cache

#: The kernels the tests build: the default profile's (final block hash, simd) and a March 2014
#: one on the scalar backend, so that both block hashes and both backends are covered.
KEYS = (FillKey(8, "simd", 0, 0), FillKey(8, "scalar", 0, 1))


@contextmanager
def artefacts_in(
    folder: Path, keys: Sequence[FillKey] = KEYS, *, linked: bool = True
) -> Iterator[Path]:
    """Build ``keys`` into ``folder`` (``$TWOCATS_AOT_DIR``), enabled for the block's duration.

    ``linked``: shared objects linked by the C compiler; otherwise the build sees no C compiler
    and writes objects for MCJIT.
    """
    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    import numba

    from twocats.kdf.fill.aot import build_fill
    from twocats.simd.aotcompile import BUILD_NUMBA, compiler

    if linked and compiler() is None:
        need("a C compiler (cc) to link ahead-of-time kernels")
    if numba.__version__ not in BUILD_NUMBA:
        pytest.skip(f"ahead-of-time kernels are built on numba {sorted(BUILD_NUMBA)} only")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(aot.AOT_DIR_ENV, str(folder))
        patch.setenv(cache.AOT_ENV, "1")
        with pytest.MonkeyPatch.context() as build:
            if not linked:
                build.setenv("CC", str(folder / "no-such-compiler"))
            for key in keys:
                built = build_fill(key)
                assert built is not None
                assert built.suffix == (aot.SHARED if linked else aot.OBJECT)
        reset()
        try:
            yield folder
        finally:
            reset()


def reset() -> None:
    """Forget every loaded artefact and the warning already given, as in a new process."""
    for lanes in (1, 2, 4, 8, 16):
        for backend in ("scalar", "simd"):
            for hash_type in range(4):
                for variant in (0, 1):
                    aot.forget(FillKey(lanes, backend, hash_type, variant))
    for name in PRIMITIVES:
        for backend in ("scalar", "simd"):
            aot.forget(LaneKey(name, backend))
    cache._warned[0] = False
