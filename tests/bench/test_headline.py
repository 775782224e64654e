"""The README's headline figures come from one run on one machine, and no other page types one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import docs


def test_the_readme_block_names_one_machine_and_one_run() -> None:
    """Every headline figure is read from headline.json, whose one machine the block names once."""
    block = docs.readme_block()
    head = docs._load("headline")
    assert block.count("Measured on") == 0
    assert block.count("measured in one run of `python -m bench headline` on ") == 1
    assert block.count(head["machine"]["cpu"]) == 1
    assert "[headline.md](bench/results/headline.md)" in block
    assert "(docs/performance.md)" in block


def test_the_pages_match_the_results_and_type_no_figure() -> None:
    """bench docs --check passes on the committed pages: nothing stale, no time typed by hand."""
    assert docs.main(["--check"]) == 0
    assert docs.typed_figures() == []


def test_a_time_typed_into_a_page_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A measured time typed into a docs page or the README's prose is reported by its line."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "deployment.md").write_text(
        "# Deployment\n\nA fresh install hashes (about 0.55 s against about 9 s).\n"
    )
    (tmp_path / "docs" / "performance.md").write_text("generated: takes 3.0 s\n")
    readme = tmp_path / "README.md"
    readme.write_text(
        f"intro\n{docs.README_START}\n- takes 1.0 s\n{docs.README_END}\nit took 2 s\n"
    )
    monkeypatch.setattr(docs, "ROOT", tmp_path)
    monkeypatch.setattr(docs, "README", readme)
    monkeypatch.setattr(docs, "PAGE", tmp_path / "docs" / "performance.md")
    assert docs.typed_figures() == ["README.md:5", "docs/deployment.md:3"]
