"""``twocats sum``: checksums of many files at once with multi-buffer lane hashing.

The lines written are those of GNU coreutils, so ``sha256sum -c``, ``sha512sum -c``, ``b2sum -c``
and ``b2sum -l 256 -c`` accept them, and ``twocats sum --check`` reads theirs:
``<hex digest><space><space or *><file name>``, and for a name holding a backslash, a newline or a
carriage return, a leading backslash with those characters escaped as ``\\\\``, ``\\n`` and ``\\r``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Final

import click

from twocats.cli._common import backend_option, emit_json, info, json_option, progress_wanted

__all__ = ["ALGORITHMS", "escape_name", "parse_check_line", "sum_command", "unescape_name"]

#: Files up to this size are read whole and hashed together, many lanes at a time; larger files
#: are streamed through hashlib in chunks so that memory use stays bounded.
BATCH_FILE_LIMIT: Final = 16 << 20

#: The most file data held in memory for one multi-buffer batch.
BATCH_BYTES: Final = 64 << 20

#: Read size for streamed files and for reading batch files.
CHUNK: Final = 1 << 20

#: Algorithm name -> (multi-buffer algorithm or None, hashlib constructor, the coreutils tool).
ALGORITHMS: Final[dict[str, tuple[str | None, Callable[[], Any], str]]] = {
    "sha256": ("sha256", hashlib.sha256, "sha256sum"),
    "sha512": ("sha512", hashlib.sha512, "sha512sum"),
    "blake2b": ("blake2b", hashlib.blake2b, "b2sum"),
    # BLAKE2b with a 32-byte digest is a different function from BLAKE2b-512 cut short (the digest
    # length is hashed in); the lane kernels produce standard lengths only, so hashlib computes it.
    "blake2b-256": (None, lambda: hashlib.blake2b(digest_size=32), "b2sum -l 256"),
    # BLAKE2s has no coreutils tool; the BLAKE2 reference b2sum checks it with -a blake2s.
    "blake2s": ("blake2s", hashlib.blake2s, "b2sum -a blake2s (BLAKE2 reference tool)"),
}

#: Lane modes without a streaming implementation read a whole file into memory; larger files fail
#: with a clear message instead of exhausting the machine.
WHOLE_FILE_LIMIT: Final = 1 << 30


@dataclass(frozen=True)
class _Method:
    """How ``sum`` computes one algorithm: lanes for small files, streaming for large ones."""

    lanes: str | None
    stream: Callable[[], Any] | None
    digest_size: int


def _method(algorithm: str) -> _Method:
    """Resolve a coreutils-style name or a lane-mode name (``twocats.simd.modes``)."""
    if algorithm in ALGORITHMS:
        lanes, stream, _ = ALGORITHMS[algorithm]
        return _Method(lanes, stream, stream().digest_size)
    from twocats.simd.modes import MODES

    mode = MODES[algorithm]
    name = mode.hashlib_name
    streaming = None if name is None else (lambda: hashlib.new(name))
    return _Method(mode.name, streaming, mode.digest_size)


if TYPE_CHECKING:
    # click.ParamType is generic only from click 8.2 on; subscript it for the type checker only.
    _StrParam = click.ParamType[str]
else:
    _StrParam = click.ParamType


class _AlgorithmType(_StrParam):
    """A ``--algorithm`` value; the lane modes are looked up only when the option is used."""

    name = "ALGORITHM"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if text in ALGORITHMS:
            return text
        from twocats.simd.modes import MODES

        if text not in MODES:
            allowed = ", ".join([*ALGORITHMS, *MODES])
            self.fail(f"{text!r} is not one of {allowed}", param, ctx)
        return text


_ESCAPES: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r"}
_UNESCAPES: Final = {"\\\\": "\\", "\\n": "\n", "\\r": "\r"}
_LINE: Final = re.compile(rb"(\\?)([0-9a-fA-F]+) ([ *])(.+)", re.DOTALL)


def escape_name(name: str) -> tuple[str, str]:
    """Return (prefix, name) as coreutils writes them; the prefix is ``\\`` for escaped names."""
    if not any(char in name for char in _ESCAPES):
        return "", name
    return "\\", "".join(_ESCAPES.get(char, char) for char in name)


def unescape_name(name: str) -> str | None:
    """Undo :func:`escape_name`; None if the name holds an unknown escape."""
    out: list[str] = []
    index = 0
    while index < len(name):
        if name[index] != "\\":
            out.append(name[index])
            index += 1
            continue
        pair = name[index : index + 2]
        if pair not in _UNESCAPES:
            return None
        out.append(_UNESCAPES[pair])
        index += 2
    return "".join(out)


@dataclass(frozen=True)
class CheckLine:
    """One parsed line of a checksum file."""

    digest: bytes
    name: str


def parse_check_line(line: bytes, digest_size: int) -> CheckLine | None:
    """Parse one checksum line (without its newline); None if it is not properly formatted.

    A name holding a NUL byte is not properly formatted: no file can have such a name.  This never
    raises, whatever the bytes.
    """
    match = _LINE.fullmatch(line)
    if match is None:
        return None
    escaped, hex_digest, _, raw_name = match.groups()
    if len(hex_digest) != 2 * digest_size or b"\0" in raw_name:
        return None
    name = os.fsdecode(raw_name)
    if escaped:
        unescaped = unescape_name(name)
        if unescaped is None:
            return None
        name = unescaped
    return CheckLine(bytes.fromhex(hex_digest.decode("ascii")), name)


def _too_large(name: str) -> OSError:
    limit = WHOLE_FILE_LIMIT >> 30
    reason = f"File too large: this algorithm has no streaming form (limit {limit} GiB)"
    return OSError(27, reason, name)


def _read_limited(handle: BinaryIO, name: str) -> bytes:
    """Read a stream whole for an algorithm that cannot stream, up to WHOLE_FILE_LIMIT bytes."""
    data = handle.read(WHOLE_FILE_LIMIT + 1)
    if len(data) > WHOLE_FILE_LIMIT:
        raise _too_large(name)
    return bytes(data)


def _read_whole(path: str) -> bytes:
    """Read a (batch-sized) file in chunks into one buffer."""
    buffer = bytearray()
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            buffer += chunk
    return bytes(buffer)


def _stream(handle: BinaryIO, method: _Method, advance: Callable[[int], None]) -> bytes:
    assert method.stream is not None
    hasher = method.stream()
    while True:
        chunk = handle.read(CHUNK)
        if not chunk:
            return bytes(hasher.digest())
        hasher.update(chunk)
        advance(len(chunk))


def _digests(
    names: list[str], algorithm: str, backend: str | None, advance: Callable[[int], None]
) -> Iterator[tuple[str, bytes | OSError]]:
    """Yield (name, digest or the error that stopped reading it) in the order of `names`."""
    method = _method(algorithm)
    lane_algorithm = method.lanes
    results: dict[int, bytes | OSError] = {}
    batch: list[tuple[int, bytes]] = []
    batch_bytes = 0
    emitted = 0

    def flush() -> None:
        nonlocal batch, batch_bytes
        if not batch:
            return
        from twocats.simd import hash_many

        # Only algorithms the lane kernels compute are ever batched.
        assert lane_algorithm is not None

        digests = hash_many([data for _, data in batch], algorithm=lane_algorithm, backend=backend)
        for (index, data), digest in zip(batch, digests, strict=True):
            results[index] = digest
            advance(len(data))
        batch, batch_bytes = [], 0

    for index, name in enumerate(names):
        try:
            if name == "-" and method.stream is not None:
                results[index] = _stream(sys.stdin.buffer, method, advance)
            elif name == "-":
                data = _read_limited(sys.stdin.buffer, "-")
                batch.append((index, data))
                batch_bytes += len(data)
            else:
                status = os.stat(name)
                size = status.st_size
                if stat.S_ISDIR(status.st_mode):
                    raise IsADirectoryError(21, "Is a directory", name)
                streamed = lane_algorithm is None or size > BATCH_FILE_LIMIT
                if streamed and method.stream is not None:
                    with open(name, "rb") as handle:
                        results[index] = _stream(handle, method, advance)
                elif size > WHOLE_FILE_LIMIT:
                    raise _too_large(name)
                else:
                    if batch_bytes + size > BATCH_BYTES:
                        flush()
                    batch.append((index, _read_whole(name)))
                    batch_bytes += size
        except OSError as exc:
            results[index] = exc
        # Yield in order whatever is complete, so output starts before the last file is read.
        while emitted in results:
            yield names[emitted], results.pop(emitted)
            emitted += 1
    flush()
    while emitted in results:
        yield names[emitted], results.pop(emitted)
        emitted += 1


def _error_text(exc: OSError) -> str:
    return exc.strerror or str(exc)


class _NoProgress:
    """Stands in for a progress bar when standard error is not a terminal."""

    def update(self, _: int) -> None:
        """Ignore progress."""


def _progress(total: int) -> contextlib.AbstractContextManager[Any]:
    """A byte-counting progress bar on standard error when it is a terminal, else a no-op."""
    if not progress_wanted():
        return contextlib.nullcontext(_NoProgress())
    return click.progressbar(length=max(total, 1), label="hashing", file=sys.stderr)


@click.command("sum")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=True, allow_dash=True))
@click.option(
    "-a",
    "--algorithm",
    type=_AlgorithmType(),
    default="sha256",
    show_default=True,
    help="Hash function: sha256 (like sha256sum), sha512 (sha512sum), blake2b (b2sum), "
    "blake2b-256 (b2sum -l 256), blake2s, or a lane mode: sha3-224/256/384/512, shake128, "
    "shake256, turboshake128/256, kt128, kt256, parallelhash128/256, blake2sp, blake2bp, "
    "mh-sha256, jlanes-sha256-4/8/16, lsh-256-224/256, lsh-512-224/256/384/512, "
    "sha1 (legacy). Lane modes without a streaming form read each file whole (up to 1 GiB).",
)
@click.option(
    "-c",
    "--check",
    "check",
    is_flag=True,
    help="Read checksum lines from the FILES (- or none: standard input) and check them.",
)
@click.option("--quiet", is_flag=True, help="With --check, do not print OK lines.")
@backend_option
@json_option
def sum_command(
    files: tuple[str, ...],
    algorithm: str,
    check: bool,
    quiet: bool,
    backend: str | None,
    as_json: bool,
) -> None:
    """Print or check checksums of FILES, many files hashed at once in SIMD lanes.

    The output is line for line what sha256sum (or sha512sum, b2sum) prints, and --check reads
    their files.  Files up to 16 MiB are read in 1 MiB chunks and hashed together in batches of up
    to 64 MiB; larger files (and standard input, '-') are streamed through hashlib in 1 MiB chunks,
    so memory use stays bounded whatever the file sizes.  Exit status 1 if any file cannot be read
    or, with --check, does not match.
    """
    names = list(files) or ["-"]
    if check:
        _check(names, algorithm, quiet, backend, as_json)
        return
    total = sum(_size_or_zero(name) for name in names) if progress_wanted() else 0
    failed = 0
    entries: list[dict[str, Any]] = []
    with _progress(total) as bar:
        for name, outcome in _digests(names, algorithm, backend, bar.update):
            if isinstance(outcome, OSError):
                failed += 1
                info(f"twocats sum: {name}: {_error_text(outcome)}")
                entries.append({"name": name, "error": _error_text(outcome)})
                continue
            if as_json:
                entries.append({"name": name, "digest": outcome.hex()})
                continue
            prefix, shown = escape_name(name)
            click.echo(os.fsencode(f"{prefix}{outcome.hex()}  {shown}"))
    if as_json:
        emit_json({"algorithm": algorithm, "files": entries})
    if failed:
        raise click.exceptions.Exit(1)


def _size_or_zero(name: str) -> int:
    try:
        return 0 if name == "-" else os.stat(name).st_size
    except OSError:
        return 0


def _check(
    sum_files: list[str], algorithm: str, quiet: bool, backend: str | None, as_json: bool
) -> None:
    """Check the lines of every file in `sum_files`; exit status 1 on any failure."""
    digest_size = _method(algorithm).digest_size
    expected: list[CheckLine] = []
    improper = 0
    for sum_file in sum_files:
        try:
            if sum_file == "-":
                content = sys.stdin.buffer.read()
            else:
                with open(sum_file, "rb") as handle:
                    content = handle.read()
        except OSError as exc:
            raise click.ClickException(f"{sum_file}: {_error_text(exc)}") from None
        for raw in content.split(b"\n"):
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line:
                continue
            parsed = parse_check_line(line, digest_size)
            if parsed is None:
                improper += 1
            else:
                expected.append(parsed)
    if not expected:
        raise click.ClickException(f"no properly formatted {algorithm} checksum lines found")
    names = [item.name for item in expected]
    mismatched = unreadable = 0
    entries: list[dict[str, Any]] = []
    total = sum(_size_or_zero(name) for name in names) if progress_wanted() else 0
    with _progress(total) as bar:
        outcomes = _digests(names, algorithm, backend, bar.update)
        for item, (name, outcome) in zip(expected, outcomes, strict=True):
            if isinstance(outcome, OSError):
                unreadable += 1
                status = "FAILED open or read"
                info(f"twocats sum: {name}: {_error_text(outcome)}")
            elif outcome == item.digest:
                status = "OK"
            else:
                mismatched += 1
                status = "FAILED"
            entries.append({"name": name, "status": status})
            if not as_json and not (quiet and status == "OK"):
                prefix, shown = escape_name(name)
                click.echo(os.fsencode(f"{prefix}{shown}: {status}"))
    if improper:
        lines = _count(improper, "line is", "lines are")
        info(f"twocats sum: WARNING: {lines} improperly formatted")
    if unreadable:
        listed = _count(unreadable, "listed file", "listed files")
        info(f"twocats sum: WARNING: {listed} could not be read")
    if mismatched:
        computed = _count(mismatched, "computed checksum", "computed checksums")
        info(f"twocats sum: WARNING: {computed} did NOT match")
    if as_json:
        emit_json(
            {
                "algorithm": algorithm,
                "files": entries,
                "mismatched": mismatched,
                "unreadable": unreadable,
                "improperly_formatted": improper,
            }
        )
    if mismatched or unreadable:
        raise click.exceptions.Exit(1)


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"
