"""The lanes' known-answer checks: compiled builds pass them, and a recompile replaces them."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from twocats.lanes import hash_many
from twocats.simd import _jit


@pytest.mark.parametrize("backend", ["simd", "scalar"])
def test_compiled_builds_pass_their_check(backend: str) -> None:
    """hash_many's compiled builds pass their checks and answer as hashlib does."""
    assert hash_many([b"abc"], "sha256", backend=backend) == [hashlib.sha256(b"abc").digest()]
    assert hash_many([b"abc"], "sha3-256", backend=backend) == [hashlib.sha3_256(b"abc").digest()]


RECOMPILE_CHILD = """
import hashlib
from twocats.lanes import hash_many
from twocats.lanes.scheduler import SCHEDULERS
from twocats.simd import _jit

kernel = SCHEDULERS["sha256"].get("scalar")
assert hash_many([b"abc"], "sha256", backend="scalar") == [hashlib.sha256(b"abc").digest()]
before = kernel.overloads[kernel.signatures[0]]
_jit.recompile_package("twocats.lanes")
assert kernel.overloads[kernel.signatures[0]] is not before
assert hash_many([b"abc"], "sha256", backend="scalar") == [hashlib.sha256(b"abc").digest()]
print("recompiled")
"""


def test_recompile_package_compiles_the_built_lane_kernels_afresh() -> None:
    """recompile_package replaces the compiled code of the lane kernels built so far."""
    if _jit.config.DISABLE_JIT:
        pytest.skip("no compiled kernels under NUMBA_DISABLE_JIT")
    result = subprocess.run(
        [sys.executable, "-c", RECOMPILE_CHILD],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "recompiled"
