"""``twocats tradeoff``: every attack by name, its JSON document and its errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from twocats.cli import main


def _run(*args: str) -> dict:
    result = CliRunner().invoke(main, ["tradeoff", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_ranking_json_document() -> None:
    """--attack ranking --json: E priced and free, rows by alpha with q, C, D and both gains."""
    document = _run(
        "argon2id:t=2,lanes=2", "--attack", "ranking", "--blocks", "2048", "--seeds", "2", "--json"
    )
    assert document["attack"] == "ranking"
    assert document["graph"] == "argon2id:t=2,lanes=2"
    assert (document["blocks"], document["seeds"]) == (2048, 2)
    assert document["alpha_basis"] == "peak"
    rows = document["rows"]
    assert {"q", "stored", "alpha", "C", "D", "E", "E_free_cores"} == set(rows[0])
    alphas = [row["alpha"] for row in rows]
    assert alphas == sorted(alphas)
    assert document["E"] == max(row["E"] for row in rows)
    assert document["E_free_cores"] == max(row["E_free_cores"] for row in rows)
    assert document["E_free_cores"] >= document["E"]
    assert all(row["C"] >= 1 and row["D"] >= 1 for row in rows)


def test_best_on_argon2i_reports_every_attack_that_applies() -> None:
    """best runs ranking, low-storage and depth-reducing on Argon2i, and skips the iterative one."""
    document = _run(
        "argon2i:v=1.2.1", "--blocks", "1024", "--seeds", "1", "--budget", "3", "--json"
    )
    assert document["chosen_by"] == "best"
    assert document["graph"] == "argon2i:t=1,lanes=1,v=1.2.1"
    names = [entry["attack"] for entry in document["attacks"]]
    assert names == ["ranking", "low-storage", "depth-reducing"]
    assert document["E"] == max(entry["E"] for entry in document["attacks"])
    assert document["skipped"][0]["attack"] == "iterative"


def test_iterative_human_output_ends_with_its_gain() -> None:
    """A TwoCats profile resized by --blocks, the iterative attack: the table, then E."""
    result = CliRunner().invoke(
        main, ["tradeoff", "twocats:interactive", "--attack", "iterative", "--blocks", "256"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("twocats:v=2015,m=12,p=2,hybrid: 256 blocks")
    assert "D_blocks" in lines[1]
    assert lines[-1].startswith("iterative: E = ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchgraph"], "unknown graph"),
        (["argon2d", "--blocks", "4"], "--blocks"),
        (["argon2d", "--blocks", str(1 << 23)], "--blocks"),
        (["argon2d:t=0"], "t must be from 1 to 16"),
        (["argon2d:v=1.1"], "v must be one of"),
        (["power:x"], "GAMMA must be a number"),
        (["twocats:huge"], "not a profile"),
        (["twocats", "--blocks", "1000"], "power of two"),
        (["argon2d", "--seeds", "0"], "--seeds"),
        (["argon2d", "--attack", "low-storage"], "data-dependent"),
        (["argon2i", "--attack", "iterative"], "not iterative"),
        (["argon2i", "--attack", "nosuch"], "--attack"),
        (["twocats", "--multiply-latency", "-1"], "--multiply-latency"),
    ],
)
def test_tradeoff_bad_input_is_a_usage_error(args: list[str], message: str) -> None:
    """An unknown graph, attack or out-of-range option gives one clear error and exit status 2."""
    result = CliRunner().invoke(main, ["tradeoff", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
