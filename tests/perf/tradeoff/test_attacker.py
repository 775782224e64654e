"""The attacker's verdict beside ``compare``: best attacks, speed-ups and the chain's bound."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff import attacker
from twocats.profiles import CHEAPEST, MODERATE
from twocats.simd import _jit


def _rows(assumptions: attacker.Assumptions) -> list[attacker.AttackerRow]:
    defender = attacker.Defender(0.01, CHEAPEST.memory_bytes, 64 * 1024, 1)
    return attacker.attacker_rows(CHEAPEST, defender, assumptions, [0])


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
    main_level = 8192 * 512 * 6
    assert multiplications >= main_level
    assert attacker.chain_bound(MODERATE, 0.25, 1.0) == pytest.approx(
        0.25 / (multiplications * 1e-9)
    )
    capped = _rows(attacker.Assumptions({"twocats": 1e6}, multiply_ns=1.0))
    bound = attacker.chain_bound(CHEAPEST, 0.01, 1.0)
    assert capped[0].speedup == pytest.approx(min(1e6, bound))


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


# In plain Python TwoCats is slow, so argon2id's equal-time memory, and its graph, grow large.
@pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="compiled kernels only (NUMBA_DISABLE_JIT is set)"
)
def test_compare_attacker_json_rows() -> None:
    """--attacker --json adds each algorithm's best attack, its gains and the relative cost."""
    result = CliRunner().invoke(
        main,
        [
            "compare", "--memory", "1MiB", "--runs", "1", "--parallelism", "1", "--attacker",
            "--asic-speedup", "twocats=2", "--json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    rows = document["attacker"]
    assert [row["algorithm"] for row in rows] == list(attacker.ALGORITHMS)
    equal_time = {r["algorithm"]: r for r in document["rows"] if r["comparison"] == "equal time"}
    assert rows[0]["memory_bytes"] == equal_time["twocats"]["memory_bytes"]
    assert rows[2]["memory_bytes"] == equal_time["argon2id"]["memory_bytes"]
    assert rows[2]["relative_cost"] == 1.0
    assert rows[0]["asic_speedup"] == 2.0
    for row in rows:
        assert row["E"] == max(entry["E"] for entry in row["attacks"])
        assert row["E_free_cores"] >= row["E"]


def test_compare_refuses_a_bad_speedup_before_measuring() -> None:
    """--asic-speedup with an unknown name is a usage error."""
    result = CliRunner().invoke(main, ["compare", "--attacker", "--asic-speedup", "md5=3"])
    assert result.exit_code == 2
    assert "names one of" in result.stderr


def test_compare_without_attacker_has_no_attacker_rows() -> None:
    """Without --attacker the compare document is unchanged: no attacker key."""
    result = CliRunner().invoke(
        main, ["compare", "--memory", "1MiB", "--runs", "1", "--parallelism", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert "attacker" not in json.loads(result.stdout)
