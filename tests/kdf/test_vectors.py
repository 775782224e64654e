"""Every TwoCats known-answer vector on every backend.

The compiled backends run every vector, up to 2 GiB of work memory (both PHC mailing-list vectors
among them): the 16 cases above 64 MiB take seconds.  The pure-Python reference runs the cheap
vectors and, beyond those, the cheapest vector of every feature not yet covered (variant x entry
point x hash type, lanes, multiplies, time cost, side-channel mode), which keeps it near a minute;
its other vectors of at most 4 MiB are marked ``slow``.  The reference
repository's own 3202 vectors run through ``twocats selftest`` when the shared folder exists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats.cli.selftest import selftest
from twocats.kdf import geometry
from twocats.kdf.engine import Engine
from twocats.kdf.vectors import Vector, load_vectors
from twocats.params import Params

VECTORS_DIR = Path(__file__).resolve().parents[1] / "vectors"
TWOCATS_FILES = ("twocats-2015.jsonl", "twocats-2014.jsonl", "twocats-2014-03.jsonl")
BACKENDS = ("reference", "scalar", "simd")

#: Vectors needing more work memory than this run on an engine of their own.
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


#: The two vectors posted to the PHC mailing list in March 2014 for ``twocats -m21 -M0`` with
#: eight lanes and with one (password "password", salt "salt", 16 KiB blocks, 64-byte sub-blocks).
MAILING_LIST = {
    8: "53dc33f3b4861efb961cc1935b7d792adf068640390827e7e6761b5ae42da02f",
    1: "c44bd0df16eddf100a4dff2731fa58075b98ca123e19fe1a16bd2c33545590b3",
}


@pytest.mark.parametrize("backend", ["scalar", "simd"])
@pytest.mark.parametrize("lanes", sorted(MAILING_LIST))
def test_mailing_list_vectors(backend: str, lanes: int) -> None:
    """Both PHC mailing-list vectors (2 GiB each) are computed and equal the posted outputs."""
    params = Params(
        variant="2014-03",
        mem_cost=21,
        time_cost=0,
        multiplies=0,
        lanes=lanes,
        parallelism=2,
        block_size=16384,
        sub_block_size=64,
        hash_size=32,
    )
    engine = Engine(backend)
    try:
        output = engine.derive(b"password", b"salt", params)
    finally:
        engine.release()
    assert output.hex() == MAILING_LIST[lanes]
    assert MAILING_LIST[lanes] in {v.expected.hex() for v in VECTORS if v.variant == "2014-03"}


#: The final-version vectors the independent model did not check (see vectors/README.md).
UNCHECKED_BY_MODEL = {
    "tc-0033", "tc-0132", "tc-0133", "tc-0213", "tc-0214", "tc-0215",
    "tc-0216", "tc-0218", "tc-0232", "tc-0247", "tc-0277", "tc-0283",
}  # fmt: skip


def test_readme_names_the_vectors_the_model_did_not_check() -> None:
    """The README's list of final-version vectors not checked by the model is the file's."""
    with (VECTORS_DIR / "twocats-2015.jsonl").open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    unchecked = {r["id"] for r in records if not r["independent_model_checked"]}
    assert unchecked == UNCHECKED_BY_MODEL
    readme = (VECTORS_DIR / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Vectors not checked by the independent model")[1].split("\n## ")[0]
    named = set(re.findall(r"`(tc-\d{4})`", section))
    named |= {f"tc-{n:04d}" for n in range(213, 217)}  # written as a range there
    assert named == UNCHECKED_BY_MODEL


@pytest.mark.parametrize("backend", ["scalar", "simd"])
def test_official_vectors_through_selftest(backend: str, shared_vectors_dir: Path) -> None:
    """The reference repository's 3202 official vectors pass through ``twocats selftest``."""
    path = shared_vectors_dir / "twocats-2015-official.jsonl"
    result = CliRunner().invoke(selftest, ["--vectors", str(path), "--backend", backend])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "3202 passed, 0 failed"
