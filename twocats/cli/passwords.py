"""The password commands: hash, verify, upgrade, needs-rehash and derive.

Passwords come from a hidden prompt or ``--password-stdin``, never from the command line, where
other users of the machine could read them.  The library is imported inside each command, so that
parsing and ``--help`` compile nothing.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import time
from typing import TYPE_CHECKING, Any

import click

from twocats.cli._common import (
    StoredLimits,
    UsageFailure,
    backend_option,
    build_params,
    check_limits,
    emit_json,
    info,
    json_option,
    max_memory_option,
    params_document,
    params_options,
    password_stdin_option,
    read_password,
    read_secret_file,
    size_argument,
    stored_limits,
    verification_memory,
)

if TYPE_CHECKING:
    from twocats.params import Params
    from twocats.phc import PHCHash

_PEPPER_HELP = (
    "File holding a secret pepper (TwoCats' data input). Every byte of the file is the pepper, "
    "a trailing newline included; an empty file is refused. Hashes made with a pepper verify "
    "only with the same pepper."
)

_LIMITS_HELP = "1 GiB, the limit 'twocats verify' applies by default"


def _decode_argument(hash_string: str) -> PHCHash:
    """Decode a HASH argument, naming the likely cause when the shell or a copy mangled it."""
    from twocats.exceptions import InvalidHashError
    from twocats.phc import decode

    hint = None
    if hash_string != hash_string.strip():
        hint = "HASH starts or ends with a space or a line break (copied with the newline?)"
    elif "$" not in hash_string and "=" in hash_string:
        hint = (
            "HASH has no $ signs: inside double quotes the shell replaces $v, $m and the like "
            "by (empty) variables; put HASH in single quotes"
        )
    try:
        return decode(hash_string)
    except InvalidHashError as error:
        if hint is None:
            raise
        message = f"{error}; {hint}"
    raise UsageFailure(message)


def _check_verifiable(params: Params, limit: StoredLimits, what: str) -> None:
    """Refuse to make a hash that 'twocats verify' would refuse with the limits in force."""
    from twocats.exceptions import HashLimitError

    needed_bytes = verification_memory(params)
    # Parameters beyond what the machine can give are refused as such, whatever the limit.
    check_limits(params, stored_limits(needed_bytes), what=None)
    try:
        check_limits(params, limit, what=what)
    except HashLimitError as error:
        message = str(error)
    else:
        return
    needed = size_argument(needed_bytes)
    raise UsageFailure(
        f"{message}; 'twocats verify' would refuse it too: pass --max-memory {needed} here and "
        "to 'twocats verify'"
    )


def _note_verification_memory(params: Params) -> None:
    """Say which --max-memory verification needs when it is above verify's default."""
    needed = verification_memory(params)
    if needed > stored_limits(None).max_memory:
        info(
            f"note: verify this hash with 'twocats verify --max-memory {size_argument(needed)}' "
            "(above the default limit)"
        )


@click.command("hash")
@params_options
@click.option(
    "--salt-len",
    type=click.IntRange(8, 64),
    default=16,
    show_default=True,
    help="Random salt length in bytes.",
)
@click.option("--pepper-file", type=click.Path(dir_okay=False), default=None, help=_PEPPER_HELP)
@password_stdin_option
@max_memory_option(_LIMITS_HELP)
@backend_option
@json_option
def hash_command(
    salt_len: int,
    pepper_file: str | None,
    password_stdin: bool,
    allow_empty: bool,
    max_memory: int | None,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Hash a password and print the PHC string to store.

    Parameters that 'twocats verify' would refuse with the same --max-memory are refused here.
    """
    from twocats.hasher import PasswordHasher
    from twocats.profiles import CHEAPEST

    params = build_params(options)
    limit = stored_limits(max_memory)
    _check_verifiable(params, limit, "a hash with these parameters")
    hasher = PasswordHasher.from_params(
        params,
        salt_len=salt_len,
        secret=read_secret_file(pepper_file, "pepper") or None,
        max_memory=limit.max_memory,
        backend=backend,
    )
    password = read_password(password_stdin, confirm=True, allow_empty=allow_empty)
    started = time.perf_counter()
    # Loading (or compiling) the kernels is start-up, timed apart from the hash itself: a hash
    # at the cheapest parameters loads every kernel a hash uses.
    PasswordHasher.from_params(CHEAPEST, backend=backend).hash(b"start-up")
    loaded = time.perf_counter()
    encoded = hasher.hash(password)
    seconds = time.perf_counter() - loaded
    if as_json:
        emit_json(
            {
                "hash": encoded,
                "params": params_document(params),
                "seconds": seconds,
                "startup_seconds": loaded - started,
            }
        )
    else:
        click.echo(encoded)
    _note_verification_memory(params)


@click.command("verify")
@click.argument("hash_string", metavar="HASH")
@click.option("--pepper-file", type=click.Path(dir_okay=False), default=None, help=_PEPPER_HELP)
@password_stdin_option
@max_memory_option("1 GiB")
@backend_option
@json_option
def verify_command(
    hash_string: str,
    pepper_file: str | None,
    password_stdin: bool,
    allow_empty: bool,
    max_memory: int | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Check a password against a stored HASH.

    Exit status 0 if it matches, 1 if it does not, 2 if HASH is malformed or asks for more memory
    than --max-memory allows.  Put HASH in single quotes: it contains $ signs.
    """
    from twocats.exceptions import VerifyMismatchError
    from twocats.hasher import PasswordHasher
    from twocats.profiles import CHEAPEST

    # The hasher's own parameters play no part in verification; CHEAPEST keeps its limit exact.
    hasher = PasswordHasher.from_params(
        CHEAPEST,
        secret=read_secret_file(pepper_file, "pepper") or None,
        max_memory=max_memory,
        backend=backend,
    )
    # A malformed or oversized hash is refused before the prompt.
    _decode_argument(hash_string)
    hasher.check_hash(hash_string)
    password = read_password(password_stdin, confirm=False, allow_empty=allow_empty)
    try:
        hasher.verify(hash_string, password)
    except VerifyMismatchError:
        if not as_json:
            raise
        emit_json({"verified": False})
        raise click.exceptions.Exit(1) from None
    if as_json:
        emit_json({"verified": True})
    else:
        click.echo("OK")


@click.command("upgrade")
@click.argument("hash_string", metavar="HASH")
@click.option(
    "--mem-cost",
    type=click.IntRange(0),
    required=True,
    help="The new memory cost (memory 2**N KiB); must be above the stored one.",
)
@max_memory_option(_LIMITS_HELP)
@backend_option
@json_option
def upgrade_command(
    hash_string: str,
    mem_cost: int,
    max_memory: int | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Raise the memory cost of a stored HASH without the password.

    The new hash verifies the same password, exactly as if it had been hashed at the new cost.
    The stored hash and the upgraded one must both be within the limits 'twocats verify' applies
    with the same --max-memory.  Put HASH in single quotes: it contains $ signs.
    """
    from twocats.hasher import PasswordHasher

    stored = _decode_argument(hash_string)
    limit = stored_limits(max_memory)
    check_limits(stored.params, limit, what="the stored hash")
    if mem_cost <= stored.params.mem_cost:
        raise UsageFailure(
            f"--mem-cost must be above the stored hash's mem_cost ({stored.params.mem_cost})"
        )
    target = dataclasses.replace(stored.params, mem_cost=mem_cost)
    _check_verifiable(target, limit, "the upgraded hash")
    hasher = PasswordHasher.from_params(
        target, salt_len=len(stored.salt), max_memory=limit.max_memory, backend=backend
    )
    started = time.perf_counter()
    encoded = hasher.upgrade(hash_string)
    seconds = time.perf_counter() - started
    if as_json:
        emit_json(
            {
                "hash": encoded,
                "old_mem_cost": stored.params.mem_cost,
                "mem_cost": mem_cost,
                "seconds": seconds,
            }
        )
    else:
        click.echo(encoded)
    _note_verification_memory(target)


@click.command("needs-rehash")
@click.argument("hash_string", metavar="HASH")
@params_options
@click.option(
    "--salt-len",
    type=click.IntRange(8, 64),
    default=16,
    show_default=True,
    help="Salt length current hashes should have.",
)
@max_memory_option(_LIMITS_HELP)
@json_option
def needs_rehash_command(
    hash_string: str, salt_len: int, max_memory: int | None, as_json: bool, **options: Any
) -> None:
    """Tell whether HASH was made with other parameters than the current ones.

    Prints "yes" or "no" (exit status 0 either way), and says when 'twocats upgrade' can bring the
    hash up to date without the password.  A HASH that 'twocats verify' would refuse with the
    same --max-memory is refused here too.
    """
    from twocats.hasher import PasswordHasher

    stored = _decode_argument(hash_string)
    limit = stored_limits(max_memory)
    check_limits(stored.params, limit, what="the stored hash")
    params = build_params(options)
    hasher = PasswordHasher.from_params(params, salt_len=salt_len, max_memory=params.memory_bytes)
    needed = hasher.needs_rehash(hash_string)
    upgradable = needed and hasher.can_upgrade(hash_string)
    if as_json:
        emit_json({"needs_rehash": needed, "can_upgrade": upgradable})
        return
    click.echo("yes" if needed else "no")
    if upgradable:
        target = dataclasses.replace(stored.params, mem_cost=params.mem_cost)
        verification = verification_memory(target)
        raised = ""
        if verification > limit.max_memory:
            raised = f" --max-memory {size_argument(verification)}"
        info(
            f"it can be upgraded without the password: twocats upgrade HASH --mem-cost "
            f"{params.mem_cost}{raised}"
        )


@click.command("derive")
@params_options
@click.option("--salt", "salt_text", default=None, help="Salt as text (UTF-8).")
@click.option("--salt-hex", default=None, help="Salt as hex.")
@click.option("--salt-file", type=click.Path(dir_okay=False), default=None, help="Salt file.")
@click.option("--data-hex", default=None, help="Associated data as hex (visible to other users).")
@click.option(
    "--data-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="File holding the associated data (for a secret key, prefer this to --data-hex).",
)
@click.option(
    "--length",
    type=click.IntRange(1),
    default=None,
    help="Output length in bytes: a prefix of the full output (2015 and 2014: 32 or 64 bytes), "
    "or the hash size of the 2014-03 variant.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["hex", "base64", "raw"]),
    default="hex",
    show_default=True,
    help="How to write the key; raw writes the bytes themselves.",
)
@password_stdin_option
@max_memory_option("the memory this machine can give")
@backend_option
@json_option
def derive_command(
    salt_text: str | None,
    salt_hex: str | None,
    salt_file: str | None,
    data_hex: str | None,
    data_file: str | None,
    length: int | None,
    output_format: str,
    password_stdin: bool,
    allow_empty: bool,
    max_memory: int | None,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Derive a raw key from a password and write it to standard output."""
    from twocats.kdf import Engine

    if as_json and output_format == "raw":
        raise UsageFailure("--format raw cannot be combined with --json")
    salt = _one_source("salt", salt_text, salt_hex, salt_file, required=True)
    data = _one_source("data", None, data_hex, data_file, required=False)
    hash_size_given = options.get("hash_size") is not None
    params = build_params(options)
    if length is not None and params.variant == "2014-03" and length != params.hash_size:
        if hash_size_given:
            raise UsageFailure("--length and --hash-size disagree")
        params = dataclasses.replace(params, hash_size=length)
    full_size = params.output_size
    if length is not None and length > full_size:
        raise UsageFailure(f"--length must be from 1 to {full_size} for these parameters")
    # The engine refuses more memory than --max-memory or, without it, than the machine has;
    # an oversized request is refused before the password is asked for.
    engine = Engine(backend, max_memory=max_memory)
    engine.check_memory(params)
    password = read_password(password_stdin, confirm=not password_stdin, allow_empty=allow_empty)
    started = time.perf_counter()
    key = engine.derive(password, salt, params, data=data)
    seconds = time.perf_counter() - started
    key = key[: length or full_size]
    if output_format == "raw":
        click.echo(key, nl=False)
        return
    text = key.hex() if output_format == "hex" else base64.b64encode(key).decode("ascii")
    if as_json:
        emit_json(
            {
                "key": text,
                "format": output_format,
                "length": len(key),
                "params": params_document(params),
                "seconds": seconds,
            }
        )
    else:
        click.echo(text)


def _one_source(
    what: str, text: str | None, hex_text: str | None, path: str | None, *, required: bool
) -> bytes:
    """Return the bytes of the one given source among text, hex and file options."""
    given = [value is not None for value in (text, hex_text, path)]
    if sum(given) > 1:
        raise UsageFailure(f"give the {what} only once (text, hex or file)")
    if text is not None:
        return text.encode("utf-8")
    if hex_text is not None:
        try:
            return binascii.unhexlify(hex_text)
        except (binascii.Error, ValueError):
            raise UsageFailure(f"--{what}-hex is not valid hex") from None
    if path is not None:
        return read_secret_file(path, what)
    if required:
        raise UsageFailure(f"a {what} is required: --{what}, --{what}-hex or --{what}-file")
    return b""
