"""``python -m bench gpu``: without a GPU one line and exit 0, never a figure; its byte counts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.attacker import gpu
from tests.support.gpu_support import gpu_available, need_numba_cuda
from twocats.profiles import CHEAPEST, INTERACTIVE

ROOT = Path(__file__).resolve().parents[2]


def _bench_gpu(tmp_path: Path, *args: str, simulator: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "bench", "gpu", "--out", str(tmp_path / "out"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _assert_nothing_measured(done: subprocess.CompletedProcess[str], tmp_path: Path) -> None:
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    assert lines[0].startswith("bench gpu: nothing measured: ")
    assert not any(ch.isdigit() for ch in lines[0].replace("NUMBA_ENABLE_CUDASIM=1", ""))
    assert not (tmp_path / "out").exists()


def test_the_simulator_is_never_measured(tmp_path: Path) -> None:
    """In numba's CUDA simulator the suite says so in one line, exits 0 and writes no file."""
    need_numba_cuda()
    done = _bench_gpu(tmp_path, simulator=True)
    _assert_nothing_measured(done, tmp_path)
    assert "simulator" in done.stdout


def test_without_a_gpu_nothing_is_measured(tmp_path: Path) -> None:
    """Without a CUDA GPU the suite and its smoke run say so in one line and exit 0."""
    need_numba_cuda()
    if gpu_available():
        pytest.skip("this machine has a CUDA GPU: bench gpu measures it")
    for args in ((), ("--smoke",)):
        done = _bench_gpu(tmp_path, *args, simulator=False)
        _assert_nothing_measured(done, tmp_path)
        assert "no CUDA GPU" in done.stdout


def test_bytes_each_guess_must_move() -> None:
    """The ceilings' byte counts: one reference read and one write per block, as documented."""
    # CHEAPEST: one level, one region of 32 blocks of 32 bytes; block 0 is only written.
    assert gpu.twocats_traffic(CHEAPEST) == 32 * (2 * 32 - 1)
    # INTERACTIVE: 64 MiB in two regions of 16 KiB blocks, after 1/64 and smaller overwrite levels.
    main_level = 16384 * (2 * 4096 - 2)
    assert main_level < gpu.twocats_traffic(INTERACTIVE) < main_level * 1.02
    one_pass = gpu.argon2id_traffic(_Argon2(blocks=8, parallelism=1, time_cost=1))
    assert one_pass == 1024 * (2 * 8 - 2)
    two_passes = gpu.argon2id_traffic(_Argon2(blocks=16, parallelism=2, time_cost=2))
    assert two_passes == 1024 * (2 * 16 - 4) + 1024 * 3 * 16


class _Argon2:
    """The fields of twocats.gpu.argon2.Argon2Params the byte count reads."""

    def __init__(self, blocks: int, parallelism: int, time_cost: int) -> None:
        self.blocks = blocks
        self.parallelism = parallelism
        self.time_cost = time_cost


def test_the_docs_section_without_a_result_gives_no_figure() -> None:
    """With no gpu.json the performance page's section says it waits for a GPU, with no number."""
    (text,) = gpu.docs_section(None)
    assert "Not measured yet" in text
    assert not any(ch.isdigit() for ch in text.replace("argon2id", ""))
