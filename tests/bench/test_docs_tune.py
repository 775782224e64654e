"""bench docs: the walk through twocats tune on docs/parameters.md is the recorded run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import docs


def test_the_walkthrough_is_the_recorded_output_and_check() -> None:
    """The block holds tune_runs' recorded output, its machine and the independent checks."""
    document = docs._load("tune_runs")
    block = docs.tune_block()
    assert block.startswith(docs.TUNE_START)
    assert block.endswith(docs.TUNE_END)
    assert document["walkthrough"]["output"].rstrip("\n") in block
    assert document["machine"]["cpu"] in block
    for run in document["runs"]:
        if "check" in run:
            assert f"over {run['check']['verifications']} verifications" in block
    assert docs.tune_block() in docs.PARAMETERS.read_text()


def test_times_inside_the_walkthrough_are_not_typed_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A time inside the generated block is not reported; one outside it is."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "parameters.md").write_text(
        f"# Parameters\n{docs.TUNE_START}\nverified in 2.1 s\n{docs.TUNE_END}\ntook 3 s\n"
    )
    (tmp_path / "docs" / "performance.md").write_text("generated\n")
    readme = tmp_path / "README.md"
    readme.write_text("intro\n")
    monkeypatch.setattr(docs, "ROOT", tmp_path)
    monkeypatch.setattr(docs, "README", readme)
    monkeypatch.setattr(docs, "PAGE", tmp_path / "docs" / "performance.md")
    assert docs.typed_figures() == ["docs/parameters.md:5"]
