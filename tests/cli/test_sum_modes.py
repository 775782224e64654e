"""twocats sum and hash_many with the lane modes of twocats.lanes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from Crypto.Hash import KangarooTwelve, TurboSHAKE128, TurboSHAKE256

from tests.support import oracles
from twocats.cli import main
from twocats.exceptions import InvalidParametersError
from twocats.lanes import ALGORITHMS, file_digests, hash_many
from twocats.lanes.reference import lsh as lsh_reference
from twocats.lanes.reference import sha256tree as sha256tree_reference

#: The lane modes of the registry (the primitives have tests of their own).
MODES = {name: entry for name, entry in ALGORITHMS.items() if not entry.primitive}

# Two block-boundary sizes, an empty file and one larger than every mode's chunk or leaf size.
SIZES = [0, 1, 135, 136, 9000]


def paint(size: int, seed: int) -> bytes:
    """Return `size` bytes of the i % 251 pattern, shifted by `seed`."""
    return bytes((i + seed) % 251 for i in range(size))


def _jlanes(j: int) -> Callable[[bytes], bytes]:
    """j-lanes SHA-256 from hashlib: the root hashes the digests of the j word-interleaved lanes."""

    def digest(data: bytes) -> bytes:
        lanes = oracles.round_robin(data, 4, j)
        return hashlib.sha256(b"".join(hashlib.sha256(lane).digest() for lane in lanes)).digest()

    return digest


def _lsh(bits: int, size: int) -> Callable[[bytes], bytes]:
    """LSH from the pure-Python reference (checked against the 735 Crypto++ vectors elsewhere):
    neither hashlib nor pycryptodome has LSH."""
    function = lsh_reference.lsh256 if bits == 256 else lsh_reference.lsh512
    return lambda data: function(data, size)


#: Each mode by name, computed without the mode registry or the compiled kernels: hashlib,
#: pycryptodome and tests/support/oracles.py, or a pure-Python reference where no library has the
#: hash.
ORACLES: dict[str, Callable[[bytes], bytes]] = {
    "blake2bp": lambda data: oracles.blake2_tree(data, wide=True),
    "blake2sp": lambda data: oracles.blake2_tree(data, wide=False),
    "jlanes-sha256-4": _jlanes(4),
    "jlanes-sha256-8": _jlanes(8),
    "jlanes-sha256-16": _jlanes(16),
    "kt128": lambda data: KangarooTwelve.new(data=data, custom=b"").read(32),
    "kt256": lambda data: oracles.kangarootwelve(data, b"", 64, security=256),
    "lsh-256-224": _lsh(256, 28),
    "lsh-256-256": _lsh(256, 32),
    "lsh-512-224": _lsh(512, 28),
    "lsh-512-256": _lsh(512, 32),
    "lsh-512-384": _lsh(512, 48),
    "lsh-512-512": _lsh(512, 64),
    # ISA-L's multi-hash has no Python binding; its pure-Python reference stands in.
    "mh-sha256": sha256tree_reference.mh_sha256,
    "parallelhash128": lambda data: oracles.parallelhash(
        data, 8192, 32, b"", security=128, xof=False
    ),
    "parallelhash256": lambda data: oracles.parallelhash(
        data, 8192, 64, b"", security=256, xof=False
    ),
    "sha3-224": lambda data: hashlib.sha3_224(data).digest(),
    "sha3-256": lambda data: hashlib.sha3_256(data).digest(),
    "sha3-384": lambda data: hashlib.sha3_384(data).digest(),
    "sha3-512": lambda data: hashlib.sha3_512(data).digest(),
    "shake128": lambda data: hashlib.shake_128(data).digest(32),
    "shake256": lambda data: hashlib.shake_256(data).digest(64),
    "turboshake128": lambda data: TurboSHAKE128.new(domain=0x1F, data=data).read(32),
    "turboshake256": lambda data: TurboSHAKE256.new(domain=0x1F, data=data).read(64),
}


def test_every_mode_has_an_oracle() -> None:
    """The oracle table names exactly the registered modes."""
    assert set(ORACLES) == set(MODES)


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
    """Each lane mode's lines hold the digests of an independent oracle and --check accepts them."""
    result = run("sum", "--backend", "simd", "-a", algorithm, *files)
    assert result.exit_code == 0, result.output
    lines = [f"{ORACLES[algorithm](data).hex()}  {name}" for name, data in files.items()]
    assert result.stdout.splitlines() == lines
    Path("modes.sum").write_text(result.stdout)
    checked = run("sum", "-c", "-a", algorithm, "modes.sum")
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.count(": OK") == len(files)


def test_streamed_mode_equals_hashlib(
    files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file above the batch limit is streamed through hashlib's SHA3-256 with the same digest."""
    monkeypatch.setattr(file_digests, "SMALL_FILE", 100)
    result = run("sum", "-a", "sha3-256", "f4.bin")
    assert result.exit_code == 0, result.output
    assert result.stdout.split()[0] == hashlib.sha3_256(files["f4.bin"]).hexdigest()


def test_mode_without_streaming_refuses_files_over_the_limit(
    files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mode with no streaming form reads files whole and names the limit for larger ones."""
    monkeypatch.setattr(file_digests, "SMALL_FILE", 100)
    monkeypatch.setattr(file_digests, "WHOLE_FILE_LIMIT", 1000)
    result = run("sum", "-a", "lsh-256-256", "f1.bin", "f4.bin")
    assert result.exit_code == 1
    assert result.stdout.split()[1] == "f1.bin"
    assert "f4.bin: File too large: this algorithm has no streaming form" in result.stderr


def test_mode_reads_standard_input_whole() -> None:
    """Standard input is hashed with a mode that cannot stream."""
    result = run("sum", "-a", "blake2sp", "-", stdin=b"hello")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{oracles.blake2_tree(b'hello', wide=False).hex()}  -\n"


def test_unknown_algorithm_is_a_usage_error() -> None:
    """An unknown --algorithm exits 2 and lists the names it accepts."""
    result = run("sum", "-a", "md5", "-")
    assert result.exit_code == 2
    assert "'md5' is not one of sha256" in result.stderr
    assert "lsh-512-512" in result.stderr


def test_hash_many_dispatches_to_the_modes() -> None:
    """hash_many accepts every lane-mode name and returns that mode's digests."""
    messages = [b"", b"abc", paint(300, 1), paint(9000, 2)]
    for name, oracle in ORACLES.items():
        assert hash_many(messages, name) == [oracle(m) for m in messages], name


def test_hash_many_mode_refuses_lane_options() -> None:
    """Lane counts and threads belong to the lane primitives, not to the modes."""
    with pytest.raises(InvalidParametersError, match="lanes and threads apply only to"):
        hash_many([b"x"], "sha3-256", lanes=4)
