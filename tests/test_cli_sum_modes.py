"""twocats sum and hash_many with the lane modes of twocats.simd.modes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from twocats.cli import _file_digests, main
from twocats.exceptions import InvalidParametersError
from twocats.simd import hash_many
from twocats.simd.modes import MODES

# Two block-boundary sizes, an empty file and one larger than every mode's chunk or leaf size.
SIZES = [0, 1, 135, 136, 9000]


def paint(size: int, seed: int) -> bytes:
    """Return `size` bytes of the i % 251 pattern, shifted by `seed`."""
    return bytes((i + seed) % 251 for i in range(size))


def run(*args: str, stdin: bytes | None = None) -> Result:
    """Invoke the CLI."""
    return CliRunner().invoke(main, list(args), input=stdin)


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Create files of several sizes in a fresh working directory; return name -> content."""
    monkeypatch.chdir(tmp_path)
    contents = {f"f{index}.bin": paint(size, index) for index, size in enumerate(SIZES)}
    for name, data in contents.items():
        Path(name).write_bytes(data)
    return contents


@pytest.mark.parametrize("algorithm", sorted(MODES))
def test_sum_writes_and_checks_every_mode(algorithm: str, files: dict[str, bytes]) -> None:
    """Each lane mode's lines hold the mode's own digests and --check accepts them."""
    result = run("sum", "--backend", "simd", "-a", algorithm, *files)
    assert result.exit_code == 0, result.output
    expected = MODES[algorithm].many(list(files.values()), backend="reference")
    lines = [f"{digest.hex()}  {name}" for name, digest in zip(files, expected, strict=True)]
    assert result.stdout.splitlines() == lines
    Path("modes.sum").write_text(result.stdout)
    checked = run("sum", "-c", "-a", algorithm, "modes.sum")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.count(": OK") == len(files)


def test_streamed_mode_equals_hashlib(
    files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file above the batch limit is streamed through hashlib's SHA3-256 with the same digest."""
    monkeypatch.setattr(_file_digests, "SMALL_FILE", 100)
    result = run("sum", "-a", "sha3-256", "f4.bin")
    assert result.exit_code == 0, result.output
    assert result.stdout.split()[0] == hashlib.sha3_256(files["f4.bin"]).hexdigest()


def test_mode_without_streaming_refuses_files_over_the_limit(
    files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mode with no streaming form reads files whole and names the limit for larger ones."""
    monkeypatch.setattr(_file_digests, "SMALL_FILE", 100)
    monkeypatch.setattr(_file_digests, "WHOLE_FILE_LIMIT", 1000)
    result = run("sum", "-a", "lsh-256-256", "f1.bin", "f4.bin")
    assert result.exit_code == 1
    assert result.stdout.split()[1] == "f1.bin"
    assert "f4.bin: File too large: this algorithm has no streaming form" in result.stderr


def test_mode_reads_standard_input_whole() -> None:
    """Standard input is hashed with a mode that cannot stream."""
    result = run("sum", "-a", "blake2sp", "-", stdin=b"hello")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{MODES['blake2sp'].many([b'hello'])[0].hex()}  -\n"


def test_unknown_algorithm_is_a_usage_error() -> None:
    """An unknown --algorithm exits 2 and lists the names it accepts."""
    result = run("sum", "-a", "md5", "-")
    assert result.exit_code == 2
    assert "'md5' is not one of sha256" in result.stderr
    assert "lsh-512-512" in result.stderr


def test_hash_many_dispatches_to_the_modes() -> None:
    """hash_many accepts a lane-mode name and returns that mode's digests."""
    messages = [b"", b"abc", paint(300, 1)]
    assert hash_many(messages, "sha3-256") == [hashlib.sha3_256(m).digest() for m in messages]
    assert hash_many(messages, "lsh-512-512") == MODES["lsh-512-512"].many(messages)


def test_hash_many_mode_refuses_lane_options() -> None:
    """Lane counts and threads belong to the four lane primitives, not to the modes."""
    with pytest.raises(InvalidParametersError, match="lanes and threads apply only to"):
        hash_many([b"x"], "sha3-256", lanes=4)
