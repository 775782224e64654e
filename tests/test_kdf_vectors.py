"""Every TwoCats known-answer vector on every backend.

The compiled backends run every vector that needs at most 64 MiB of work memory; the larger ones
(up to 2 GiB, including both PHC mailing-list vectors) carry the ``slow`` marker.  The pure-Python
reference runs the cheap vectors and, beyond those, the cheapest vector of every feature not yet
covered (variant x entry point x hash type, lanes, multiplies, time cost, side-channel mode), which
keeps it near a minute; its other vectors of at most 4 MiB are marked ``slow``.  The reference
repository's own 3202 vectors run through ``twocats selftest`` when the shared folder exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats.cli.selftest import selftest
from twocats.kdf import geometry
from twocats.kdf.engine import Engine
from twocats.kdf.vectors import Vector, load_vectors

VECTORS_DIR = Path(__file__).resolve().parent / "vectors"
TWOCATS_FILES = ("twocats-2015.jsonl", "twocats-2014.jsonl", "twocats-2014-03.jsonl")
BACKENDS = ("reference", "scalar", "simd")

#: Compiled backends run vectors up to this much work memory in the default (not slow) suite.
FAST_MEMORY = 64 << 20

#: The reference runs every vector up to this estimated cost (word operations, see _cost) ...
REFERENCE_CHEAP = 1 << 17

#: ... and, for coverage, vectors up to this cost; its other vectors up to REFERENCE_SLOW_MEMORY
#: bytes are marked slow.
REFERENCE_COVERAGE = 3_500_000
REFERENCE_SLOW_MEMORY = 4 << 20

VECTORS = [v for name in TWOCATS_FILES for v in load_vectors(VECTORS_DIR / name)]


def _levels(vector: Vector) -> list[geometry.LevelPlan]:
    params = vector.params()
    if vector.api == "server":
        return []
    if vector.api == "update":
        return list(geometry.plan(params, old_mem_cost=vector.old_mem_cost))
    levels = list(geometry.plan(params))
    if vector.api == "extended+update":
        later = geometry.plan(vector.update_params(), old_mem_cost=vector.old_mem_cost)
        levels.extend(later)
    return levels


def _cost(vector: Vector) -> float:
    """Estimate the reference's work: words written, times repetitions and the multiply chain."""
    params = vector.params()
    total = 0.0
    for level in _levels(vector):
        repetitions = 1.0
        if params.variant == "2014-03":
            repetitions = float(1 << (params.time_cost or 0))
        elif params.variant == "2014" and level.main:
            repetitions = (3 + (1 << (params.time_cost or 0))) / 4
        chain = (params.lanes + params.multiplies) / params.lanes
        total += level.words * repetitions * chain
    return total


def _features(vector: Vector) -> set[tuple[object, ...]]:
    params = vector.params()
    variant = vector.variant
    return {
        (variant, vector.api, vector.hash_type),
        (variant, "lanes", params.lanes),
        (variant, "multiplies", params.multiplies),
        (variant, "time_cost", params.time_cost),
        (variant, "side_channel_resistant", params.side_channel_resistant),
    }


def _reference_selection() -> set[str]:
    """The ids the reference runs by default: cheap ones, then coverage, cheapest first."""
    ordered = sorted(VECTORS, key=lambda v: (_cost(v), v.id))
    chosen = {v.id for v in ordered if _cost(v) <= REFERENCE_CHEAP}
    covered = set().union(*(_features(v) for v in ordered if v.id in chosen))
    for vector in ordered:
        if vector.id in chosen or _cost(vector) > REFERENCE_COVERAGE:
            continue
        if _features(vector) - covered:
            chosen.add(vector.id)
            covered |= _features(vector)
    return chosen


REFERENCE_SELECTION = _reference_selection()


def _cases() -> Iterator[object]:
    for vector in VECTORS:
        memory = vector.memory_bytes()
        for backend in BACKENDS:
            marks: list[pytest.MarkDecorator] = []
            if backend == "reference" and vector.id not in REFERENCE_SELECTION:
                if memory > REFERENCE_SLOW_MEMORY:
                    continue
                marks.append(pytest.mark.slow)
            elif memory > FAST_MEMORY:
                marks.append(pytest.mark.slow)
            yield pytest.param(backend, vector, id=f"{backend}-{vector.id}", marks=marks)


@pytest.mark.parametrize(("backend", "vector"), list(_cases()))
def test_vector(backend: str, vector: Vector, engine_for: Callable[[str], Engine]) -> None:
    """The backend reproduces the vector's published output bit for bit."""
    if vector.memory_bytes() > FAST_MEMORY:
        # A private engine, so that the session's shared engines do not keep gigabytes alive.
        engine = Engine(backend)
        try:
            output = vector.compute(engine)
        finally:
            engine.release()
    else:
        output = vector.compute(engine_for(backend))
    assert output.hex() == vector.expected.hex()


def test_reference_selection_covers_every_variant_and_entry_point() -> None:
    """The reference's default selection covers every (variant, entry point, hash type) present."""
    present = {(v.variant, v.api, v.hash_type) for v in VECTORS if _cost(v) <= REFERENCE_COVERAGE}
    selected = {(v.variant, v.api, v.hash_type) for v in VECTORS if v.id in REFERENCE_SELECTION}
    assert selected == present


def test_mailing_list_vectors_are_present() -> None:
    """Both PHC mailing-list vectors of March 2014 are among the vectors this module runs."""
    outputs = {v.expected.hex()[:8] for v in VECTORS if v.variant == "2014-03"}
    assert {"53dc33f3", "c44bd0df"} <= outputs


@pytest.mark.parametrize("backend", ["scalar", "simd"])
def test_official_vectors_through_selftest(backend: str, shared_vectors_dir: Path) -> None:
    """The reference repository's 3202 official vectors pass through ``twocats selftest``."""
    path = shared_vectors_dir / "twocats-2015-official.jsonl"
    result = CliRunner().invoke(selftest, ["--vectors", str(path), "--backend", backend])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "3202 passed, 0 failed"
