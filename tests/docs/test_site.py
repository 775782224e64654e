"""The documentation site: the command-line reference covers every command, the figures match
their result files, the README stays a front page, and the Security page says what it must."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench import docs as figures
from tests.support.doc_blocks import ROOT, blocks
from twocats.cli import main


def _help_commands() -> list[str]:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    section = result.output.split("Commands:\n", 1)[1]
    return re.findall(r"^  (\S+)", section, re.M)


def test_cli_reference_lists_every_command(tmp_path: Path) -> None:
    """The generated command-line page documents each command that twocats --help lists."""
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(ROOT / "docs" / "conf.py", source)
    shutil.copy(ROOT / "docs" / "cli.md", source)
    (source / "index.md").write_text("# twocats\n\n```{toctree}\ncli\n```\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "-q",
            "-b",
            "text",
            str(source),
            str(tmp_path / "out"),
        ],
        check=True,
        timeout=600,
    )
    text = (tmp_path / "out" / "cli.txt").read_text()
    listed = _help_commands()
    assert len(listed) >= 12
    for name in listed:
        heading = rf"^{re.escape(name)}\n-{{{len(name)}}}$"
        assert re.search(heading, text, re.M), f"no section for {name}"


def test_figures_match_the_result_files() -> None:
    """docs/performance.md and the README's summary are what bench/results gives."""
    assert figures.main(["--check"]) == 0


def test_readme_is_a_front_page() -> None:
    """The README is at most 150 lines and its first block ends with CI's test command."""
    readme = ROOT / "README.md"
    assert len(readme.read_text().splitlines()) <= 150
    first = blocks(readme)[0].code.splitlines()
    assert first[1] == "pip install -e '.[test]' && python -m pytest -q"


def test_security_page_names_the_public_record() -> None:
    """The Security page names Argon2id, RFC 9106, RFC 7914 and the Password Hashing Competition."""
    text = (ROOT / "docs" / "security.md").read_text()
    for name in ("Argon2id", "RFC 9106", "RFC 7914", "Password Hashing Competition"):
        assert name in text
    assert (ROOT / "SECURITY.md").is_file()
    assert (ROOT / "LICENSE").is_file()
    assert (ROOT / "CHANGELOG.md").read_text().count("\n## 0.1.0") == 1


def test_figures_check_fails_on_a_stale_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--check reports a README whose summary differs from the result files, and writes nothing."""
    readme = tmp_path / "README.md"
    stale = figures.readme_block().replace("Per login", "Per logon")
    readme.write_text(f"# twocats\n\n{stale}\n")
    monkeypatch.setattr(figures, "README", readme)
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    monkeypatch.setattr(figures, "PAGE", tmp_path / "performance.md")
    assert figures.main(["--check"]) == 1
    assert not (tmp_path / "performance.md").exists()
    assert figures.main([]) == 0
    assert figures.readme_block() in readme.read_text()
    assert figures.main(["--check"]) == 0
