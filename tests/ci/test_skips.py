"""Under CI=true a skip for something missing fails the run; other skips stay skips; --core."""

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


def _run(
    tmp_path: Path, ci: str | None, *args: str, sample: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run pytest with ``args`` in ``tmp_path`` under the project's conftest, CI set to ``ci``.

    ``sample`` writes the sample module first.
    """
    support = tmp_path / "tests" / "support"
    support.mkdir(parents=True, exist_ok=True)
    for package in (support.parent, support):
        (package / "__init__.py").touch()
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(TESTS / "support" / "environment.py", support / "environment.py")
    if sample:
        (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *args]
    return subprocess.run(
        [*command, "--import-mode=importlib", str(tmp_path)],
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


def test_core_runs_the_core_modules_wherever_they_lie_and_no_other(tmp_path: Path) -> None:
    """--core collects the modules CORE_MODULES names, by path; any other or one missing fails."""
    from tests.conftest import CORE_MODULES

    for name in sorted(CORE_MODULES):
        module = tmp_path / f"{name}.py"
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text("def test_core():\n    pass\n")
        # The same name in another folder is not a core module.
        (tmp_path / "elsewhere").mkdir(exist_ok=True)
        (tmp_path / "elsewhere" / module.name).write_text("def test_other():\n    assert False\n")
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert False\n")
    done = _run(tmp_path, "true", "--core", sample=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith(f"{len(CORE_MODULES)} passed")

    first = sorted(CORE_MODULES)[0]
    (tmp_path / f"{first}.py").unlink()
    done = _run(tmp_path, "true", "--core", sample=False)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert f"CORE_MODULES names no test module: {first}" in done.stderr
