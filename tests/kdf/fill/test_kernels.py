"""The compiled slice fill (scalar and simd) equals the pure-Python reference slice by slice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twocats.exceptions import BackendError, InvalidParametersError
from twocats.hashes import HASHES
from twocats.kdf.fill.args import DIGEST_AT, LANES
from twocats.kdf.fill.family import fill_variants
from twocats.kdf.fill.statehash import SCRATCH_WORDS, STATE_HASHES
from twocats.kdf.fill.threads import get_fill_slice, kernel_asm
from twocats.kdf.geometry import SliceJob
from twocats.kdf.reference import fill_slice as reference_fill
from twocats.kdf.reference import state_hash as reference_state_hash
from twocats.simd import _jit
from twocats.simd.asm import profile_asm
from twocats.simd.isa import enabled_features, host_arch, host_target

BACKENDS = ("scalar", "simd")
# With NUMBA_DISABLE_JIT=1 (the coverage run) the kernels are plain Python functions.
compiled_only = pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="compiled kernels only (NUMBA_DISABLE_JIT is set)"
)
STATE_WORDS = (8, 16, 8, 16)
# Words past the regions; a kernel must leave them alone.
SLACK = 7


@dataclass(frozen=True)
class Case:
    """One slice of one level: geometry, parameters and the seed of its random start."""

    variant: int
    hash_type: int
    lanes: int
    blocklen: int
    sub_blocklen: int
    parallelism: int
    per_slice: int
    slice_index: int
    dependent: bool
    multiplies: int
    time_cost: int
    seed: int

    def job(self) -> SliceJob:
        """The seam's argument record."""
        return SliceJob(
            self.slice_index * self.per_slice,
            self.per_slice,
            4 * self.per_slice,
            self.blocklen,
            self.sub_blocklen,
            self.parallelism,
            self.lanes,
            self.multiplies,
            self.dependent,
            self.hash_type,
            self.variant,
            self.time_cost,
        )

    def start(self) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
        """Random memory (regions plus slack) and region states."""
        rng = np.random.default_rng(self.seed)
        words = self.parallelism * 4 * self.per_slice * self.blocklen + SLACK
        mem = rng.integers(0, 1 << 32, size=words, dtype=np.uint32)
        states = rng.integers(
            0, 1 << 32, size=(self.parallelism, STATE_WORDS[self.hash_type]), dtype=np.uint32
        )
        return mem, states


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """Small random slices over every variant, hash type, lane count and addressing mode."""
    variant = draw(st.sampled_from((0, 1)))
    hash_type = draw(st.integers(0, 3))
    words = STATE_WORDS[hash_type]
    lanes = draw(st.sampled_from([lanes for lanes in LANES if lanes <= words]))
    # 64-byte sub-blocks (16 words) have a path of their own in the kernels.
    sub_blocklen = draw(st.sampled_from(sorted({lanes, 2 * lanes, 4 * lanes, max(lanes, 16)})))
    blocklen = sub_blocklen << draw(st.integers(0, 3))
    if variant == 0:
        # The final block hash needs blockSize >= S, so Expand fills block 0 whole.
        while blocklen < words:
            blocklen *= 2
    blocklen = min(blocklen, 256)
    slice_index = draw(st.integers(0, 3))
    return Case(
        variant=variant,
        hash_type=hash_type,
        lanes=lanes,
        blocklen=blocklen,
        sub_blocklen=min(sub_blocklen, blocklen),
        parallelism=draw(st.integers(1, 3)),
        per_slice=draw(st.integers(1, 4)),
        slice_index=slice_index,
        dependent=slice_index >= 1 and draw(st.booleans()),
        multiplies=draw(st.integers(0, 8)),
        time_cost=draw(st.integers(0, 2)) if variant == 1 else 0,
        seed=draw(st.integers(0, 2**32 - 1)),
    )


def run(backend: str, case: Case) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """Fill the case's slice with ``backend`` ("reference", "scalar" or "simd")."""
    mem, states = case.start()
    fill = reference_fill if backend == "reference" else get_fill_slice(backend)
    fill(mem, states, case.job())
    return mem, states


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_compiled_fill_equals_reference(backend: str, case: Case) -> None:
    """Memory (slack included) and states after one slice equal the reference's."""
    want_mem, want_states = run("reference", case)
    got_mem, got_states = run(backend, case)
    np.testing.assert_array_equal(got_mem, want_mem)
    np.testing.assert_array_equal(got_states, want_states)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lanes", LANES)
@pytest.mark.parametrize("variant", [0, 1])
def test_every_kernel_on_a_whole_level(backend: str, lanes: int, variant: int) -> None:
    """Four slices in a row from zeroed memory, as a level runs them, match the reference."""
    hash_type = 0 if lanes <= 8 else 1
    words = STATE_WORDS[hash_type]
    blocklen, sub_blocklen, parallelism, per_slice = 64, max(lanes, 16), 2, 3
    multiplies = 3 if variant == 0 else 2
    time_cost = variant
    rng = np.random.default_rng(lanes)
    start = rng.integers(0, 1 << 32, size=(parallelism, words), dtype=np.uint32)
    results = []
    for fill in (reference_fill, get_fill_slice(backend)):
        mem = np.zeros(parallelism * 4 * per_slice * blocklen, dtype=np.uint32)
        states = start.copy()
        for s in range(4):
            dependent = s >= 2
            job = SliceJob(
                s * per_slice, per_slice, 4 * per_slice, blocklen,
                sub_blocklen if dependent else blocklen, parallelism, lanes, multiplies,
                dependent, hash_type, variant, time_cost,
            )  # fmt: skip
            fill(mem, states, job)
        results.append((mem, states))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])


def test_benchmark_geometry_matches_reference() -> None:
    """16 KiB blocks with 64-byte sub-blocks, 8 lanes, multiplies 2 (the benchmark shape)."""
    case = Case(
        variant=0, hash_type=0, lanes=8, blocklen=4096, sub_blocklen=16, parallelism=1,
        per_slice=2, slice_index=3, dependent=True, multiplies=2, time_cost=0, seed=11,
    )  # fmt: skip
    want_mem, want_states = run("reference", case)
    for backend in BACKENDS:
        got_mem, got_states = run(backend, case)
        np.testing.assert_array_equal(got_mem, want_mem)
        np.testing.assert_array_equal(got_states, want_states)


@pytest.mark.parametrize("variant", [0, 1])
def test_result_does_not_depend_on_thread_count(variant: int) -> None:
    """Regions filled by 1, 2 or 3 threads give the same memory and states, on both backends."""
    hash_type, lanes, blocklen, parallelism, per_slice = 2, 8, 1024, 3, 24
    rng = np.random.default_rng(variant)
    start = rng.integers(0, 1 << 32, size=(parallelism, 8), dtype=np.uint32)
    outcomes = []
    for backend in BACKENDS:
        for threads in (1, 2, 3):
            fill = get_fill_slice(backend, threads=threads)
            mem = np.zeros(parallelism * 4 * per_slice * blocklen, dtype=np.uint32)
            states = start.copy()
            for s in range(4):
                dependent = s >= 2
                job = SliceJob(
                    s * per_slice, per_slice, 4 * per_slice, blocklen,
                    16 if dependent else blocklen, parallelism, lanes, 2, dependent, hash_type,
                    variant, 0,
                )  # fmt: skip
                fill(mem, states, job)
            outcomes.append((mem, states))
    for mem, states in outcomes[1:]:
        np.testing.assert_array_equal(mem, outcomes[0][0])
        np.testing.assert_array_equal(states, outcomes[0][1])


@pytest.mark.parametrize("hash_type", [0, 1, 2, 3])
@pytest.mark.parametrize("big_endian", [False, True])
def test_state_hash_equals_reference(hash_type: int, big_endian: bool) -> None:
    """The kernels' allocation-free Hv of one region's state equals the byte-level reference."""
    words = STATE_WORDS[hash_type]
    rng = np.random.default_rng(hash_type + 4 * big_endian)
    for p in (0, 2):
        states = rng.integers(0, 1 << 32, size=(3, words), dtype=np.uint32)
        before = states.copy()
        value = int(rng.integers(0, 1 << 32))
        w32 = np.zeros(SCRATCH_WORDS, np.uint32)
        w64 = np.zeros(SCRATCH_WORDS, np.uint64)
        # Plain-Python runs (NUMBA_DISABLE_JIT) wrap uint32 sums as numpy scalars, on purpose.
        with np.errstate(over="ignore"):
            STATE_HASHES[hash_type](big_endian, states, np.uint64(p), np.uint64(value), w32, w64)
        want = reference_state_hash(hash_type, states[p].tolist(), value, big_endian)
        assert w32[DIGEST_AT : DIGEST_AT + words].tolist() == want
        np.testing.assert_array_equal(states, before)


@compiled_only
def test_kernels_release_the_gil() -> None:
    """Every fill kernel is compiled nogil, so regions really run in parallel."""
    for backend in BACKENDS:
        for lanes in LANES:
            if lanes <= HASHES[0].state_words:
                # The dispatcher's options, without compiling it.
                build = fill_variants(lanes).get(backend)
                assert build.targetoptions.get("nogil") is True


@compiled_only
@pytest.mark.skipif(
    host_arch() != "x86_64", reason="x86 assembly (AArch64: tests/ci/test_arm64.py)"
)
def test_simd_kernel_uses_vector_instructions_and_scalar_does_not() -> None:
    """The 8-lane simd kernel packs its lanes into ymm/zmm; the scalar build has no such ops.

    AVX-512 rotates a vector in one instruction; AVX2 has none, so there the fill's rotate by
    8 bits is a byte shuffle.
    """
    simd_ops = profile_asm(kernel_asm(8, "simd")).wide_mnemonics()
    scalar = profile_asm(kernel_asm(8, "scalar"))
    if "avx512f" in enabled_features(host_target()[1]):
        assert simd_ops & {"vprold", "vprord"}, "no vector rotate in the simd fill kernel"
    else:
        assert "vpshufb" in simd_ops, "no vector rotate in the simd fill kernel"
    assert "vpaddd" in simd_ops, "no vector add in the simd fill kernel"
    assert not scalar.wide_mnemonics()


#: A fresh process that changes a NUMBA_ variable after numba has read its environment, then
#: compiles the 8-lane simd kernel and prints the vector mnemonics of its assembly.
_LATE_ENVIRONMENT = """
import os, sys
import numba
os.environ["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = "1"
from twocats.simd.asm import profile_asm
from twocats.kdf.fill.threads import kernel_asm
print(" ".join(sorted(profile_asm(kernel_asm(8, "simd")).wide_mnemonics())))
"""


def test_a_numba_variable_set_at_run_time_leaves_the_simd_kernel_vectorized(
    tmp_path: Path,
) -> None:
    """numba re-reads its settings when a NUMBA_ variable changes; the simd build stays vector."""
    env = {**os.environ, "TWOCATS_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", None)
    done = subprocess.run(
        [sys.executable, "-c", _LATE_ENVIRONMENT], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) == profile_asm(kernel_asm(8, "simd")).wide_mnemonics()


def test_unknown_backend_is_rejected() -> None:
    """Only "scalar" and "simd" have compiled fills; the message names them."""
    with pytest.raises(BackendError, match="scalar, simd"):
        get_fill_slice("reference")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"lanes": 3}, "lanes"),
        ({"multiplies": 9}, "multiplies"),
        ({"variant": 2}, "variant"),
        ({"time_cost": 1}, "time_cost"),
        ({"hash_type": 4}, "hash_type"),
        ({"sub_blocklen": 12}, "sub_blocklen"),
        ({"blocklen": 24}, "blocklen"),
        ({"done": 0, "dependent": True}, "done >= 1"),
        ({"done": 14}, "blocks out of range"),
        ({"bpt": 64}, "mem is too small"),
        ({"parallelism": 2}, "states must be"),
    ],
)
def test_bad_seam_arguments_raise(change: dict[str, int | bool], message: str) -> None:
    """Arguments that would let a kernel write outside its arrays raise InvalidParametersError."""
    arguments: dict[str, int | bool] = {
        "done": 4, "per_slice": 4, "bpt": 16, "blocklen": 16, "sub_blocklen": 8,
        "parallelism": 1, "lanes": 8, "multiplies": 2, "dependent": True, "hash_type": 0,
        "variant": 0, "time_cost": 0,
    }  # fmt: skip
    arguments.update(change)
    mem = np.zeros(16 * 16, dtype=np.uint32)
    states = np.zeros((1, 8), dtype=np.uint32)
    with pytest.raises(InvalidParametersError, match=message):
        get_fill_slice("scalar")(mem, states, SliceJob(**arguments))  # type: ignore[arg-type]


def test_read_only_memory_is_rejected() -> None:
    """A read-only work area is refused before any kernel runs."""
    mem = np.zeros(256, dtype=np.uint32)
    mem.flags.writeable = False
    states = np.zeros((1, 8), dtype=np.uint32)
    with pytest.raises(InvalidParametersError, match="mem must be"):
        get_fill_slice("simd")(mem, states, SliceJob(0, 4, 16, 16, 16, 1, 8, 0, False, 0, 0, 0))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_threaded_fill_works_in_a_forked_child() -> None:
    """A child forked after the pool started fills with threads instead of hanging on dead ones."""
    fill = get_fill_slice("simd", threads=2)
    parallelism, per_slice, blocklen = 2, 16, 4096
    mem = np.zeros(parallelism * 4 * per_slice * blocklen, dtype=np.uint32)
    states = np.ones((parallelism, 8), dtype=np.uint32)
    bpt = 4 * per_slice
    job = SliceJob(0, per_slice, bpt, blocklen, blocklen, parallelism, 8, 0, False, 0, 0, 0)
    fill(mem, states, job)
    want = mem.copy()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        mem[:] = 0
        states[:] = 1
        fill(mem, states, job)
        os._exit(0 if np.array_equal(mem, want) else 1)
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the threaded fill hung in the forked child")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0
