"""The start-up benchmark's own machinery: the console script it times and its command line."""

from __future__ import annotations

import subprocess

import pytest

from bench.__main__ import main as bench_main
from bench.harness import REPO
from bench.startup.processes import console_script
from twocats import __version__


def test_timed_console_script_is_the_projects_entry_point() -> None:
    """The process the suite times is the console script pyproject.toml declares, and it runs."""
    script = console_script(REPO)
    assert script[2] == "import sys; from twocats.cli import run; sys.exit(run())"
    done = subprocess.run([*script, "--version"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.split()[-1]) == (0, __version__)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["--runs", "many"], "argument --runs: invalid int value: 'many'"),
        (["--runs", "0"], "--runs must be at least 1"),
    ],
)
def test_startup_suite_refuses_bad_options(
    option: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The suite's command line refuses unknown options and run counts below one (status 2)."""
    with pytest.raises(SystemExit) as caught:
        bench_main(["startup", *option])
    assert caught.value.code == 2
    assert message in capsys.readouterr().err
