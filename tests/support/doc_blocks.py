"""The fenced code blocks of the documentation pages and the README, as the tests read them.

A block runs as a test unless the line before it is ``<!-- not tested: <reason> -->``.  A shell
block whose first command is ``pip`` (or ``python -m pip``) is an install block: its pip commands,
and those of a Dockerfile's ``RUN`` lines, are run by ``tests/docs/test_install.py`` in a fresh
virtual environment, not by the examples test.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The pages whose examples are tests: the README and every page of the site.
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

_FENCE = re.compile(
    r"^(<!-- not tested: (?P<why>.+?) -->\n)?```(?P<lang>\w+)\n(?P<code>.*?)^```$", re.S | re.M
)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    lang: str
    code: str
    untested: str | None

    @property
    def is_install(self) -> bool:
        """Whether the block's first command is pip."""
        return self.lang == "bash" and re.match(r"(python -m )?pip ", self.code) is not None


def blocks(page: Path) -> list[Block]:
    """Return the fenced blocks of `page` in order."""
    text = page.read_text()
    return [
        Block(
            page,
            text.count("\n", 0, match.start("lang")) + 1,
            match["lang"],
            match["code"],
            match["why"],
        )
        for match in _FENCE.finditer(text)
    ]


def pip_commands(line: str) -> list[list[str]]:
    """Return the pip commands of one shell line, each as its arguments after ``pip``."""
    words = shlex.split(line, comments=True)
    commands, current = [], []
    for word in [*words, "&&"]:
        if word != "&&":
            current.append(word)
            continue
        if current[:1] == ["pip"]:
            commands.append(current[1:])
        elif current[:3] == ["python", "-m", "pip"]:
            commands.append(current[3:])
        current = []
    return commands


def _install_lines(block: Block) -> list[str]:
    """The lines of `block` that may hold pip commands: an install block's, a Dockerfile's RUN."""
    lines = block.code.splitlines()
    if block.lang == "dockerfile":
        return [line.removeprefix("RUN ") if line.startswith("RUN ") else "" for line in lines]
    return lines if block.is_install and not block.untested else []


def install_commands() -> list[tuple[str, list[str]]]:
    """Return every pip command of the install blocks and Dockerfiles, with where it is written."""
    found = []
    for page in PAGES:
        for block in blocks(page):
            for offset, line in enumerate(_install_lines(block), start=1):
                for command in pip_commands(line):
                    found.append((f"{page.relative_to(ROOT)}:{block.line + offset}", command))
    return found
