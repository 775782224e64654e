"""The fuzz targets that call a reader directly: PHC strings, verify, checksum lines, vectors."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import tempfile
from typing import Any

from fuzz.contract import CLI_EVERY, FILE_EVERY, MARKER, PASSWORD, VERIFY_MAX_MEMORY, ContractError
from fuzz.workspace import CHECK_NAMES, workspace_folder, workspace_open
from twocats import phc
from twocats.cli.checksum import escape_name, parse_check_line
from twocats.exceptions import InvalidParametersError
from twocats.kdf.vectors import Vector, VectorFormatError, load_vectors, read_vectors
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.profiles import CHEAPEST


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


def phc_seeds() -> list[bytes]:
    seeds = []
    for number, params in enumerate(_phc_seed_params()):
        salt = bytes(range(number, number + 8 + 7 * number))
        digest = bytes((number * 37 + i) % 256 for i in range(params.output_size))
        seeds.append(phc.encode(params, salt, digest).encode("ascii"))
    return seeds


def check_phc(data: bytes, serial: int) -> str:
    given = _as_input(data, serial)
    decoded = phc.decode(given)
    text = given.decode("ascii") if isinstance(given, bytes) else given
    if decoded.encode() != text:
        raise ContractError("decode accepted a string that does not encode back to itself")
    return "accepted"


def check_phc_params(data: bytes, serial: int) -> str:
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


def verify_seeds() -> list[bytes]:
    seeds = []
    for number, params in enumerate(_verify_seed_params()):
        hasher = PasswordHasher.from_params(params)
        seeds.append(hasher.hash(PASSWORD, salt=bytes([number]) * 16).encode("ascii"))
    return seeds


VERIFY_SEEDS: list[bytes] = []


def check_verify(data: bytes, serial: int) -> str:
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
    if as_bytes not in VERIFY_SEEDS or password not in (PASSWORD, PASSWORD.encode()):
        raise ContractError("verify accepted a modified hash or a wrong password")
    return "accepted"


def checksum_seeds() -> list[bytes]:
    seeds = []
    for number, name in enumerate(CHECK_NAMES):
        size = 32 if number % 2 else 64
        digest = bytes((number * 11 + i) % 256 for i in range(size)).hex()
        prefix, shown = escape_name(name)
        mode = " " if number % 3 else "*"
        seeds.append(os.fsencode(f"{prefix}{digest} {mode}{shown}"))
    return seeds


def _format_check_line(digest: bytes, name: str) -> bytes:
    prefix, shown = escape_name(name)
    return os.fsencode(f"{prefix}{digest.hex()}  {shown}")


def _run_sum_check(data: bytes, serial: int) -> None:
    """Run ``twocats sum --check`` on a file of the input's lines among valid ones."""
    from click.testing import CliRunner

    from twocats.cli import main as cli_main

    workspace = workspace_folder()
    run = serial // CLI_EVERY
    lines = [data]
    for name in CHECK_NAMES[: run % 4]:
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


def check_checksum(data: bytes, serial: int) -> str:
    outcome = "refused"
    for size in (32, 64):
        parsed = parse_check_line(data, size)
        if parsed is None:
            continue
        outcome = "accepted"
        again = parse_check_line(_format_check_line(parsed.digest, parsed.name), size)
        if again != parsed:
            raise ContractError("a parsed line written out again parses differently")
    if serial % CLI_EVERY == 0 and workspace_open():
        _run_sum_check(data, serial)
    return outcome


def vector_seeds() -> list[bytes]:
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


def structured_vector(rng: random.Random) -> bytes:
    """A seed record with a few fields deleted, added or given values of the wrong kind."""
    record: dict[str, Any] = json.loads(rng.choice(VECTOR_SEEDS))
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


VECTOR_SEEDS: list[bytes] = []


def _check_vector(vector: Vector) -> None:
    shown = str(vector)
    if "\n" in shown or not shown.isprintable():
        raise ContractError("a vector does not print as one printable line")
    with contextlib.suppress(InvalidParametersError):
        vector.params()
    with contextlib.suppress(InvalidParametersError):
        vector.memory_bytes()


def check_vectors(data: bytes, serial: int) -> str:
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
