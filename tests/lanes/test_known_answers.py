"""The lanes' known-answer check: the reference's table, and no answer from a disagreeing build."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import warnings

import pytest

from twocats.exceptions import BackendError
from twocats.lanes import hash_many, known_answers
from twocats.lanes.registry import ALGORITHMS
from twocats.simd import _jit, cache


def test_every_rows_known_answer_is_the_references() -> None:
    """Each row's known answer is the SHA-256 of the reference's digests of the sample."""
    for entry in ALGORITHMS.values():
        digests = entry.many(list(known_answers.SAMPLE), backend="reference")
        assert hashlib.sha256(b"".join(digests)).hexdigest() == entry.known_answer, entry.name


@pytest.mark.parametrize("backend", ["simd", "scalar"])
def test_compiled_builds_pass_their_check(backend: str) -> None:
    """hash_many's compiled builds pass the check and answer as hashlib does."""
    assert hash_many([b"abc"], "sha256", backend=backend) == [hashlib.sha256(b"abc").digest()]
    assert hash_many([b"abc"], "sha3-256", backend=backend) == [hashlib.sha3_256(b"abc").digest()]
    assert ("sha256", backend) in known_answers._checked or _jit.config.DISABLE_JIT


class _Build:
    """A multi-message function that answers wrongly until compiled afresh ``heals`` times."""

    def __init__(self, heals: int) -> None:
        self.wrong = heals

    def many(self, messages: list[bytes], *, backend: str) -> list[bytes]:
        reference = ALGORITHMS["sha256"].many(messages, backend="reference")
        return [b"\0" * 32 for _ in messages] if self.wrong > 0 else reference


@pytest.fixture
def fresh_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """No algorithm checked yet and no cache warning given in this process."""
    monkeypatch.setattr(known_answers, "_checked", set())
    monkeypatch.setattr(cache, "_warned", [False])
    monkeypatch.setattr(_jit.config, "DISABLE_JIT", False)


@pytest.mark.usefixtures("fresh_check")
@pytest.mark.parametrize("heals", [1, 2])
def test_a_wrong_build_compiles_afresh_once_and_never_answers_wrongly(
    monkeypatch: pytest.MonkeyPatch, heals: int
) -> None:
    """A disagreeing build compiles afresh with one warning; if it still disagrees, it raises."""
    build = _Build(heals)
    recompiled: list[str] = []

    def recompile(package: str) -> None:
        recompiled.append(package)
        build.wrong -= 1

    monkeypatch.setattr(_jit, "recompile_package", recompile)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if heals == 1:
            known_answers.check_compiled(
                "sha256", build.many, "simd", known_answer=ALGORITHMS["sha256"].known_answer
            )
        else:
            with pytest.raises(BackendError, match="known-answer check"):
                known_answers.check_compiled(
                    "sha256", build.many, "simd", known_answer=ALGORITHMS["sha256"].known_answer
                )
    assert recompiled == ["twocats.lanes"]
    assert [str(w.message) for w in caught] == [
        "twocats: the simd build of sha256 fails its known-answer check; its kernels compile afresh"
    ]
    assert (("sha256", "simd") in known_answers._checked) == (heals == 1)


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
