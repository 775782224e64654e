"""``python -m bench tradeoff``: the report's files, its published figures and its plot."""

from __future__ import annotations

import json
from pathlib import Path

from bench.attacker import tradeoff


def test_tradeoff_suite_writes_json_markdown_and_plot(tmp_path: Path) -> None:
    """A small run writes every section, each published figure beside its computed one, a PNG."""
    assert tradeoff._run(1024, 4096, 1, (1,), 3, tmp_path, plot=True) == 0
    document = json.loads((tmp_path / "tradeoff.json").read_text())
    assert document["seeds"] == [0]
    assert (document["blocks"], document["large_blocks"]) == (1024, 4096)
    assert len(document["commit"]) in (40, len("unknown"))
    assert set(document["ranking"]) >= {"argon2d:t=1,lanes=1", "twocats hybrid", "power:1"}
    assert set(document["low_storage"]) >= {"argon2i:t=1,lanes=1,v=1.3"}
    assert set(document["depth_reducing"]) == {"argon2i:t=1,lanes=1"}
    assert document["summary"]["argon2i t=1"]["chosen_by"] == "best"
    sources = {row["source"] for row in document["checks"]}
    assert "tab:generic3" in sources
    assert "Alwen and Blocki 2016, Corollary 5.6" in sources
    for row in document["checks"]:
        if row["computed"] is not None:
            assert row["ratio"] == row["computed"] / row["published"]
    text = (tmp_path / "tradeoff.md").read_text()
    assert "tab:generic3" in text
    assert "The best attack on each algorithm" in text
    assert (tmp_path / "tradeoff.png").read_bytes().startswith(b"\x89PNG")
