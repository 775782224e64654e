"""The GPU kernels in numba's CUDA simulator: TwoCats and Argon2id bit for bit, on every machine."""

from __future__ import annotations

import pytest

from tests.support.gpu_support import (
    Case,
    argon2id_cases,
    need_numba_cuda,
    run_cases,
    twocats_cases,
)

CASES = [*twocats_cases(), *argon2id_cases()]


@pytest.fixture(scope="module")
def outputs() -> dict[str, tuple[bytes, ...]]:
    """Every case's outputs, from one simulator process for the whole module."""
    need_numba_cuda()
    return {
        case.name: got for case, got in zip(CASES, run_cases(CASES, simulator=True), strict=True)
    }


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_simulated_kernel_matches(case: Case, outputs: dict[str, tuple[bytes, ...]]) -> None:
    """The simulated kernel gives the expected output of every guess of the batch."""
    assert outputs[case.name] == case.expected
