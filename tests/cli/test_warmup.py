"""``twocats warmup``: the kernels it chooses, its output, and a cache that later runs load from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.cli.warmup import artefacts_line
from twocats.hashes import HASHES
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.family import FILL
from twocats.lanes import primitives
from twocats.lanes.registry import FAMILIES
from twocats.params import Params
from twocats.profiles import PROFILES
from twocats.simd import _jit
from twocats.simd.family import Job, KernelKey, warm

compiled_only = pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="needs compiled kernels (NUMBA_DISABLE_JIT is set)"
)

# A child process that derives with the interactive profile's kernel (on a tiny memory) and prints
# how often the fill kernel was loaded from the disk cache and how often it was compiled.
_CHILD = """
from twocats import kdf
from twocats.params import Params
from twocats.kdf.fill.family import fill_variants
kdf.derive(b"pw", b"salt", Params(mem_cost=8, parallelism=1, multiplies=2))
kernel = fill_variants(8).get("simd")
print(sum(kernel._cache_hits.values()), sum(kernel._cache_misses.values()))
"""


def test_a_parameter_set_needs_the_fill_of_its_parameters() -> None:
    """A parameter set needs exactly its own fill: lanes, hash type and block hash; no lanes."""
    assert FILL.keys("simd", Params(hash_type="blake2b", lanes=16)) == [FillKey(16, "simd", 1, 0)]
    march = Params(variant="2014-03", lanes=4, mem_cost=12)
    assert FILL.keys("scalar", march) == [FillKey(4, "scalar", 0, 1)]
    assert all(family.keys("simd", march) == [] for family in FAMILIES)


def test_everything_covers_every_valid_fill_and_lane_kernel_once() -> None:
    """--all lists each (hash, lanes <= W, block hash) fill and each lane kernel exactly once."""
    kernels = FILL.keys("simd", None)
    assert len(kernels) == len(set(kernels))
    fills = {(k.hash_type, k.lanes, k.variant) for k in kernels}
    for facts in HASHES:
        for lanes in (1, 2, 4, 8, 16):
            for variant in (0, 1):
                assert ((facts.code, lanes, variant) in fills) == (lanes <= facts.state_words)
    names = ("blake2s", "blake2b", "sha256", "sha512", "sha1")
    assert primitives.FAMILY.keys("simd", None) == [
        KernelKey(f"lanes_{name}", "simd") for name in names
    ]
    lanes = [key.name for family in FAMILIES for key in family.keys("simd", None)]
    assert len(lanes) == len(set(lanes))
    for profile in PROFILES.values():
        assert set(FILL.keys("simd", profile)) <= set(kernels)


def test_reference_backend_is_refused_with_exit_status_2() -> None:
    """The reference backend has nothing to compile; the message says which backends do."""
    result = CliRunner().invoke(main, ["warmup", "--backend", "reference"])
    assert result.exit_code == 2
    assert "scalar or simd" in result.output


@pytest.mark.parametrize(
    "extra", [["--all"], ["--jobs", "2"], ["--shared"], ["--json"], ["--mem-cost", "10"]]
)
def test_wheel_refuses_every_other_option(extra: list[str]) -> None:
    """--wheel builds a wheel's own kernels: another option is a usage error, nothing built."""
    result = CliRunner().invoke(main, ["warmup", "--wheel", *extra])
    assert result.exit_code == 2
    assert "--wheel builds a wheel's own kernels and takes no other option" in result.output


def test_bad_parameters_are_refused_before_compiling() -> None:
    """A parameter set the library refuses is a usage error naming the parameter."""
    result = CliRunner().invoke(main, ["warmup", "--lanes", "3"])
    assert result.exit_code == 2
    assert "lanes" in result.output


@compiled_only
def test_warmup_fills_the_cache_that_a_later_process_loads(tmp_path: Path) -> None:
    """After warmup a new process loads the fill kernel from the cache and compiles nothing."""
    env = {**os.environ, "TWOCATS_CACHE_DIR": str(tmp_path)}
    env.pop("TWOCATS_BACKEND", None)
    command = [sys.executable, "-c", "from twocats.cli import main; main()"]
    done = subprocess.run(
        [*command, "warmup", "--profile", "interactive", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert list(document["kernels"]) == ["fill blake2s x8"]
    assert document["cache"] == str(tmp_path)
    assert list(tmp_path.rglob("*fill_final_l8_blake2s__simd*.nbi"))
    child = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True
    )
    hits, misses = map(int, child.stdout.split())
    assert (hits, misses) == (1, 0)


@compiled_only
def test_kernels_compiled_on_two_processes_land_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """warm with two processes reports every kernel once and caches each of them."""
    monkeypatch.setenv("TWOCATS_CACHE_DIR", str(tmp_path))
    jobs = [Job(FILL, FillKey(2, "simd", 0, 0)), Job(FILL, FillKey(4, "simd", 2, 0))]
    done = {job: seconds for job, seconds, _artefact in warm(jobs, 2)}
    assert sorted(done, key=jobs.index) == jobs
    assert all(seconds > 0 for seconds in done.values())
    assert list(tmp_path.rglob("*fill_final_l2_blake2s__simd*.nbi"))
    assert list(tmp_path.rglob("*fill_final_l4_sha256__simd*.nbi"))


def test_a_worker_that_does_not_answer_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker silent for longer than JOB_SECONDS ends the run with one error (it is stopped)."""
    from twocats.exceptions import BackendError
    from twocats.simd import family

    monkeypatch.setenv("TWOCATS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(family, "JOB_SECONDS", 0.001)
    jobs = [Job(FILL, FillKey(2, "simd", 0, 0)), Job(FILL, FillKey(4, "simd", 2, 0))]
    with pytest.raises(BackendError, match=r"no worker answered in 0\.001 s"):
        list(warm(jobs, 2))


@pytest.mark.parametrize(
    ("usable", "count", "line"),
    [
        (
            36,
            36,
            "36 of 36 kernels have an ahead-of-time artefact, which hashes load without numba",
        ),
        (1, 1, "1 of 1 kernel has an ahead-of-time artefact, which hashes load without numba"),
        (
            0,
            2,
            "0 of 2 kernels have an ahead-of-time artefact, which hashes load without numba",
        ),
    ],
)
def test_the_artefacts_line_says_what_the_count_means(usable: int, count: int, line: str) -> None:
    """warmup's summary names what the count is of: kernels with an ahead-of-time artefact."""
    assert artefacts_line(usable, count) == line
