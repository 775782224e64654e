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


@pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="compiled kernels only (NUMBA_DISABLE_JIT is set)"
)
def test_compare_attacker_prices_the_assumed_speedups() -> None:
    """--asic-speedup divides an algorithm's cost per guess; --chain-bound caps TwoCats' at the
    multiply chain's floor for the measured time."""
    from twocats.perf.tradeoff.attacker import chain_bound
    from twocats.phc import decode_params

    result = CliRunner().invoke(
        main,
        [
            "compare", "--mem-cost", "10", "--min-rounds", "2", "--time-limit", "1ms",
            "--parallelism", "1", "--attacker", "--json",
            "--asic-speedup", "argon2i=4", "--asic-speedup", "twocats=1000000",
            "--chain-bound", "4.5",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    rows = {row["algorithm"]: row for row in document["attacker"]}
    params = decode_params(document["phc_prefix"])
    bound = chain_bound(params, document["rows"][0]["seconds"], 4.5)
    assert bound < 1000000
    assert rows["twocats"]["asic_speedup"] == pytest.approx(bound)
    assert rows["argon2i"]["asic_speedup"] == 4.0
    assert rows["argon2id"]["asic_speedup"] == 1.0
    base = rows["argon2id"]["memory_bytes"] / rows["argon2id"]["E"]
    for row in rows.values():
        expected = row["memory_bytes"] / (row["E"] * row["asic_speedup"]) / base
        assert row["relative_cost"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--attacker", "--asic-speedup", "scrypt=2"], "names one of twocats"),
        (["--attacker", "--asic-speedup", "argon2id=fast"], "FACTOR must be a number"),
        (["--attacker", "--asic-speedup", "argon2id=0"], "from 0.001 to 1000000"),
        (["--asic-speedup", "argon2id=2"], "apply to --attacker only"),
        (["--chain-bound", "4.5"], "apply to --attacker only"),
    ],
)
def test_compare_attacker_assumptions_are_checked_before_measuring(
    arguments: list[str], message: str
) -> None:
    """A bad or idle speed-up assumption is a usage error, before anything is measured."""
    result = CliRunner().invoke(main, ["compare", "--mem-cost", "10", *arguments])
    assert result.exit_code == 2
    assert message in result.output
    assert "calibrating" not in result.output


def test_compare_refuses_memory_below_argon2s_least() -> None:
    """Parameters below argon2id's least memory at their parallelism are a usage error."""
    result = CliRunner().invoke(main, ["compare", "--profile", "cheapest", "--insecure"])
    assert result.exit_code == 2
    assert "compare needs at least 8 KiB of memory" in result.output
