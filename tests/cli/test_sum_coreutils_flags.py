"""twocats sum's coreutils options (--tag, -z, and --check with --status, --strict, -w,
--ignore-missing, BSD lines) against the real sha256sum, sha512sum, sha1sum and b2sum: the same
standard output, messages and exit status on the same files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from twocats.cli import main

#: Our algorithm -> the coreutils command line that computes it.
TOOLS = {
    "sha256": ["sha256sum"],
    "sha512": ["sha512sum"],
    "blake2b": ["b2sum"],
    "blake2b-256": ["b2sum", "-l", "256"],
    "sha1": ["sha1sum"],
}

NAMES = ["plain", "with space", "back\\slash", "new\nline", "car\rriage", "tab\there", "star*"]

# A name that is not UTF-8: --check prints its bytes.
NOT_UTF8 = os.fsdecode(b"caf\xe9")

COREUTILS_ENV = {**os.environ, "LC_ALL": "C.UTF-8"}

pytestmark = pytest.mark.skipif(
    any(shutil.which(tool[0]) is None for tool in TOOLS.values()),
    reason="GNU coreutils' sha256sum, sha512sum, sha1sum and b2sum are not installed",
)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Files with awkward names in a fresh working directory."""
    monkeypatch.chdir(tmp_path)
    names = [*NAMES, NOT_UTF8]
    for index, name in enumerate(names):
        Path(os.fsencode(name).decode("utf-8", "surrogateescape")).write_bytes(
            bytes(range(index, index + 90))
        )
    return names


def ours(*args: str, stdin: bytes | None = None) -> Result:
    """Invoke twocats sum."""
    return CliRunner().invoke(main, ["sum", *args], input=stdin)


def theirs(
    tool: list[str], *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Invoke the coreutils tool."""
    return subprocess.run(
        [*tool, *args], input=stdin, capture_output=True, env=COREUTILS_ENV, check=False
    )


def assert_same(algorithm: str, *args: str, stdin: bytes | None = None) -> None:
    """Equal standard output, standard error (under each program's name) and exit status."""
    tool = TOOLS[algorithm]
    mine = ours("-a", algorithm, *args, stdin=stdin)
    done = theirs(tool, *args, stdin=stdin)
    assert mine.stdout_bytes == done.stdout, args
    assert mine.stderr_bytes == done.stderr.replace(f"{tool[0]}: ".encode(), b"twocats sum: ")
    assert mine.exit_code == done.returncode, args


@pytest.mark.parametrize("algorithm", sorted(TOOLS))
def test_tag_and_zero_lines_equal_coreutils(tree: list[str], algorithm: str) -> None:
    """--tag, -z and --tag -z write what the coreutils tool writes, byte for byte."""
    for flags in (["--tag"], ["-z"], ["--tag", "-z"], ["--zero"]):
        assert_same(algorithm, *flags, *tree, "missing")


def _sums(algorithm: str, names: list[str], *flags: str) -> bytes:
    return theirs(TOOLS[algorithm], *flags, *names).stdout


@pytest.mark.parametrize("algorithm", sorted(TOOLS))
def test_check_flags_equal_coreutils(tree: list[str], algorithm: str) -> None:
    """--check of GNU and BSD lines with every flag reports as the tool does."""
    # coreutils prints a carriage return raw in a status line, twocats quotes the name.
    tree = [name for name in tree if "\r" not in name]
    gnu = _sums(algorithm, tree)
    bsd = _sums(algorithm, tree, "--tag")
    Path("GNU").write_bytes(gnu)
    Path("BSD").write_bytes(bsd)
    Path("MIXED").write_bytes(
        b"# a comment\n\n  " + bsd.splitlines(keepends=True)[0] + gnu + b"garbage\n" + bsd
    )
    Path("NONE").write_bytes(b"nothing here\nat all\n")
    missing_line = gnu.splitlines(keepends=True)[0].replace(b"plain", b"gone")
    Path("GONE").write_bytes(missing_line)
    Path("SOME_GONE").write_bytes(missing_line + gnu)
    Path("plain").write_bytes(b"changed")
    Path("a folder").mkdir()
    files = [["GNU"], ["BSD"], ["MIXED"], ["NONE"], ["GONE"], ["SOME_GONE"], ["GNU", "NONE"]]
    files += [["no such sums"], ["a folder"]]
    flags = [[], ["--quiet"], ["--status"], ["--strict"], ["-w"], ["--warn", "--strict"]]
    flags += [["--ignore-missing"], ["--ignore-missing", "--quiet"]]
    for sums in files:
        for flag in flags:
            assert_same(algorithm, "--check", *flag, *sums)


def test_check_standard_input_equals_coreutils(tree: list[str]) -> None:
    """Lines from standard input, a line naming '-' and a warned line, as sha256sum says."""
    sums = _sums("sha256", tree[:3], "--tag") + b"zz\n" + b"0" * 64 + b"  -\n"
    for flags in ([], ["-w"], ["--strict"]):
        assert_same("sha256", "--check", *flags, stdin=sums)
        assert_same("sha256", "--check", *flags, "-", stdin=sums)


def test_single_blank_lines_equal_coreutils(tree: list[str]) -> None:
    """Lines with one blank between digest and name (md5 -r) are read as coreutils reads them."""
    gnu = _sums("sha256", tree[:2])
    reversed_lines = gnu.replace(b"  ", b" ")
    Path("REV").write_bytes(reversed_lines)
    Path("REV_THEN_GNU").write_bytes(reversed_lines + gnu)
    Path("GNU_THEN_REV").write_bytes(gnu + reversed_lines)
    for sums in ("REV", "REV_THEN_GNU", "GNU_THEN_REV"):
        assert_same("sha256", "--check", "-w", sums)


def test_usage_errors_name_the_option() -> None:
    """Check-only options without --check, and --tag or -z with it, are usage errors."""
    for args, message in (
        (["--status", "x"], "the --status option is meaningful only when verifying checksums"),
        (["--ignore-missing"], "the --ignore-missing option is meaningful only when verifying"),
        (["-c", "--tag"], "the --tag option is meaningless when verifying checksums"),
        (["-c", "-z"], "the --zero option is not supported when verifying checksums"),
    ):
        result = ours(*args)
        assert result.exit_code == 2, args
        assert message in result.stderr
