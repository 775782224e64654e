"""Every code example of the README and the documentation runs, so an example that stops working
fails the suite.

Each page's blocks run in order in one fresh directory (a block may use the files an earlier block
wrote), each Python block in a fresh interpreter and each shell block in ``bash -e``.  Blocks marked
``<!-- not tested: reason -->`` say why on the page; install blocks are run by
``tests/docs/test_install.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.doc_blocks import PAGES, ROOT, Block, blocks

_RUNNERS = {
    "python": lambda code: [sys.executable, "-c", code],
    "bash": lambda code: ["bash", "-e", "-o", "pipefail", "-c", code],
}


def _runnable(page: Path) -> list[Block]:
    return [
        block
        for block in blocks(page)
        if block.lang in _RUNNERS and not block.untested and not block.is_install
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    """Each runnable block of the page exits with status 0."""
    for block in _runnable(page):
        result = subprocess.run(
            _RUNNERS[block.lang](block.code),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert result.returncode == 0, (
            f"{page.relative_to(ROOT)}:{block.line} ({block.lang}) exited with "
            f"{result.returncode}:\n{result.stderr[-3000:]}"
        )


def test_every_untested_block_says_why() -> None:
    """A block is left out only with a reason, and every language the pages use is known."""
    for page in PAGES:
        for block in blocks(page):
            if block.untested is None and not block.is_install:
                assert block.lang in (*_RUNNERS, "text"), f"{page}:{block.line}: {block.lang}"
            if block.untested is not None:
                assert len(block.untested) > 10, f"{page}:{block.line}: say why it is not run"
