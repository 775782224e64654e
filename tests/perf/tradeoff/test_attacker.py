"""``twocats compare --attacker``: the best attack's gain beside the equal-time rows."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.simd import _jit


# In plain Python TwoCats is slow, so argon2id's equal-time memory, and its graph, grow large.
@pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="compiled kernels only (NUMBA_DISABLE_JIT is set)"
)
def test_compare_attacker_json_rows() -> None:
    """--attacker --json adds each algorithm's best attack, its gains and its relative cost."""
    result = CliRunner().invoke(
        main,
        [
            "compare",
            "--mem-cost",
            "10",
            "--min-rounds",
            "2",
            "--time-limit",
            "1ms",
            "--parallelism",
            "1",
            "--attacker",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    rows = document["attacker"]
    assert [row["algorithm"] for row in rows] == [
        "twocats", "twocats-side-channel-resistant", "argon2id", "argon2i",
    ]  # fmt: skip
    # The memories are the equal-time ratio's: TwoCats' own and argon2id's in TwoCats' time.
    assert rows[0]["memory_bytes"] == document["equal_time"]["twocats_memory_bytes"] == 1 << 20
    assert rows[2]["memory_bytes"] == document["equal_time"]["argon2id_memory_bytes"]
    assert rows[2]["relative_cost"] == 1.0
    for row in rows:
        assert row["E"] == max(attack["E"] for attack in row["attacks"])
        assert row["E_free_cores"] >= row["E"]
        assert row["best_attack"] in {attack["attack"] for attack in row["attacks"]}
        expected = (row["memory_bytes"] / row["E"]) / (rows[2]["memory_bytes"] / rows[2]["E"])
        assert abs(row["relative_cost"] - expected) < 1e-12


def test_compare_without_attacker_has_no_attacker_rows() -> None:
    """Without --attacker the compare document is unchanged: no attacker key."""
    result = CliRunner().invoke(
        main,
        ["compare", "--mem-cost", "10", "--min-rounds", "2", "--time-limit", "1ms", "--json"],
    )
    assert result.exit_code == 0, result.output
    assert "attacker" not in json.loads(result.stdout)
