"""``python -m bench tradeoff``: the report's files, its published columns and its plot."""

from __future__ import annotations

import json
from pathlib import Path

from bench.attacker import tradeoff


def test_tradeoff_suite_writes_json_markdown_and_plot(tmp_path: Path) -> None:
    """A one-seed run at 1024 blocks writes every graph's rows, the commit, the seeds and a PNG."""
    assert tradeoff._run(1024, 1, tmp_path, plot=True) == 0
    document = json.loads((tmp_path / "tradeoff.json").read_text())
    assert document["seeds"] == [0]
    assert len(document["commit"]) in (40, len("unknown"))
    assert set(document["graphs"]) >= {"argon2d:t=1,lanes=1", "twocats hybrid", "power:1"}
    argon2d = document["graphs"]["argon2d:t=1,lanes=1"]
    assert argon2d["readings"][0]["published_C"] == 1.5
    assert argon2d["E"] == max(1 / row["alpha_D"] for row in argon2d["rows"])
    assert "tab:generic3" in (tmp_path / "tradeoff.md").read_text()
    assert (tmp_path / "tradeoff.png").read_bytes().startswith(b"\x89PNG")
