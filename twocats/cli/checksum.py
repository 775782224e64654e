"""``twocats sum``: checksums of many files at once, through hashlib or multi-buffer lanes.

The lines written are those of GNU coreutils, so ``sha256sum -c``, ``sha512sum -c``, ``b2sum -c``
and ``b2sum -l 256 -c`` accept them, and ``twocats sum --check`` reads theirs (the format is in
:mod:`twocats.lanes.check_file`; names in messages are quoted as :mod:`twocats.cli._sum_output`
says).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import click

from twocats.cli._common import backend_option, json_option, progress_wanted
from twocats.cli._sum_output import (
    JsonDocument,
    Output,
    display_name,
    error_text,
    progress,
    quote_name,
    sum_line,
)
from twocats.lanes.check_file import (
    MAX_LINE,
    CheckLine,
    CheckTally,
    LineParser,
    escape_name,
    parse_check_line,
    parsed_groups,
    unescape_name,
)
from twocats.lanes.file_digests import COREUTILS, LaneLoader, file_digests, method_for

__all__ = [
    "MAX_LINE",
    "CheckLine",
    "display_name",
    "escape_name",
    "parse_check_line",
    "quote_name",
    "sum_command",
    "unescape_name",
]

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
        if text in COREUTILS:
            return text
        from twocats.lanes.registry import ALGORITHMS

        if text not in ALGORITHMS:
            allowed = ", ".join(dict.fromkeys([*COREUTILS, *ALGORITHMS]))
            self.fail(f"{text!r} is not one of {allowed}", param, ctx)
        return text


class _SumCommand(click.Command):
    """A command whose file arguments are split from its options in one pass.

    click's parser takes arguments off the front of a list one at a time, which is quadratic in
    their number; ``sum`` gets hundreds of thousands of file names from a shell glob.  Options
    may still come anywhere, and ``--`` ends them, as with coreutils.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        valued = {
            name
            for param in self.params
            if isinstance(param, click.Option) and not param.is_flag and not param.count
            for name in (*param.opts, *param.secondary_opts)
        }
        options: list[str] = []
        names: list[str] = []
        rest = iter(args)
        for arg in rest:
            if arg == "--":
                names.extend(rest)
            elif arg.startswith("-") and arg != "-":
                options.append(arg)
                if arg in valued or (
                    not arg.startswith("--") and _short_cluster_wants_value(arg, valued)
                ):
                    value = next(rest, None)
                    if value is None:
                        # Let click report the missing value.
                        return super().parse_args(ctx, options)
                    options.append(value)
            else:
                names.append(arg)
        return super().parse_args(ctx, [*options, "--", *names] if names else options)


def _short_cluster_wants_value(arg: str, valued: set[str]) -> bool:
    """True if a cluster of short options (``-cqa``) ends in one that takes the next argument."""
    for position, letter in enumerate(arg[1:], start=1):
        if f"-{letter}" in valued:
            return position == len(arg) - 1
    return False


def _tag(algorithm: str) -> str:
    """The BSD tag of an algorithm: what ``sha256sum --tag`` (``b2sum``, ...) writes."""
    return method_for(algorithm).tag


def _type_name(algorithm: str) -> str:
    """The algorithm as coreutils' messages name it (b2sum says BLAKE2b whatever the length)."""
    return "BLAKE2b" if algorithm == "blake2b-256" else _tag(algorithm)


@dataclass(frozen=True)
class _CheckOptions:
    """The options of ``--check``, as coreutils names them."""

    quiet: bool
    status: bool
    strict: bool
    warn: bool
    ignore_missing: bool


_CHECK_ONLY: Final = {
    "quiet": "the --quiet option is meaningful only when verifying checksums",
    "status": "the --status option is meaningful only when verifying checksums",
    "strict": "the --strict option is meaningful only when verifying checksums",
    "warn": "the --warn option is meaningful only when verifying checksums",
    "ignore_missing": "the --ignore-missing option is meaningful only when verifying checksums",
}


@click.command("sum", cls=_SumCommand)
@click.argument("files", nargs=-1)
@click.option(
    "-a",
    "--algorithm",
    type=_AlgorithmType(),
    default="sha256",
    show_default=True,
    help="Hash function: sha256 (like sha256sum), sha512 (sha512sum), blake2b (b2sum), "
    "sha1 (sha1sum; legacy), blake2b-256 (b2sum -l 256), blake2s, or a lane mode: "
    "sha3-224/256/384/512, shake128, shake256, turboshake128/256, kt128, kt256, "
    "parallelhash128/256, blake2sp, blake2bp, mh-sha256, jlanes-sha256-4/8/16, lsh-256-224/256, "
    "lsh-512-224/256/384/512. kt128, kt256, parallelhash128/256, shake128/256 and the sha3 modes "
    "stream; the other lane modes read each file whole (up to 1 GiB), one file at a time.",
)
@click.option(
    "-c",
    "--check",
    "check",
    is_flag=True,
    help="Read checksum lines (GNU or BSD --tag form) from the FILES (- or none: standard "
    "input) and check them.",
)
@click.option("--tag", is_flag=True, help="Write BSD-style lines: SHA256 (FILE) = DIGEST.")
@click.option(
    "-z",
    "--zero",
    is_flag=True,
    help="End each output line with NUL, not newline, and do not escape file names.",
)
@click.option("--quiet", is_flag=True, help="With --check, do not print OK lines.")
@click.option("--status", is_flag=True, help="With --check, print nothing; the exit status tells.")
@click.option("--strict", is_flag=True, help="With --check, exit 1 on improperly formatted lines.")
@click.option(
    "-w", "--warn", is_flag=True, help="With --check, warn about each improperly formatted line."
)
@click.option(
    "--ignore-missing",
    is_flag=True,
    help="With --check, neither fail nor report for files that do not exist.",
)
@backend_option
@json_option
def sum_command(
    files: tuple[str, ...],
    algorithm: str,
    check: bool,
    tag: bool,
    zero: bool,
    quiet: bool,
    status: bool,
    strict: bool,
    warn: bool,
    ignore_missing: bool,
    backend: str | None,
    as_json: bool,
) -> None:
    """Print or check checksums of FILES, many files hashed at once.

    The output is byte for byte what sha256sum (or sha512sum, b2sum) prints, with the same
    options (--tag, -z, and with --check: --quiet, --status, --strict, -w, --ignore-missing),
    messages and exit status, and --check reads their files in both forms, line by line as
    they do (a name ends at a NUL byte; a line over 64 KiB is read in full if it can be a
    checksum line, up to 1 MiB, beyond which that checksum file is left with exit status 1, and
    is counted as improperly formatted, unheld, if it cannot).  Files are hashed
    by hashlib, and by SIMD lanes when the job is large enough to repay loading them
    (--backend: lanes from the start).  Every input is read in pieces, its size never taken
    from the file system: inputs (files, pipes, devices, standard input) that end within 1 MiB
    are hashed together in batches of up to 8 MiB, longer ones are streamed, so memory use
    stays bounded whatever the inputs, /dev/zero included.  Exit status 1 if any file cannot
    be read or, with --check, does not match.
    """
    names = list(files) or ["-"]
    options = _CheckOptions(quiet, status, strict, warn, ignore_missing)
    if check:
        if tag:
            raise click.UsageError("the --tag option is meaningless when verifying checksums")
        if zero:
            raise click.UsageError("the --zero option is not supported when verifying checksums")
        _check(names, algorithm, options, backend, as_json)
        return
    for field, message in _CHECK_ONLY.items():
        if getattr(options, field):
            raise click.UsageError(message)
    sizes = [_size_or_zero(name) for name in names] if progress_wanted() else [0] * len(names)
    failed = 0
    document = JsonDocument(as_json, algorithm)
    out = Output()
    end = "\0" if zero else "\n"
    with progress(sum(sizes)) as bar:
        outcomes = file_digests(names, algorithm, backend)
        for size, (name, outcome) in zip(sizes, outcomes, strict=True):
            bar.update(size)
            if isinstance(outcome, OSError):
                failed += 1
                out.error(name, outcome)
                document.entry({"name": name, "error": error_text(outcome)})
            elif as_json:
                document.entry({"name": name, "digest": outcome.hex()})
            else:
                out.line(sum_line(outcome, name, zero, _tag(algorithm) if tag else None), end)
    out.flush()
    document.close()
    if failed:
        raise click.exceptions.Exit(1)


def _size_or_zero(name: str) -> int:
    """The size of a file for the progress bar only (0 if unknown); reads are never sized."""
    try:
        return 0 if name == "-" else os.stat(name).st_size
    except OSError:
        return 0


def _check(
    sum_files: list[str],
    algorithm: str,
    options: _CheckOptions,
    backend: str | None,
    as_json: bool,
) -> None:
    """Check the lines of every file in `sum_files` as coreutils does; exit status 1 on any
    failure.  As in coreutils, each checksum file gets its own summary."""
    method = method_for(algorithm, backend)
    # One loader for every group, so that the lanes load at most once.
    loader = LaneLoader(method, backend)
    parser = LineParser(method.digest_size, _tag(algorithm))
    document = JsonDocument(as_json, algorithm)
    out = Output()
    totals = CheckTally()
    ok = True
    for sum_file in sum_files:
        tally = CheckTally()
        ok &= _check_one(
            sum_file, parser, tally, algorithm, options, backend, loader, out, document, as_json
        )
        totals.mismatched += tally.mismatched
        totals.unreadable += tally.unreadable
        totals.improper += tally.improper
    out.flush()
    document.close(
        mismatched=totals.mismatched,
        unreadable=totals.unreadable,
        improperly_formatted=totals.improper,
    )
    if not ok:
        raise click.exceptions.Exit(1)


def _check_one(
    sum_file: str,
    parser: LineParser,
    tally: CheckTally,
    algorithm: str,
    options: _CheckOptions,
    backend: str | None,
    loader: LaneLoader,
    out: Output,
    document: JsonDocument,
    as_json: bool,
) -> bool:
    """Check one checksum file and write its summary; return True if it passed."""
    silent = as_json or options.status
    shown = quote_name("standard input" if sum_file == "-" else sum_file)
    type_name = _type_name(algorithm)

    def improper(number: int) -> None:
        if options.warn:
            out.message(f"{shown}: {number}: improperly formatted {type_name} checksum line")

    try:
        for group in parsed_groups(sum_file, parser, tally):
            names = [item.name for item in group if isinstance(item, CheckLine)]
            outcomes = iter(file_digests(names, algorithm, backend, loader=loader))
            for item in group:
                if not isinstance(item, CheckLine):
                    improper(item)
                    continue
                name, outcome = next(outcomes)
                tally.checked += 1
                if isinstance(outcome, OSError):
                    if options.ignore_missing and outcome.errno == errno.ENOENT:
                        continue
                    tally.unreadable += 1
                    status = "FAILED open or read"
                    out.error(name, outcome)
                elif outcome == item.digest:
                    tally.matched += 1
                    status = "OK"
                else:
                    tally.mismatched += 1
                    status = "FAILED"
                document.entry({"name": name, "status": status})
                if not silent and not (options.quiet and status == "OK"):
                    out.line(f"{display_name(name)}: {status}")
    except OSError as exc:
        out.error(sum_file, exc)
        return False
    if not tally.checked:
        out.message(f"{shown}: no properly formatted checksum lines found")
        hint = _other_algorithm_hint(tally.first_improper, algorithm)
        if hint:
            out.message(f"{shown}: {hint}")
        return False
    if not options.status:
        if tally.improper:
            lines = _count(tally.improper, "line is", "lines are")
            out.message(f"WARNING: {lines} improperly formatted")
        if tally.unreadable:
            listed = _count(tally.unreadable, "listed file", "listed files")
            out.message(f"WARNING: {listed} could not be read")
        if tally.mismatched:
            computed = _count(tally.mismatched, "computed checksum", "computed checksums")
            out.message(f"WARNING: {computed} did NOT match")
        if options.ignore_missing and not tally.matched:
            out.message(f"{shown}: no file was verified")
    return (
        tally.matched > 0
        and not tally.mismatched
        and not tally.unreadable
        and not (options.strict and tally.improper)
    )


def _other_algorithm_hint(line: bytes | None, algorithm: str) -> str:
    """Name the algorithms whose digest length fits `line`, as a hint to pass ``-a``."""
    if line is None:
        return ""
    fitting = [
        name
        for name in COREUTILS
        if name != algorithm and parse_check_line(line, method_for(name).digest_size) is not None
    ]
    if not fitting:
        return ""
    choices = " or ".join(f"-a {name}" for name in fitting)
    return f"its digests have the length of {choices}; pass the one that made the file"


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"
