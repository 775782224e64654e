"""Build ahead-of-time fill kernels into a test folder, and forget every ready kernel afterwards."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.environment import need
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.family import FILL
from twocats.simd import _jit, aot, cache, family

#: The kernels the tests build: the default profile's (final block hash, simd) and a March 2014
#: one on the scalar backend, so that both block hashes and both backends are covered.
KEYS = (FillKey(8, "simd", 0, 0), FillKey(8, "scalar", 0, 1))


def need_artefacts(*, linked: bool = True) -> None:
    """Skip unless artefacts can be built here (a C compiler too, for ``linked`` ones)."""
    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    import numba

    if linked and aot.compiler() is None:
        need("a C compiler (cc) to link ahead-of-time kernels")
    if numba.__version__ not in aot.BUILD_NUMBA:
        pytest.skip(f"ahead-of-time kernels are built on numba {sorted(aot.BUILD_NUMBA)} only")


@contextmanager
def artefacts_in(
    folder: Path, keys: Sequence[FillKey] = KEYS, *, linked: bool = True
) -> Iterator[Path]:
    """Build ``keys`` into ``folder`` (``$TWOCATS_AOT_DIR``), enabled for the block's duration.

    ``linked``: shared objects linked by the C compiler; otherwise the build sees no C compiler
    and writes objects for MCJIT.
    """
    need_artefacts(linked=linked)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(aot.AOT_DIR_ENV, str(folder))
        patch.setenv(cache.AOT_ENV, "1")
        with pytest.MonkeyPatch.context() as build:
            if not linked:
                build.setenv("CC", str(folder / "no-such-compiler"))
            for key in keys:
                built = aot.build(FILL, key, family._numba(FILL, key).build)
                assert built is not None
                assert built.suffix == (aot.SHARED if linked else aot.OBJECT)
        reset()
        try:
            yield folder
        finally:
            reset()


def reset() -> None:
    """Forget every kernel made ready and the warning already given, as in a new process."""
    family._ready.clear()
    family._built.clear()
    family._failed.clear()
    cache._warned[0] = False
