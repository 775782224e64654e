"""The parameter options of hash and derive, --data-file, and TWOCATS_DEBUG=1."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from click import BadParameter
from click.testing import CliRunner, Result

from twocats import kdf, phc
from twocats.cli import main
from twocats.cli._options import DURATION, SIZE
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST

#: Every parameter option at a value other than the cheapest profile's.
OPTIONS = [
    "--profile", "cheapest", "--insecure", "--hash-type", "blake2b", "--mem-cost", "5",
    "--start-mem-cost", "3",
    "--block-size", "1024", "--sub-block-size", "128", "--overwrite-cost", "2",
    "--side-channel-resistant",
]  # fmt: skip

#: The parameters those options ask for.
EXPECTED = dataclasses.replace(
    CHEAPEST,
    hash_type="blake2b",
    mem_cost=5,
    start_mem_cost=3,
    block_size=1024,
    sub_block_size=128,
    overwrite_cost=2,
    side_channel_resistant=True,
)


def run(*args: str, stdin: str = "pw\n") -> Result:
    """Invoke the CLI with separate stdout and stderr."""
    return CliRunner().invoke(main, list(args), input=stdin)


def test_hash_takes_every_parameter_option() -> None:
    """hash stores exactly the parameters the options name, and the hash verifies."""
    result = run("hash", *OPTIONS, "--password-stdin")
    assert result.exit_code == 0, result.output
    stored = result.stdout.strip()
    assert phc.decode(stored).params == EXPECTED
    assert stored.startswith("$twocats$v=2015$h=blake2b,m=5,s=3,x=1,p=1,b=1024,sb=128,o=2,r=1$")
    assert PasswordHasher.from_params(EXPECTED).verify(stored, "pw")


def test_derive_takes_every_parameter_option() -> None:
    """derive computes the key of exactly the parameters the options name."""
    result = run("derive", *OPTIONS, "--salt", "NaCl", "--password-stdin")
    assert result.exit_code == 0, result.output
    assert result.stdout == kdf.derive(b"pw", b"NaCl", EXPECTED).hex() + "\n"
    plain = run(
        "derive", "--profile", "cheapest", "--insecure", "--salt", "NaCl", "--password-stdin"
    )
    assert plain.stdout != result.stdout


def test_derive_reads_associated_data_from_a_file(tmp_path: Path) -> None:
    """--data-file supplies every byte of the file as the associated data, as --data-hex does."""
    data = tmp_path / "data"
    data.write_bytes(b"\x00associated\xff\n")
    args = ["derive", "--profile", "cheapest", "--insecure", "--salt", "NaCl", "--password-stdin"]
    from_file = run(*args, "--data-file", str(data))
    assert from_file.exit_code == 0, from_file.output
    expected = kdf.derive(b"pw", b"NaCl", CHEAPEST, data=b"\x00associated\xff\n")
    assert from_file.stdout == expected.hex() + "\n"
    from_hex = run(*args, "--data-hex", b"\x00associated\xff\n".hex())
    assert from_hex.stdout == from_file.stdout
    assert run(*args).stdout != from_file.stdout


def test_debug_shows_the_traceback_of_an_unexpected_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With TWOCATS_DEBUG=1 a bug prints its traceback, then the same one error line and exit 1."""

    def broken(self: PasswordHasher, password: object, **_: object) -> str:
        raise RuntimeError("internal detail")

    monkeypatch.setattr(PasswordHasher, "hash", broken)
    monkeypatch.setenv("TWOCATS_DEBUG", "1")
    result = run("hash", "--profile", "cheapest", "--insecure", "--password-stdin")
    assert result.exit_code == 1
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert "RuntimeError: internal detail\n" in result.stderr
    assert result.stderr.endswith(
        "Error: unexpected RuntimeError; set TWOCATS_DEBUG=1 to see the details\n"
    )
    monkeypatch.delenv("TWOCATS_DEBUG")
    quiet = run("hash", "--profile", "cheapest", "--insecure", "--password-stdin")
    assert quiet.exit_code == 1
    assert "Traceback" not in quiet.stderr


#: What SIZE and DURATION say of a value that is not theirs.
NOT_A_SIZE = "expected a size such as 1GiB, 512MiB or 2GB"
NOT_A_DURATION = "expected a duration with a unit, such as 250ms or 0.5s"


@pytest.mark.parametrize(
    ("text", "size", "seconds"),
    [
        ("2GB", 2_000_000_000, NOT_A_DURATION),
        (" 3 k ", 3072, NOT_A_DURATION),
        ("250ms", NOT_A_SIZE, 0.25),
        ("-1s", "a size must be positive", "a duration must be positive"),
        ("0", "a size must be positive", NOT_A_DURATION),
        ("0.1b", "a size must be positive", NOT_A_DURATION),
        ("0s", NOT_A_SIZE, "a duration must be positive"),
        ("9" * 400 + "TB", "the size is too large", NOT_A_DURATION),
        ("9" * 400 + "s", NOT_A_SIZE, "the duration is too long"),
    ],
)
def test_sizes_and_durations_read_their_units_or_say_why_not(
    text: str, size: int | str, seconds: float | str
) -> None:
    """Sizes and durations given on the command line give a value or a clear message."""
    for kind, wanted in ((SIZE, size), (DURATION, seconds)):
        if isinstance(wanted, str):
            with pytest.raises(BadParameter, match=f"^{re.escape(wanted)}$"):
                kind.convert(text, None, None)
        else:
            assert kind.convert(text, None, None) == wanted
