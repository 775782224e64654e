"""``twocats derive``: a raw key from a password, a salt and associated data.

The password comes from a hidden prompt or ``--password-stdin``, never from the command line;
the salt and the data come from an option (text or hex) or a file.  The library is imported inside
the command, so that parsing and ``--help`` compile nothing.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import time
from typing import Any

import click

from twocats.cli._common import (
    UsageFailure,
    backend_option,
    emit_json,
    json_option,
    params_document,
)
from twocats.cli._options import build_params, max_memory_option, params_options
from twocats.cli._secrets import (
    NoEchoCommand,
    password_stdin_option,
    read_password,
    read_secret_file,
)

__all__ = ["derive_command"]


@click.command("derive", cls=NoEchoCommand)
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
