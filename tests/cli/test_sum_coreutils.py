"""twocats sum against the real sha256sum, sha512sum and b2sum: the same standard output and
the same messages on standard error, through hashlib, through the lanes and across the hand-over."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats.cli import checksum, main
from twocats.cli.checksum import display_name, quote_name
from twocats.lanes import file_digests
from twocats.lanes.file_digests import LaneLoader, Method, Slices

TOOLS = {"sha256": "sha256sum", "sha512": "sha512sum", "blake2b": "b2sum"}

# Empty, padding boundaries of SHA-256 (55/56/64), SHA-512 (111/112/128) and BLAKE2b (128),
# and a file over SMALL_FILE.
SIZES = [0, 1, 55, 56, 63, 64, 65, 111, 112, 119, 120, 127, 128, 129, 255, 256, 257, 4096]

NAMES = ["plain", "with space", "back\\slash", "new\nline", "tab\there", "star*", "it's"]

# The coreutils tools print names from their own locale; this one keeps UTF-8 names readable.
COREUTILS_ENV = {**os.environ, "LC_ALL": "C.UTF-8"}

pytestmark = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in TOOLS.values()),
    reason="sha256sum and b2sum (GNU coreutils) are not installed",
)


class CountingLoader(LaneLoader):
    """Real lane kernels, declared ready after ``ready_after`` batches went to hashlib."""

    def __init__(self, method: Method, backend: str | None, ready_after: int) -> None:
        super().__init__(method, backend)
        self.ready_after = ready_after
        self.asked = 0
        self.lane_batches = 0

    def start(self) -> None:
        """Load nothing in the background: readiness is decided by the batch count."""

    def ready(self) -> bool:
        """Report ready once enough batches have been sent elsewhere."""
        self.asked += 1
        return self.asked > self.ready_after

    def hash(self, messages: Slices) -> list[bytes]:
        """Count the batch and hash it in lanes."""
        self.lane_batches += 1
        return super().hash(messages)


@pytest.fixture(params=["hashlib", "lanes", "handover"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Route batches through hashlib only, lanes only, or hashlib then lanes, in small batches."""
    monkeypatch.setattr(file_digests, "BATCH_FILES", 4)
    monkeypatch.setattr(file_digests, "SMALL_FILE", 2000)
    ready_after = {"hashlib": 10**9, "lanes": 0, "handover": 2}[request.param]
    loaders: list[CountingLoader] = []

    def loader(method: Method, backend: str | None) -> CountingLoader:
        loaders.append(CountingLoader(method, backend, ready_after))
        return loaders[-1]

    monkeypatch.setattr(file_digests, "LaneLoader", loader)
    monkeypatch.setattr(checksum, "LaneLoader", loader)
    yield request.param
    lane_batches = sum(item.lane_batches for item in loaders)
    if request.param == "hashlib":
        assert lane_batches == 0
    else:
        assert lane_batches > 0
    if request.param == "handover":
        assert all(item.asked > item.lane_batches for item in loaders)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Files of every size and awkward names, a directory, a missing and an unreadable file."""
    monkeypatch.chdir(tmp_path)
    names = []
    for index, size in enumerate(SIZES):
        names.append(f"size {size}")
        Path(names[-1]).write_bytes(bytes((i + index) % 251 for i in range(size)))
    for index, name in enumerate(NAMES):
        Path(name).write_bytes(bytes(range(index, index + 100)))
        names.append(name)
    Path("a directory").mkdir()
    # Reading this process's memory at offset 0 fails with an I/O error, even as root.
    names += ["a directory", "missing file", "/proc/self/mem", names[3]]
    return names


def ours(*args: str, stdin: bytes | None = None) -> Result:
    """Invoke twocats."""
    return CliRunner().invoke(main, list(args), input=stdin)


def theirs(tool: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Invoke the coreutils tool."""
    return subprocess.run([tool, *args], capture_output=True, env=COREUTILS_ENV, check=False)


def same_output(mine: Result, tool: str, done: subprocess.CompletedProcess[bytes]) -> None:
    """Equal exit status, standard output and standard error (under each program's name)."""
    assert mine.stdout_bytes == done.stdout
    assert mine.stderr_bytes == done.stderr.replace(f"{tool}: ".encode(), b"twocats sum: ")
    assert mine.exit_code == done.returncode


@pytest.mark.parametrize("algorithm", sorted(TOOLS))
def test_digest_lines_equal_coreutils(tree: list[str], path: str, algorithm: str) -> None:
    """Digest lines and read errors equal sha256sum's and b2sum's, byte for byte."""
    mine = ours("sum", "-a", algorithm, *tree)
    same_output(mine, TOOLS[algorithm], theirs(TOOLS[algorithm], *tree))


@pytest.mark.parametrize("algorithm", sorted(TOOLS))
def test_check_failures_equal_coreutils(tree: list[str], path: str, algorithm: str) -> None:
    """--check of a file the tool wrote, after changes and removals, reports as the tool does."""
    tool = TOOLS[algorithm]
    readable = [name for name in tree if os.path.isfile(name) and name != "/proc/self/mem"]
    Path("SUMS").write_bytes(theirs(tool, *readable).stdout + b"garbage line\n")
    Path(readable[1]).write_bytes(b"changed")
    Path(readable[-2]).write_bytes(b"changed too")
    os.remove(readable[2])
    for args in (["--check", "SUMS"], ["--check", "--quiet", "SUMS"]):
        same_output(ours("sum", "-a", algorithm, *args), tool, theirs(tool, *args))


def test_standard_input_equals_coreutils() -> None:
    """Standard input, empty or not, hashes as sha256sum hashes it."""
    for data in (b"", b"abc" * 1000):
        done = subprocess.run(["sha256sum", "-"], input=data, capture_output=True, check=True)
        assert ours("sum", "-", stdin=data).stdout_bytes == done.stdout


# Characters that exercise every quoting rule, and a byte that is not UTF-8 (\udcff is 0xff
# decoded with surrogateescape); quotes next to unprintable characters are left out (see
# test_quote_name_with_quote_and_control_character).
QUOTING = ' !"$&()*;<=>?[\\^`|:#~{},%+@]-_.aZ9\t\x1b\x7f\x01é\u0085\udcff'


def _fits(name: str) -> bool:
    """A name sha256sum reports as a missing file, without the quote-then-control quirk."""
    unprintable = any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c == "\udcff" for c in name)
    special = "/" in name or name in ("-", "", ".", "..")
    return not special and not ("'" in name and unprintable)


def _same_as_coreutils(names: list[str], folder: Path) -> None:
    """One sha256sum run over missing files: its messages name each file as quote_name does."""
    wanted = sorted({name for name in names if _fits(name)})
    done = subprocess.run(
        ["sha256sum", "--", *wanted], capture_output=True, env=COREUTILS_ENV, cwd=folder
    )
    expected = [f"sha256sum: {quote_name(name)}: No such file or directory" for name in wanted]
    assert done.stderr.decode().splitlines() == expected


@pytest.fixture(scope="module")
def empty_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where no name exists."""
    return tmp_path_factory.mktemp("empty")


def test_quote_name_equals_coreutils_for_each_character(empty_folder: Path) -> None:
    """Every quoting character alone, first, inside, and beside a quote, as sha256sum writes it."""
    names = []
    for char in QUOTING + "'":
        names += [char, f"{char}a", f"a{char}", f"a{char}b", f"a'{char}b", f"{char}{char}"]
    _same_as_coreutils(names, empty_folder)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(QUOTING + "'", min_size=1, max_size=8), min_size=1, max_size=40))
def test_quote_name_equals_coreutils_messages(empty_folder: Path, names: list[str]) -> None:
    """quote_name writes any name as sha256sum's error message about a missing file does."""
    _same_as_coreutils(names, empty_folder)


def test_quote_name_double_quotes_after_a_leading_hash_or_tilde(empty_folder: Path) -> None:
    """A quoted name is double-quoted after a leading # or ~ and single-quoted after a later one."""
    _same_as_coreutils(["#'", "~'", "#x'", "a#'", "x~'", "#'$", "{'"], empty_folder)


def test_quote_name_with_quote_and_control_character() -> None:
    """A quote before a control character: a readable, shell-safe form without the control."""
    assert quote_name("a'b\x1b") == "'a'\\''b'$'\\033'"
    assert quote_name("\x1ba'b") == "''$'\\033''a'\\''b'"


def test_check_never_prints_control_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names from a hostile checksum file reach neither output with their escape sequences."""
    monkeypatch.chdir(tmp_path)
    hostile = "a\x1b[31mred\x1b]0;title\x07"
    Path(hostile).write_bytes(b"x")
    digest = theirs("sha256sum", hostile).stdout.split()[0].decode()
    Path("SUMS").write_bytes(
        f"{digest}  {hostile}\n{digest}  gone\x1b[2J\n{'0' * 64}  \x9b31m\n".encode()
    )
    result = ours("sum", "--check", "SUMS")
    assert result.exit_code == 1
    for stream in (result.stdout, result.stderr):
        assert not any((ord(c) < 32 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F for c in stream)
    assert result.stdout.splitlines() == [
        f"{quote_name(hostile)}: OK",
        f"{quote_name('gone' + chr(27) + '[2J')}: FAILED open or read",
        f"{quote_name(chr(0x9B) + '31m')}: FAILED open or read",
    ]
    assert "twocats sum: 'gone'$'\\033''[2J': No such file or directory" in result.stderr


def test_display_name_keeps_coreutils_escapes() -> None:
    """Names without escape sequences keep coreutils' form in --check lines; others are quoted."""
    assert display_name("plain name") == "plain name"
    assert display_name("back\\slash") == "back\\slash"
    assert display_name("new\nline\\") == "\\new\\nline\\\\"
    assert display_name("over\rprint") == "'over'$'\\r''print'"
    assert display_name("tab\t") == "tab\t"
    assert display_name("bell\a") == "'bell'$'\\a'"
