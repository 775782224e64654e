"""The console script's ``twocats sum`` without click: the same output, errors and exit status as
the click command, and click for every other command line."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from twocats.cli import main
from twocats.cli._sum_quick import _parse

# Runs the console script's entry, then reports whether click was imported.
PROBE = """
import sys
from twocats.cli import run
sys.argv = ["twocats", *sys.argv[1:]]
try:
    run()
finally:
    print("click loaded" if "click" in sys.modules else "no click", file=sys.stderr)
"""


def console(folder: Path, *args: str, stdin: bytes = b"") -> tuple[int, bytes, str, str]:
    """Run the console script in ``folder``: exit status, output, errors, and the click report."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=folder, input=stdin, capture_output=True
    )
    *errors, report = done.stderr.decode().splitlines()
    return done.returncode, done.stdout, "".join(f"{line}\n" for line in errors), report


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Files of a few sizes and awkward names."""
    for index, name in enumerate(["plain", "with space", "back\\slash", "new\nline", "-a"]):
        (tmp_path / name).write_bytes(bytes((i + index) % 251 for i in range(index * 1000)))
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["plain", "with space", "back\\slash", "new\nline"],
        ["-a", "blake2b", "plain", "missing", "with space"],
        ["--algorithm=sha1", "-z", "plain", "new\nline"],
        ["plain", "--zero", "--algorithm", "sha512", "--backend", "simd"],
        ["--backend=scalar", "-a", "blake2s", "--", "-a", "plain"],
        ["-a", "blake2b-256", "-", "plain", "-"],
    ],
)
def test_everyday_forms_run_without_click_as_click_runs_them(
    folder: Path, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output, messages and exit status equal the click command's, with click never loaded."""
    stdin = b"standard input\n"
    status, out, errors, report = console(folder, "sum", *args, stdin=stdin)
    assert report == "no click"
    monkeypatch.chdir(folder)
    clicked = CliRunner().invoke(main, ["sum", *args], input=stdin)
    assert (status, out, errors) == (clicked.exit_code, clicked.stdout_bytes, clicked.stderr)


def test_digest_lines_are_hashlib_digests(folder: Path) -> None:
    """The lines name every file with its digest."""
    status, out, _, _ = console(folder, "sum", "plain", "with space")
    assert status == 0
    assert out.decode().splitlines() == [
        f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}"
        for name in ("plain", "with space")
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["--tag", "plain"],
        ["--check", "SUMS"],
        ["--json", "plain"],
        ["--help"],
        ["-za", "sha1", "plain"],
        ["-a=sha1", "plain"],
        ["-a", "md5", "plain"],
        ["-a", "sha3-256", "plain"],
        ["--backend", "fast", "plain"],
        ["plain", "-a"],
    ],
)
def test_other_command_lines_go_to_click(args: list[str]) -> None:
    """Every option, value or form the quick path does not take is left to click."""
    assert _parse(args) is None


def test_click_reports_what_the_quick_path_leaves(folder: Path) -> None:
    """A form left to click runs there: its output, its errors."""
    status, out, _, report = console(folder, "sum", "--tag", "plain")
    assert (status, report) == (0, "click loaded")
    assert out.decode().startswith("SHA256 (plain) = ")
    status, _, errors, report = console(folder, "sum", "-a", "md5", "plain")
    assert (status, report) == (2, "click loaded")
    assert "Invalid value for '-a' / '--algorithm'" in errors
