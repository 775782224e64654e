"""The fill family: ahead-of-time fill kernels equal numba's builds and the reference bit for bit.

Two artefacts are built (the default profile's kernel on the simd backend and a March 2014 kernel
on the scalar backend) into a folder of their own, once as shared objects and once as objects for
MCJIT, then compared with numba's builds on the vectors of their geometry and on random slices, and
with the pure-Python reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.aot_artefacts import KEYS, artefacts_in
from twocats.hashes import HASHES
from twocats.kdf.engine import Engine
from twocats.kdf.fill import family as fill_family
from twocats.kdf.fill.args import CHAINS, SCRATCH, FillArgs, FillKey
from twocats.kdf.fill.family import FILL, fill, reference_check, run_check
from twocats.kdf.vectors import Vector
from twocats.simd import aot, family

#: Vectors up to this much work memory run through the artefacts.
_VECTOR_MEMORY = 4 << 20


@pytest.fixture(scope="module", params=["shared", "object"])
def built(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Path]:
    """The folder holding the artefacts of KEYS, enabled for the module: shared objects linked by
    the C compiler, then objects loaded by MCJIT (built as where no C compiler exists)."""
    linked = request.param == "shared"
    with artefacts_in(tmp_path_factory.mktemp("aot"), linked=linked) as folder:
        yield folder


def _artefact(key: FillKey) -> Any:
    kernel = aot.load(FILL, key)
    assert isinstance(kernel, aot.Entry), f"no artefact loaded for {key.name}"
    return kernel


def _numba(key: FillKey) -> Any:
    """numba's checked build of ``key``."""
    return family._numba(FILL, key)


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
def test_artefact_fills_the_check_job_like_numba_and_the_reference(
    built: Path, key: FillKey
) -> None:
    """The artefact's check job equals numba's build and the pure-Python reference."""
    digest = run_check(_artefact(key), key)
    assert digest == run_check(_numba(key), key)
    assert digest == reference_check(key)


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
def test_scratch_is_zero_after_a_call(
    built: Path, key: FillKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither build leaves words derived from the password in its scratch after a call."""
    made: list[Any] = []

    def recorded(make: Callable[[int], Any]) -> Callable[..., Any]:
        def make_and_record(*args: int) -> Any:
            made.append(result := make(*args))
            return result

        return make_and_record

    artefact, numba_kernel = _artefact(key), _numba(key)
    monkeypatch.setattr(fill_family, "scratch", recorded(fill_family.scratch))
    run_check(artefact, key)
    run_check(numba_kernel, key)
    arrays = [array for item in made for array in item]
    assert len(arrays) == 4 * len(SCRATCH[CHAINS[key.variant]])
    assert not any(any(bytes(memoryview(array))) for array in arrays)


def _vectors_of(key: FillKey, vectors: dict[str, Vector]) -> list[Vector]:
    wanted_variants = ("2014-03",) if key.variant else ("2015", "2014")
    chosen = []
    for vector in vectors.values():
        params = vector.params()
        if (
            params.variant in wanted_variants
            and params.hash_code == key.hash_type
            and params.lanes == key.lanes
            and vector.memory_bytes() <= _VECTOR_MEMORY
        ):
            chosen.append(vector)
    return chosen


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
def test_vectors_of_the_geometry_pass_through_the_artefact(
    built: Path, key: FillKey, twocats_vectors: dict[str, Vector]
) -> None:
    """Every small vector that runs this kernel reproduces its output through the artefact."""
    _artefact(key)
    engine = Engine(key.backend)
    vectors = _vectors_of(key, twocats_vectors)
    assert len(vectors) >= 20
    for vector in vectors:
        assert vector.compute(engine).hex() == vector.expected.hex(), vector.id
    assert isinstance(family._ready[key.name], aot.Entry)


@st.composite
def _slices(draw: st.DrawFn, key: FillKey) -> tuple[Any, ...]:
    """A random geometry for ``key``: both slices' arguments after ``mem`` and ``states``."""
    blocklen = draw(st.sampled_from([b for b in (8, 16, 32, 64, 128) if b >= key.lanes]))
    sub = draw(st.sampled_from([s for s in (8, 16, 32, 64, 128) if key.lanes <= s <= blocklen]))
    parallelism = draw(st.integers(1, 3))
    bpt = draw(st.integers(2, 6))
    first = draw(st.integers(1, bpt - 1))
    multiplies = draw(st.integers(0, 8))
    time_cost = draw(st.integers(0, 2)) if key.variant else None
    seed = draw(st.integers(0, 2**32 - 1))
    common = (bpt, blocklen, sub, parallelism, multiplies)
    return seed, common, first, time_cost


def _run(kernel: Callable[..., None], key: FillKey, case: tuple[Any, ...]) -> bytes:
    seed, (bpt, blocklen, sub, parallelism, multiplies), first, time_cost = case
    words = HASHES[key.hash_type].state_words
    rng = np.random.default_rng(seed)
    states = rng.integers(0, 2**32, size=(parallelism, words), dtype=np.uint32)
    mem = np.zeros(parallelism * bpt * blocklen, np.uint32)
    for done, per_slice, dependent in ((0, first, 0), (first, bpt - first, 1)):
        args = FillArgs(0, 1, done, per_slice, bpt, blocklen, sub, parallelism, multiplies,
                        dependent, time_cost)  # fmt: skip
        fill(kernel, key.variant, mem, states, args)
    return mem.tobytes() + states.tobytes()


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
def test_artefact_equals_numba_on_random_slices(built: Path, key: FillKey) -> None:
    """On random geometries, states and multiplies the artefact fills exactly like numba."""
    artefact, numba_kernel = _artefact(key), _numba(key)

    @settings(max_examples=60)
    @given(case=_slices(key))
    def check(case: tuple[Any, ...]) -> None:
        assert _run(artefact, key, case) == _run(numba_kernel, key, case)

    check()
