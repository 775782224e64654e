"""Under CI=true a skip for something missing fails the run; other skips stay skips."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: The test tree whose conftest and environment module the sample runs under.
TESTS = Path(__file__).resolve().parents[1]

SAMPLE = '''
import os
import pytest
from tests.support.environment import absent_shared_file, need, shared_file


def test_tool():
    """A missing tool."""
    need("coreutils' sha256sum")


def test_file():
    """A missing shared file."""
    shared_file("no-such-file.jsonl")


@pytest.mark.parametrize("vector", [absent_shared_file("no-such-file.jsonl", 1)])
def test_vectors(vector):
    """Vectors of a missing shared file."""


@pytest.mark.skipif(True, reason="needs os.fork")
def test_fork():
    """A missing os.fork."""


@pytest.mark.skipif(True, reason="not on this CPU")
def test_cpu():
    """A skip that is not about something missing."""
'''


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    """Run the sample module under the project's conftest, with CI set to ``ci`` (or unset)."""
    support = tmp_path / "tests" / "support"
    support.mkdir(parents=True)
    for package in (support.parent, support):
        (package / "__init__.py").touch()
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(TESTS / "support" / "environment.py", support / "environment.py")
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_missing_things_skip(tmp_path: Path, ci: str | None) -> None:
    """Without CI=true every missing thing is a skip and the run passes."""
    done = _run(tmp_path, ci)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("5 skipped")


def test_in_ci_missing_things_fail(tmp_path: Path) -> None:
    """With CI=true the four skips for missing things fail the run, naming what is missing.

    A skip mark acts in the test's setup, so pytest counts those two as errors.
    """
    done = _run(tmp_path, "true")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("2 failed, 1 skipped, 2 errors")
    failed = sorted(
        line.split(" - ")[0]
        for line in done.stdout.splitlines()
        if line.startswith(("FAILED", "ERROR"))
    )
    assert failed == [
        "ERROR test_sample.py::test_fork",
        "ERROR test_sample.py::test_vectors[absent-no-such-file.jsonl]",
        "FAILED test_sample.py::test_file",
        "FAILED test_sample.py::test_tool",
    ]
    assert "CI=true and this test needs coreutils' sha256sum" in done.stdout
    assert "needs the shared vector file" in done.stdout
