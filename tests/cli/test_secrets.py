"""Passwords never come back on screen: surplus words are not echoed, Ctrl-C at a prompt is 130."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.terminal import prompt_run
from twocats.cli import main

TINY = ["--profile", "cheapest", "--insecure"]
STORED = "$twocats$v=2015$m=0,p=1,b=32,sb=32$AAAAAAAAAAAAAAAAAAAAAA$" + "A" * 43

#: A password typed on the command line by mistake.
PASSWORD = "hunter2-Tr0ub4dor"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["hash", *TINY, PASSWORD], "an unexpected argument"),
        (["hash", PASSWORD, "--json"], "an unexpected argument"),
        (["verify", STORED, PASSWORD], "an unexpected argument"),
        (["derive", *TINY, "--salt", "saltsalt", PASSWORD, PASSWORD], "2 unexpected arguments"),
        (["hash", "--" + PASSWORD], "an unknown option"),
        (["verify", STORED, "-" + PASSWORD], "an unknown option"),
    ],
)
def test_a_password_on_the_command_line_is_never_echoed(args: list[str], words: str) -> None:
    """Surplus words and unknown options are counted and refused, never repeated."""
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert PASSWORD not in result.output
    message = (
        f"got {words} (not shown, in case it is a password); passwords are read from the "
        "hidden prompt or with --password-stdin, never from the command line"
    )
    assert result.stderr.endswith(f"Error: {message}\n")
    if "--json" in args:
        assert json.loads(result.stdout) == {"error": message, "exit_status": 2}


def test_a_misspelt_option_is_still_named() -> None:
    """An unknown option click takes for a misspelling is named with the option it resembles."""
    result = CliRunner().invoke(main, ["hash", *TINY, "--pasword-stdin"])
    assert result.exit_code == 2
    assert "Did you mean '--password-stdin'?" in result.stderr


def test_ctrl_c_at_the_hidden_prompt_exits_130() -> None:
    """Ctrl-C typed at the hidden prompt ends the command with 130 and 'interrupted'."""
    status, output = prompt_run(["hash", *TINY], b"\x03", {})
    assert status == 130, output
    assert output.rstrip().endswith(b"interrupted")
    assert b"Aborted" not in output


def test_end_of_input_at_the_hidden_prompt_aborts() -> None:
    """Ctrl-D (end of input) at the hidden prompt is an abort, exit status 1, not 130."""
    status, output = prompt_run(["verify", STORED], b"\x04", {})
    assert status == 1, output
    assert output.rstrip().endswith(b"Aborted!")
