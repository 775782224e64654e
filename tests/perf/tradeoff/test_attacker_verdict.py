"""The attacker's verdict as a function: best attacks, assumed speed-ups and the chain's bound."""

from __future__ import annotations

import pytest

from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff import attacker
from twocats.profiles import CHEAPEST, MODERATE


def _rows(
    assumptions: attacker.Assumptions, seconds: float | None = 0.01
) -> list[attacker.AttackerRow]:
    return attacker.attacker_rows(
        CHEAPEST, CHEAPEST.memory_bytes, 64 * 1024, 1, [0], assumptions=assumptions, seconds=seconds
    )


def test_verdict_rows_cost_relative_to_argon2id() -> None:
    """Each row's cost is memory / (E * speed-up) over argon2id's; speed-ups are inputs."""
    plain = _rows(attacker.Assumptions())
    assert [row.algorithm for row in plain] == list(attacker.ALGORITHMS)
    base = next(row for row in plain if row.algorithm == "argon2id")
    assert base.relative_cost == 1.0
    for row in plain:
        chosen = row.verdict.best
        expected = (row.memory_bytes / chosen.gain) / (base.memory_bytes / base.verdict.best.gain)
        assert row.relative_cost == pytest.approx(expected)
        assert row.document()["best_attack"] == chosen.attack
    faster = _rows(attacker.Assumptions({"twocats": 4.0}))
    assert faster[0].relative_cost == pytest.approx(plain[0].relative_cost / 4)


def test_chain_bound_caps_twocats_speedups() -> None:
    """The chain's bound is the defender's time over chain multiplications times the latency."""
    multiplications = attacker.chain_multiplications(MODERATE)
    # 2^18 KiB in 16 KiB blocks over 2 regions: 8192 blocks a region, 512 rows, 6 multiplications.
    assert multiplications >= 8192 * 512 * 6
    floor = multiplications * 1e-9
    assert attacker.chain_bound(MODERATE, 0.25, 1.0) == pytest.approx(0.25 / floor)
    capped = _rows(attacker.Assumptions({"twocats": 1e6}, multiply_ns=1.0))
    bound = attacker.chain_bound(CHEAPEST, 0.01, 1.0)
    assert capped[0].speedup == pytest.approx(min(1e6, bound))
    with pytest.raises(InvalidParametersError, match="defender's time"):
        _rows(attacker.Assumptions(multiply_ns=1.0), seconds=None)


@pytest.mark.parametrize(
    ("speedups", "multiply_ns", "message"),
    [
        ({"scrypt": 2.0}, None, "names one of"),
        ({"twocats": 0.0}, None, "from 0.001"),
        ({}, 0.0, "ns"),
    ],
)
def test_bad_assumptions_are_refused(
    speedups: dict[str, float], multiply_ns: float | None, message: str
) -> None:
    """Unknown algorithms and out-of-range figures are clear errors."""
    with pytest.raises(InvalidParametersError, match=message):
        attacker.Assumptions(speedups, multiply_ns)
