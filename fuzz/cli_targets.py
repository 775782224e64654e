"""The fuzz targets that run the command line: stored hashes and vector files under tight limits."""

from __future__ import annotations

import json

from fuzz.contract import CliRefusal, ContractError
from fuzz.workspace import workspace_folder
from twocats import phc
from twocats.exceptions import InvalidHashError
from twocats.params import Params

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


def check_stored_cli(data: bytes, serial: int) -> str:
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


def check_selftest_cli(data: bytes, serial: int) -> str:
    workspace = workspace_folder()
    path = workspace / "vectors.jsonl"
    path.write_bytes(data + b"\n")
    status, _, stderr = _invoke(["selftest", "--vectors", str(path), *CLI_LIMITS])
    return _cli_outcome(status, stderr, (0, 1, 2), "selftest")
