"""Fuzz the readers of untrusted text: PHC strings, ``verify``, ``sum --check`` lines, vector files.

``python -m fuzz [--count N] [--seed S] [--targets a,b] [--out DIR]`` feeds each target
``N`` inputs (default 100,000) and checks its contract on every one:

* ``phc`` and ``phc_params``: :func:`twocats.phc.decode` and :func:`~twocats.phc.decode_params`
  (given ``str`` or ``bytes``) raise nothing but ``InvalidHashError``, and whatever they accept
  encodes back to exactly the input.
* ``verify``: :meth:`twocats.PasswordHasher.verify` with a small memory limit raises nothing but
  ``InvalidHashError`` (with its limit subclasses) and ``VerifyMismatchError``, plus
  ``InvalidParametersError`` for a ``str`` password that is not valid Unicode; it returns True
  only for an unmodified seed and the right password.
* ``checksum``: :func:`twocats.cli.checksum.parse_check_line` never raises, and a parsed line
  written out again parses to the same digest and name; one input in
  :data:`CLI_EVERY` also runs through ``twocats sum --check`` end to end, which must exit with
  status 0 or 1 and no unexpected error.
* ``vectors``: :func:`twocats.kdf.vectors.read_vectors` (and, for one input in
  :data:`FILE_EVERY`, :func:`~twocats.kdf.vectors.load_vectors` on the raw bytes) raise nothing
  but ``VectorFormatError``; building a vector's parameters raises nothing but
  ``InvalidParametersError``; a vector prints as one line, and a record re-serialised reads back
  to the same vector.

* ``stored_cli``: ``twocats upgrade`` and ``twocats needs-rehash`` (alternately) on a stored hash
  with a 1 MiB ``--max-memory`` and a 20 ms ``--max-work``, seeded with ordinary hashes and with
  planted costly shapes (``time_cost=30``, 4 GiB): each exits with status 0 or 2 and one ``Error:``
  line at most, never an unexpected error, and within :data:`TIME_LIMIT` (the memory and work
  limits hold); an upgraded hash is at the memory cost asked for, one above the stored hash's.
* ``selftest_cli``: ``twocats selftest --vectors FILE --max-memory 1MiB --max-work 20ms`` on a
  file of one
  vector record, seeded with the packaged vectors and planted costly ones: it exits with status 0,
  1 or 2, never an unexpected error, and within :data:`TIME_LIMIT` (over-limit vectors are
  refused, not run).

No exception message of the PHC, ``verify``, checksum or ``stored_cli`` targets may contain
:data:`MARKER`, a stand-in secret that the generator plants in inputs and passwords: those messages
never quote their input.  (The vector reader, and so ``selftest_cli``, names a bad record by its id
and quotes unknown names, at most 40 ASCII characters of them: vector files hold no secrets.)

An input is random bytes, random text over the target's alphabet, a structural mutation (vector
records), or most often a valid seed put through one to five mutations: bit flips, byte changes,
truncations, deletions, duplicated, dropped or reordered fields, huge or odd numbers (leading
zeros, signs, 5000 digits, non-ASCII digits), non-ASCII text, NUL bytes, invalid UTF-8, very long
repetitions (up to :data:`MAX_INPUT` bytes) and splices of two seeds.  Each input runs under a
:data:`TIME_LIMIT` second alarm, so a hang is reported as such.

The report (``fuzz.json`` and ``fuzz.md`` in ``--out``, default fuzz/results) counts inputs,
acceptances and refusals by exception class per target; any undocumented exception, broken
contract or hang is listed with its input saved under ``fuzz-failures/`` and makes the exit
status 1.  ``--replay TARGET FILE`` reruns one saved input and shows its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from bench.harness import machine
from twocats import phc
from twocats.cli.checksum import escape_name, parse_check_line
from twocats.exceptions import (
    InvalidHashError,
    InvalidParametersError,
    VerifyMismatchError,
)
from twocats.hasher import PasswordHasher
from twocats.kdf.vectors import Vector, VectorFormatError, load_vectors, read_vectors
from twocats.params import Params
from twocats.profiles import CHEAPEST

__all__ = [
    "MARKER",
    "TARGETS",
    "ContractError",
    "Outcome",
    "Target",
    "classify",
    "generate",
    "main",
    "planted_hashes",
    "planted_vectors",
    "run",
    "smoke",
]

#: Where ``python -m fuzz`` writes its report unless told ``--out``.
RESULTS_DIR = Path(__file__).resolve().parent / "results"

#: A stand-in secret planted in inputs and passwords; no exception message may contain it.
MARKER = "Zq7SecretMarker"

#: The password of every ``verify`` seed.
PASSWORD = f"{MARKER}-password"

#: The longest input generated, in bytes.
MAX_INPUT = 1 << 20

#: Seconds one input may take before it counts as a hang.
TIME_LIMIT = 20.0

#: One ``checksum`` input in this many also runs through ``twocats sum --check``.
CLI_EVERY = 10

#: One ``vectors`` input in this many is also read from a file of raw bytes.
FILE_EVERY = 20

#: The memory limit of the ``verify`` hasher (its work limit follows from it and its parameters).
VERIFY_MAX_MEMORY = 1 << 20

# Byte strings that mutations plant: separators, escapes, invalid UTF-8, JSON syntax.
_TOKENS = (
    b"\x00",
    b"\xff",
    b"\x80",
    "\u00e9".encode(),
    "\u4e2d".encode(),
    b"\xed\xa0\x80",  # A UTF-8-encoded surrogate: invalid UTF-8.
    b"$",
    b",",
    b"=",
    b"$$",
    b"\\",
    b"*",
    b" ",
    b"  ",
    b"\t",
    b"\n",
    b"\r",
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b":",
    b"null",
    b"true",
    b"==",
    b"+",
    b"/",
    MARKER.encode(),
)

# Replacements for a run of digits: odd spellings of numbers and numbers far out of range.
_NUMBERS = (
    b"0",
    b"00",
    b"01",
    b"-1",
    b"+1",
    b" 1",
    b"1 ",
    b"1.0",
    b"1e9",
    b"0x10",
    b"255",
    b"256",
    b"65536",
    b"9999999",
    b"10000000",
    b"2147483648",
    b"4294967295",
    b"4294967296",
    b"18446744073709551616",
    b"9" * 40,
    b"9" * 5000,
    "\u0663".encode(),  # ARABIC-INDIC DIGIT THREE: int() accepts it, the formats must not.
    "\uff11".encode(),  # FULLWIDTH DIGIT ONE.
)


class ContractError(AssertionError):
    """A target accepted or produced something its contract forbids."""


class CliRefusal(Exception):  # noqa: N818 - named for the report's "refused: CliRefusal" rows
    """A command refused its input with exit status 2 and one ``Error:`` line (documented)."""


class Hang(BaseException):
    """An input ran longer than :data:`TIME_LIMIT` seconds."""


@dataclass(frozen=True)
class Outcome:
    """What one input did: ``accepted``, ``refused`` (a documented exception) or a failure."""

    kind: str
    detail: str = ""


@dataclass
class Target:
    """A reader under test: its seeds, how to mutate them, and its contract."""

    name: str
    seeds: list[bytes]
    alphabet: bytes
    separators: bytes
    check: Callable[[bytes, int], str]
    documented: tuple[type[BaseException], ...]
    structured: Callable[[random.Random], bytes] | None = None
    quotes_input: bool = False


# -- mutations -------------------------------------------------------------------------------------


def _span(rng: random.Random, size: int) -> tuple[int, int]:
    """A random slice of a ``size``-byte input, usually a few bytes long, up to 64."""
    start = rng.randrange(size + 1)
    end = min(size, start + 1 + rng.randrange(1 << rng.randrange(7)))
    return start, end


def _flip_bit(rng: random.Random, data: bytes, target: Target) -> bytes:
    if not data:
        return data
    index = rng.randrange(len(data))
    return data[:index] + bytes([data[index] ^ (1 << rng.randrange(8))]) + data[index + 1 :]


def _set_byte(rng: random.Random, data: bytes, target: Target) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    index = rng.randrange(len(data))
    value = rng.choice((rng.randrange(256), rng.choice(target.alphabet)))
    return data[:index] + bytes([value]) + data[index + 1 :]


def _insert_token(rng: random.Random, data: bytes, target: Target) -> bytes:
    index = rng.randrange(len(data) + 1)
    return data[:index] + rng.choice(_TOKENS) + data[index:]


def _delete_span(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    return data[:start] + data[end:]


def _truncate(rng: random.Random, data: bytes, target: Target) -> bytes:
    cut = rng.randrange(len(data) + 1)
    return data[:cut] if rng.random() < 0.7 else data[cut:]


def _duplicate_span(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    return data[:end] + data[start:end] + data[end:]


def _fields(rng: random.Random, data: bytes, target: Target) -> tuple[bytes, list[bytes]]:
    separator = bytes([rng.choice(target.separators)])
    return separator, data.split(separator)


def _duplicate_field(rng: random.Random, data: bytes, target: Target) -> bytes:
    separator, parts = _fields(rng, data, target)
    index = rng.randrange(len(parts))
    parts.insert(rng.randrange(len(parts) + 1), parts[index])
    return separator.join(parts)


def _drop_field(rng: random.Random, data: bytes, target: Target) -> bytes:
    separator, parts = _fields(rng, data, target)
    del parts[rng.randrange(len(parts))]
    return separator.join(parts)


def _swap_fields(rng: random.Random, data: bytes, target: Target) -> bytes:
    separator, parts = _fields(rng, data, target)
    first, second = rng.randrange(len(parts)), rng.randrange(len(parts))
    parts[first], parts[second] = parts[second], parts[first]
    return separator.join(parts)


def _odd_number(rng: random.Random, data: bytes, target: Target) -> bytes:
    runs = [index for index, byte in enumerate(data) if 48 <= byte <= 57]
    if not runs:
        return _insert_token(rng, data, target)
    start = end = rng.choice(runs)
    while start > 0 and 48 <= data[start - 1] <= 57:
        start -= 1
    while end < len(data) and 48 <= data[end] <= 57:
        end += 1
    return data[:start] + rng.choice(_NUMBERS) + data[end:]


def _repeat_span(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    piece = data[start:end] or b"A"
    times = rng.choice((2, 10, 100, 1000, MAX_INPUT // len(piece)))
    return data[:start] + piece * times + data[end:]


def _splice(rng: random.Random, data: bytes, target: Target) -> bytes:
    other = rng.choice(target.seeds)
    return data[: rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1) :]


def _swap_case(rng: random.Random, data: bytes, target: Target) -> bytes:
    start, end = _span(rng, len(data))
    return data[:start] + data[start:end].swapcase() + data[end:]


MUTATIONS: tuple[Callable[[random.Random, bytes, Target], bytes], ...] = (
    _flip_bit,
    _set_byte,
    _insert_token,
    _delete_span,
    _truncate,
    _duplicate_span,
    _duplicate_field,
    _drop_field,
    _swap_fields,
    _odd_number,
    _repeat_span,
    _splice,
    _swap_case,
)


def generate(rng: random.Random, target: Target) -> bytes:
    """Return one input for ``target``: random, structured, or a mutated seed."""
    _load_seeds()
    choice = rng.random()
    if choice < 0.04:
        size = rng.choice((0, 1, 2, 8, 64, 300, 5000))
        data = rng.randbytes(rng.randrange(size + 1))
    elif choice < 0.12:
        size = rng.choice((1, 8, 64, 300))
        data = bytes(rng.choice(target.alphabet) for _ in range(rng.randrange(size + 1)))
    else:
        if target.structured is not None and choice < 0.40:
            data = target.structured(rng)
        else:
            data = rng.choice(target.seeds)
        for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3, 5))):
            data = rng.choice(MUTATIONS)(rng, data, target)
            if len(data) > MAX_INPUT:
                data = data[:MAX_INPUT]
    return data


# -- the targets -----------------------------------------------------------------------------------


def _as_input(data: bytes, serial: int) -> str | bytes:
    """Hand the reader bytes for one input in three, else text (undecodable bytes escaped)."""
    if serial % 3 == 0:
        return data
    return data.decode("utf-8", "surrogateescape")


def _phc_seed_params() -> list[Params]:
    """Parameter sets that write every key of every version at least once."""
    return [
        CHEAPEST,
        Params(mem_cost=18, multiplies=3),
        Params(hash_type="sha512", mem_cost=12, start_mem_cost=10, lanes=16, overwrite_cost=0),
        Params(mem_cost=14, side_channel_resistant=True, block_size=1024, sub_block_size=32),
        Params(variant="2014", mem_cost=10, time_cost=3, parallelism=1),
        Params(variant="2014-03", hash_type="blake2b", mem_cost=9, time_cost=1, hash_size=255),
        Params(variant="2014-03", mem_cost=5, hash_size=10, parallelism=3, sub_block_size=32),
    ]


def _phc_seeds() -> list[bytes]:
    seeds = []
    for number, params in enumerate(_phc_seed_params()):
        salt = bytes(range(number, number + 8 + 7 * number))
        digest = bytes((number * 37 + i) % 256 for i in range(params.output_size))
        seeds.append(phc.encode(params, salt, digest).encode("ascii"))
    return seeds


def _check_phc(data: bytes, serial: int) -> str:
    given = _as_input(data, serial)
    decoded = phc.decode(given)
    text = given.decode("ascii") if isinstance(given, bytes) else given
    if decoded.encode() != text:
        raise ContractError("decode accepted a string that does not encode back to itself")
    return "accepted"


def _check_phc_params(data: bytes, serial: int) -> str:
    given = _as_input(data, serial)
    params = phc.decode_params(given)
    text = given.decode("ascii") if isinstance(given, bytes) else given
    if phc.encode_params(params) != text:
        raise ContractError("decode_params accepted a non-canonical string")
    return "accepted"


def _verify_seed_params() -> list[Params]:
    """Small parameter sets of every version, hash type and lane count a seed should cover."""
    return [
        CHEAPEST,
        Params(mem_cost=4, multiplies=2, lanes=2, parallelism=2, block_size=256, sub_block_size=32),
        Params(mem_cost=3, lanes=1, parallelism=1, block_size=64, sub_block_size=32),
        Params(hash_type="sha512", mem_cost=2, lanes=16, parallelism=1, block_size=64),
        Params(
            hash_type="blake2b",
            mem_cost=3,
            start_mem_cost=1,
            multiplies=0,
            parallelism=1,
            block_size=64,
            side_channel_resistant=True,
        ),
        Params(hash_type="sha256", mem_cost=2, lanes=4, parallelism=1, block_size=128),
        Params(variant="2014", mem_cost=2, time_cost=1, parallelism=1, block_size=64),
        Params(variant="2014-03", mem_cost=2, hash_size=20, sub_block_size=32, parallelism=1),
    ]


_hashers: dict[str, PasswordHasher] = {}


def _verify_hasher() -> PasswordHasher:
    """The hasher under test: the default backend and a 1 MiB memory limit."""
    if "verify" not in _hashers:
        _hashers["verify"] = PasswordHasher.from_params(CHEAPEST, max_memory=VERIFY_MAX_MEMORY)
    return _hashers["verify"]


def _verify_seeds() -> list[bytes]:
    seeds = []
    for number, params in enumerate(_verify_seed_params()):
        hasher = PasswordHasher.from_params(params)
        seeds.append(hasher.hash(PASSWORD, salt=bytes([number]) * 16).encode("ascii"))
    return seeds


_VERIFY_SEEDS: list[bytes] = []


def _check_verify(data: bytes, serial: int) -> str:
    given = _as_input(data, serial)
    if serial % 10 == 9:
        # A wrong password: random text, surrogates included, with the marker inside.
        rng = random.Random(serial)
        password: str | bytes = (
            "".join(
                chr(rng.choice((rng.randrange(32, 127), rng.randrange(0xD800, 0xE000))))
                for _ in range(rng.randrange(20))
            )
            + MARKER
        )
    else:
        password = PASSWORD if serial % 2 else PASSWORD.encode()
    verified = _verify_hasher().verify(given, password)
    if verified is not True:
        raise ContractError("verify returned something other than True")
    as_bytes = given if isinstance(given, bytes) else given.encode("utf-8", "surrogateescape")
    if as_bytes not in _VERIFY_SEEDS or password not in (PASSWORD, PASSWORD.encode()):
        raise ContractError("verify accepted a modified hash or a wrong password")
    return "accepted"


_CHECK_NAMES = (
    "plain.txt",
    "with space.txt",
    "back\\slash",
    "new\nline",
    "carriage\rreturn",
    "*star",
    "caf\u00e9",
    "dir/nested.bin",
    " leading",
)


def _checksum_seeds() -> list[bytes]:
    seeds = []
    for number, name in enumerate(_CHECK_NAMES):
        size = 32 if number % 2 else 64
        digest = bytes((number * 11 + i) % 256 for i in range(size)).hex()
        prefix, shown = escape_name(name)
        mode = " " if number % 3 else "*"
        seeds.append(os.fsencode(f"{prefix}{digest} {mode}{shown}"))
    return seeds


def _format_check_line(digest: bytes, name: str) -> bytes:
    prefix, shown = escape_name(name)
    return os.fsencode(f"{prefix}{digest.hex()}  {shown}")


# The working folder of the ``sum --check`` runs while a fuzz run lasts.
_workspace: list[Path] = []


@contextlib.contextmanager
def _cli_workspace() -> Iterator[Path]:
    """A temporary folder holding files the checksum seeds name, as the working directory."""
    with tempfile.TemporaryDirectory(prefix="twocats-fuzz-") as folder:
        root = Path(folder)
        (root / "dir").mkdir()
        for name in _CHECK_NAMES:
            with contextlib.suppress(OSError):
                (root / name).write_bytes(name.encode("utf-8") * 3)
        previous = Path.cwd()
        os.chdir(root)
        try:
            yield root
        finally:
            os.chdir(previous)


def _run_sum_check(data: bytes, serial: int) -> None:
    """Run ``twocats sum --check`` on a file of the input's lines among valid ones."""
    from click.testing import CliRunner

    from twocats.cli import main as cli_main

    workspace = _workspace[0]
    run = serial // CLI_EVERY
    lines = [data]
    for name in _CHECK_NAMES[: run % 4]:
        with contextlib.suppress(OSError):
            digest = hashlib.sha256((workspace / name).read_bytes()).digest()
            lines.append(_format_check_line(digest, name))
    sum_file = workspace / "check.sums"
    sum_file.write_bytes(b"\n".join(lines) + b"\n")
    algorithm = ("sha256", "sha512", "blake2b", "blake2b-256", "blake2s")[run % 5]
    result = CliRunner().invoke(cli_main, ["sum", "--check", "-a", algorithm, str(sum_file)])
    if result.exit_code not in (0, 1) or "unexpected" in result.stderr:
        raise ContractError(
            f"sum --check exited with {result.exit_code}: {result.stderr.strip()[:200]}"
        )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception


def _check_checksum(data: bytes, serial: int) -> str:
    outcome = "refused"
    for size in (32, 64):
        parsed = parse_check_line(data, size)
        if parsed is None:
            continue
        outcome = "accepted"
        again = parse_check_line(_format_check_line(parsed.digest, parsed.name), size)
        if again != parsed:
            raise ContractError("a parsed line written out again parses differently")
    if serial % CLI_EVERY == 0 and _workspace:
        _run_sum_check(data, serial)
    return outcome


def _vector_seeds() -> list[bytes]:
    from importlib import resources

    text = resources.files("twocats.kdf").joinpath("selftest.jsonl").read_bytes()
    return [line for line in text.splitlines() if line.strip()]


# Replacement values for a field of a vector record.
_JSON_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    31,
    255,
    256,
    1 << 32,
    1 << 64,
    10**300,
    1.5,
    float("inf"),
    "",
    "zz",
    "00" * 40,
    "0" * 7,
    MARKER,
    "\ud800",
    [],
    {},
    [1, 2],
    {"a": 1},
)


def _structured_vector(rng: random.Random) -> bytes:
    """A seed record with a few fields deleted, added or given values of the wrong kind."""
    record: dict[str, Any] = json.loads(rng.choice(_VECTOR_SEEDS))
    for _ in range(rng.randrange(1, 4)):
        keys = list(record)
        action = rng.random()
        if action < 0.2 and keys:
            del record[rng.choice(keys)]
        elif action < 0.3:
            record[rng.choice(("extra", "api", "algorithm_version", "oldMemCost"))] = rng.choice(
                (
                    "update",
                    "extended+update",
                    "phs",
                    "full",
                    "simple",
                    "server",
                    "client",
                    "March 2014",
                    "timeCost variant",
                    "2014-03",
                    "TwoCats_UpdatePassword",
                )
            )
        elif keys:
            record[rng.choice(keys)] = rng.choice(_JSON_VALUES)
    text = json.dumps(record, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.02:
        depth = rng.choice((100, 1000, 100_000))
        text = text[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
    return text.encode("utf-8", "surrogatepass")


_VECTOR_SEEDS: list[bytes] = []


def _check_vector(vector: Vector) -> None:
    shown = str(vector)
    if "\n" in shown or not shown.isprintable():
        raise ContractError("a vector does not print as one printable line")
    with contextlib.suppress(InvalidParametersError):
        vector.params()
    with contextlib.suppress(InvalidParametersError):
        vector.memory_bytes()


def _check_vectors(data: bytes, serial: int) -> str:
    text = data.decode("utf-8", "surrogateescape")
    if serial % FILE_EVERY == 0:
        with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as handle:
            handle.write(data)
        try:
            with contextlib.suppress(VectorFormatError):
                for vector in load_vectors(handle.name):
                    _check_vector(vector)
        finally:
            os.unlink(handle.name)
    # Files are read line by line at newlines only (str.splitlines would also split at U+2028).
    vectors = read_vectors(text.split("\n"))
    for vector in vectors:
        _check_vector(vector)
    lines = [line for line in text.split("\n") if line.strip()]
    again = read_vectors([json.dumps(json.loads(line)) for line in lines])
    if again != vectors:
        raise ContractError("a record re-serialised reads back as a different vector")
    return "accepted"


#: The limits of the command-line targets (``--max-memory`` and ``--max-work``).
CLI_LIMITS = ["--max-memory", "1MiB", "--max-work", "20ms"]


def planted_hashes() -> list[bytes]:
    """Costly stored hashes: time_cost=30 in the 2014 and March 2014 versions, then 4 GiB, then
    the sha512 shape at 512 MiB with 64-byte blocks."""
    shapes = [
        Params(
            variant=v,
            mem_cost=0,
            time_cost=30,
            multiplies=0,
            parallelism=1,
            block_size=32,
            sub_block_size=32,
        )
        for v in ("2014", "2014-03")
    ]
    shapes.append(Params(mem_cost=22))
    shapes.append(
        Params(
            hash_type="sha512",
            mem_cost=19,
            multiplies=0,
            parallelism=1,
            block_size=64,
            sub_block_size=32,
        )
    )
    return [
        phc.encode(shape, bytes(16), bytes(shape.output_size)).encode("ascii") for shape in shapes
    ]


def _invoke(args: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    """Run the command line in this process; return (exit status, stdout, stderr)."""
    from click.testing import CliRunner

    from twocats.cli import main as cli_main

    result = CliRunner().invoke(cli_main, args, input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _cli_outcome(status: int, stderr: str, allowed: tuple[int, ...], what: str) -> str:
    """Check a command's exit status and error line; return the outcome or raise CliRefusal."""
    errors = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    if status not in allowed or "unexpected" in stderr or "Traceback" in stderr:
        raise ContractError(f"{what} exited with {status}: {stderr.strip()[:200]}")
    if len(errors) > 1:
        raise ContractError(f"{what} printed {len(errors)} error lines")
    if status == 2:
        if not errors:
            raise ContractError(f"{what} exited with 2 and no Error: line")
        raise CliRefusal(errors[0])
    return "accepted"


def _check_stored_cli(data: bytes, serial: int) -> str:
    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("-"):
        # An argument starting with a dash is an option to click; a hash never starts so.
        text = " " + text
    if serial % 2:
        status, _, stderr = _invoke(["needs-rehash", text, "--mem-cost", "3", *CLI_LIMITS])
        return _cli_outcome(status, stderr, (0, 2), "needs-rehash")
    try:
        mem_cost = min(30, phc.decode(data).params.mem_cost + 1)
    except InvalidHashError:
        mem_cost = 3
    status, stdout, stderr = _invoke(["upgrade", text, "--mem-cost", str(mem_cost), *CLI_LIMITS])
    outcome = _cli_outcome(status, stderr, (0, 2), "upgrade")
    # The stored hash was within 1 MiB; the upgrade may take the memory of the cost asked for.
    if phc.decode(stdout.strip()).params.mem_cost != mem_cost:
        raise ContractError("upgrade made a hash at another memory cost than asked for")
    return outcome


def planted_vectors() -> list[bytes]:
    """Vector records that would run for hours or need 4 GiB: selftest must refuse them."""
    base = {
        "id": "planted",
        "algorithm_version": "timeCost variant",
        "hash_type": "blake2s",
        "memCost": 0,
        "timeCost": 30,
        "multiplies": 0,
        "parallelism": 1,
        "blockSize": 32,
        "subBlockSize": 32,
        "password_hex": "70",
        "salt_hex": "73616c74",
        "output_hex": "00" * 32,
    }
    huge = {**base, "timeCost": 0, "memCost": 22}
    return [json.dumps(record).encode("ascii") for record in (base, huge)]


def _check_selftest_cli(data: bytes, serial: int) -> str:
    workspace = _workspace[0]
    path = workspace / "vectors.jsonl"
    path.write_bytes(data + b"\n")
    status, _, stderr = _invoke(["selftest", "--vectors", str(path), *CLI_LIMITS])
    return _cli_outcome(status, stderr, (0, 1, 2), "selftest")


_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

TARGETS: dict[str, Target] = {
    "phc": Target(
        "phc",
        [],
        _B64 + b"$=,twocatsvhmxlpbrodi",
        b"$,=",
        _check_phc,
        (InvalidHashError,),
    ),
    "phc_params": Target(
        "phc_params",
        [],
        b"$=,twocatsvhmxlpbrodi0123456789",
        b"$,=",
        _check_phc_params,
        (InvalidHashError,),
    ),
    "verify": Target(
        "verify",
        [],
        _B64 + b"$=,twocatsvhmxlpbrodi",
        b"$,=",
        _check_verify,
        (InvalidHashError, VerifyMismatchError, InvalidParametersError),
    ),
    "checksum": Target(
        "checksum",
        [],
        b"0123456789abcdefABCDEF *\\nr\t./",
        b" *\\",
        _check_checksum,
        (),
    ),
    "vectors": Target(
        "vectors",
        [],
        b'{}[]":, 0123456789abcdef-_.etrunl',
        b',:"',
        _check_vectors,
        (VectorFormatError,),
        structured=_structured_vector,
        quotes_input=True,
    ),
    "stored_cli": Target(
        "stored_cli",
        [],
        _B64 + b"$=,twocatsvhmxlpbrodi",
        b"$,=",
        _check_stored_cli,
        (CliRefusal,),
    ),
    "selftest_cli": Target(
        "selftest_cli",
        [],
        b'{}[]":, 0123456789abcdef-_.etrunl',
        b',:"',
        _check_selftest_cli,
        (CliRefusal,),
        structured=_structured_vector,
        quotes_input=True,
    ),
}


def _load_seeds() -> None:
    """Build every target's seeds (hashing the verify seeds) once."""
    if TARGETS["phc"].seeds:
        return
    phc_seeds = _phc_seeds()
    TARGETS["phc"].seeds.extend(phc_seeds)
    TARGETS["phc_params"].seeds.extend(seed.rsplit(b"$", 2)[0] for seed in phc_seeds)
    _VERIFY_SEEDS.extend(_verify_seeds())
    TARGETS["verify"].seeds.extend(_VERIFY_SEEDS)
    TARGETS["checksum"].seeds.extend(_checksum_seeds())
    _VECTOR_SEEDS.extend(_vector_seeds())
    TARGETS["vectors"].seeds.extend(_VECTOR_SEEDS)
    TARGETS["stored_cli"].seeds.extend([*_VERIFY_SEEDS, *planted_hashes()])
    TARGETS["selftest_cli"].seeds.extend([*_VECTOR_SEEDS, *planted_vectors()])


# -- running ---------------------------------------------------------------------------------------


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def _leaks(error: BaseException) -> bool:
    return MARKER in str(error) or MARKER in repr(error)


def classify(target: Target, data: bytes, serial: int) -> Outcome:
    """Run one input on ``target`` and say what happened (never raises, except on Ctrl-C)."""
    _load_seeds()
    try:
        kind = target.check(data, serial)
    except ContractError as violation:
        return Outcome("violation", str(violation))
    except Hang:
        return Outcome("hang", f"longer than {TIME_LIMIT:g} s")
    except KeyboardInterrupt:
        raise
    except target.documented as error:
        if not target.quotes_input and _leaks(error):
            return Outcome("violation", f"{type(error).__name__} message quotes the input")
        return Outcome("refused", type(error).__name__)
    except BaseException as error:
        return Outcome("undocumented", f"{type(error).__name__}: {str(error)[:200]}")
    if kind == "refused":
        return Outcome("refused", "returned None")
    return Outcome(kind)


@dataclass
class TargetReport:
    """Counts of one target's run."""

    inputs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def _warm_up(names: Sequence[str]) -> None:
    """Run each target on its seeds once, untimed, so that kernel compiles never count as hangs.

    Serials that are multiples of :data:`CLI_EVERY` and :data:`FILE_EVERY` take the command-line
    and file paths; five of them take one checksum algorithm each.
    """
    step = math.lcm(CLI_EVERY, FILE_EVERY)
    for name in names:
        target = TARGETS[name]
        for number, data in enumerate(target.seeds):
            classify(target, data, number * step)


def run(
    count: int, seed: int, names: Sequence[str], failures_dir: Path | None, *, echo: bool = True
) -> dict[str, TargetReport]:
    """Feed ``count`` inputs to each named target; return the counts per target."""
    _load_seeds()
    reports: dict[str, TargetReport] = {}
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        with _cli_workspace() as workspace:
            _workspace.append(workspace)
            try:
                _warm_up(names)
                for name in names:
                    reports[name] = _run_target(TARGETS[name], count, seed, failures_dir, echo)
            finally:
                _workspace.clear()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return reports


def _run_target(
    target: Target, count: int, seed: int, failures_dir: Path | None, echo: bool
) -> TargetReport:
    rng = random.Random(f"{seed}/{target.name}")
    report = TargetReport()
    started = time.perf_counter()
    for serial in range(count):
        data = generate(rng, target)
        signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
        try:
            outcome = classify(target, data, serial)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        report.inputs += 1
        label = outcome.kind if outcome.kind != "refused" else f"refused: {outcome.detail}"
        report.outcomes[label] += 1
        if outcome.kind not in ("accepted", "refused"):
            saved = None
            if failures_dir is not None:
                failures_dir.mkdir(parents=True, exist_ok=True)
                path = failures_dir / f"{target.name}-{serial}.bin"
                path.write_bytes(data)
                saved = str(path)
            report.failures.append(
                {"serial": serial, "kind": outcome.kind, "detail": outcome.detail, "input": saved}
            )
        if echo and (serial + 1) % max(1, count // 10) == 0:
            print(
                f"  {target.name}: {serial + 1}/{count} inputs, {len(report.failures)} failures",
                file=sys.stderr,
                flush=True,
            )
    report.seconds = time.perf_counter() - started
    return report


def _markdown(document: dict[str, Any]) -> str:
    info = document["machine"]
    lines = [
        "# Fuzzing the readers of untrusted text",
        "",
        (
            f"Measured {info['date']} on {info.get('cpu', '?')} ({info['cpus']} CPUs), load "
            f"average {info.get('load_average')}.  Command: `{document['command']}`."
        ),
        "",
        (
            "| target | inputs | accepted | refused (documented) | undocumented "
            "| broken contract | hangs | seconds | inputs/s |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, target in document["targets"].items():
        outcomes = target["outcomes"]
        refused = sum(n for label, n in outcomes.items() if label.startswith("refused"))
        lines.append(
            f"| {name} | {target['inputs']} | {outcomes.get('accepted', 0)} | {refused} | "
            f"{outcomes.get('undocumented', 0)} | {outcomes.get('violation', 0)} | "
            f"{outcomes.get('hang', 0)} | {target['seconds']:.1f} | "
            f"{target['inputs'] / max(target['seconds'], 1e-9):.0f} |"
        )
    lines += ["", "Refusals by exception class:", ""]
    for name, target in document["targets"].items():
        refusals = ", ".join(
            f"{label.removeprefix('refused: ')} {n}"
            for label, n in sorted(target["outcomes"].items())
            if label.startswith("refused: ")
        )
        lines.append(f"* {name}: {refusals}")
    failures = [(name, f) for name, t in document["targets"].items() for f in t["failures"]]
    lines += ["", f"Failures: {len(failures)}."]
    lines += [f"* {name} #{f['serial']}: {f['kind']}: {f['detail']}" for name, f in failures[:50]]
    return "\n".join(lines) + "\n"


def replay(name: str, path: Path) -> int:
    """Run one saved input on a target, letting any exception show its traceback."""
    _load_seeds()
    data = path.read_bytes()
    serial = int(path.stem.rsplit("-", 1)[-1]) if path.stem[-1:].isdigit() else 1
    print(repr(data[:300]))
    with _cli_workspace() as workspace:
        _workspace.append(workspace)
        try:
            print("outcome:", TARGETS[name].check(data, serial))
        except TARGETS[name].documented as error:
            print(f"refused: {type(error).__name__}: {error}")
        except BaseException:
            traceback.print_exc()
            return 1
        finally:
            _workspace.clear()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run the targets, write the report; exit status 1 on any failure."""
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("--count", type=int, default=100_000, help="inputs per target")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--replay", nargs=2, metavar=("TARGET", "FILE"))
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.replay:
        return replay(args.replay[0], Path(args.replay[1]))
    names = [name for name in args.targets.split(",") if name]
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    out = RESULTS_DIR if args.out is None else args.out
    reports = run(args.count, args.seed, names, out / "fuzz-failures")
    document = {
        "command": "python -m fuzz " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "count": args.count,
        "seed": args.seed,
        "targets": {
            name: {
                "inputs": report.inputs,
                "outcomes": dict(report.outcomes),
                "failures": report.failures,
                "seconds": report.seconds,
            }
            for name, report in reports.items()
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "fuzz.json").write_text(json.dumps(document, indent=2) + "\n")
    text = _markdown(document)
    (out / "fuzz.md").write_text(text)
    print(text, end="")
    return 1 if any(report.failures for report in reports.values()) else 0


def smoke() -> int:
    """Feed 200 inputs to every target without writing files; exit status 1 on any failure."""
    reports = run(200, 1, list(TARGETS), None, echo=False)
    failures = [f for report in reports.values() for f in report.failures]
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
