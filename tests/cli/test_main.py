"""python -m twocats is the command line, and a --params string the shell mangled gets a hint."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.password import PasswordHasher
from twocats.phc import encode_params
from twocats.profiles import CHEAPEST

_HINT = (
    "; --params has no $ signs: inside double quotes the shell replaces $v, $m and the like by "
    "(empty) variables; put --params in single quotes"
)


def test_python_m_twocats_help_imports_neither_numba_nor_numpy() -> None:
    """python -m twocats --help lists the commands and loads neither numba nor numpy."""
    code = (
        "import runpy, sys\n"
        "sys.argv = ['twocats', '--help']\n"
        "try:\n"
        "    runpy.run_module('twocats', run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    print('exit', done.code)\n"
        "print(sorted({'numba', 'numpy'} & set(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert "Usage: twocats [OPTIONS] COMMAND [ARGS]..." in result.stdout
    assert "upgrade-db" in result.stdout
    assert result.stdout.rstrip().endswith("exit 0\n[]"), result.stdout


def test_python_m_twocats_runs_a_command() -> None:
    """python -m twocats --version is the console script's answer."""
    result = subprocess.run(
        [sys.executable, "-m", "twocats", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.startswith("twocats, version ")


def _mangled(phc: str) -> str:
    """What bash leaves of a PHC string inside double quotes: every $name expands to nothing."""
    return "".join(field.partition("=")[1] + field.partition("=")[2] for field in phc.split("$"))


@pytest.mark.parametrize(
    "command",
    [
        ["hash", "--password-stdin"],
        ["needs-rehash", "{stored}"],
        ["upgrade-db", "sqlite:///absent.db", "--table", "t", "--key-column", "k",
         "--hash-column", "h"],
    ],
)  # fmt: skip
@pytest.mark.parametrize("prefix", ["", "twocats"])
def test_params_without_dollar_signs_get_the_quoting_hint(command: list[str], prefix: str) -> None:
    """A --params string that lost its $ signs (=2015=..., twocats=2015...) names single quotes."""
    mangled = prefix + _mangled(encode_params(CHEAPEST))
    assert "$" not in mangled
    assert mangled.startswith(f"{prefix}=2015")
    stored = PasswordHasher.from_params(CHEAPEST).hash("pw")
    given = [word.format(stored=stored) for word in command]
    result = CliRunner().invoke(main, [*given, "--params", mangled], input="pw\n")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: not a twocats parameter string")
    assert lines[0].endswith(_HINT)


def test_a_bad_params_string_with_dollar_signs_gets_no_quoting_hint() -> None:
    """A --params string that kept its $ signs but is wrong is told only what is wrong."""
    result = CliRunner().invoke(main, ["hash", "--password-stdin", "--params", "$argon2$m=1"])
    assert result.exit_code == 2
    assert "single quotes" not in result.stderr
