"""``twocats sum``: checksums of many files at once, through hashlib or multi-buffer lanes.

The lines written are those of GNU coreutils, so ``sha256sum -c``, ``sha512sum -c``, ``b2sum -c``
and ``b2sum -l 256 -c`` accept them, and ``twocats sum --check`` reads theirs (the format is in
:mod:`twocats.lanes.check_file`; names in messages are quoted as :mod:`twocats.cli._sum_output`
says).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from twocats.cli._common import info, progress_wanted
from twocats.cli._options import backend_option, json_option
from twocats.cli._sum_output import (
    JsonDocument,
    Output,
    display_name,
    error_text,
    progress,
    quote_name,
)
from twocats.lanes.check_file import (
    MAX_LINE,
    CheckLine,
    CheckTally,
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


@click.command("sum", cls=_SumCommand)
@click.argument("files", nargs=-1)
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
    "sha1 (legacy). kt128, kt256, parallelhash128/256, shake128/256 and the sha3 modes stream; "
    "the other lane modes read each file whole (up to 1 GiB), one file at a time.",
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
    """Print or check checksums of FILES, many files hashed at once.

    The output is line for line what sha256sum (or sha512sum, b2sum) prints, and --check reads
    their files.  Files are hashed by hashlib, and by SIMD lanes when the job is large enough to
    repay loading them (--backend: lanes from the start).  Every input is read in pieces, its
    size never taken from the file system: inputs (files, pipes, devices, standard input) that
    end within 1 MiB are hashed together in batches of up to 8 MiB, longer ones are streamed, so
    memory use stays bounded whatever the inputs, /dev/zero included.  Exit status 1 if any file
    cannot be read or, with --check, does not match.
    """
    names = list(files) or ["-"]
    if check:
        _check(names, algorithm, quiet, backend, as_json)
        return
    sizes = [_size_or_zero(name) for name in names] if progress_wanted() else [0] * len(names)
    failed = 0
    document = JsonDocument(as_json, algorithm)
    out = Output()
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
                prefix, shown = escape_name(name)
                out.line(f"{prefix}{outcome.hex()}  {shown}")
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
    return f" (its digests have the length of {choices}; pass the one that made the file)"


def _check(
    sum_files: list[str], algorithm: str, quiet: bool, backend: str | None, as_json: bool
) -> None:
    """Check the lines of every file in `sum_files`; exit status 1 on any failure."""
    method = method_for(algorithm)
    # One loader for every group, so that the lanes load at most once.
    loader = LaneLoader(method, backend)
    tally = CheckTally()
    document = JsonDocument(as_json, algorithm)
    out = Output()
    for group in parsed_groups(sum_files, method.digest_size, tally, out.error):
        names = [item.name for item in group]
        outcomes = file_digests(names, algorithm, backend, loader=loader)
        for item, (name, outcome) in zip(group, outcomes, strict=True):
            tally.checked += 1
            if isinstance(outcome, OSError):
                tally.unreadable += 1
                status = "FAILED open or read"
                out.error(name, outcome)
            elif outcome == item.digest:
                status = "OK"
            else:
                tally.mismatched += 1
                status = "FAILED"
            document.entry({"name": name, "status": status})
            if not as_json and not (quiet and status == "OK"):
                out.line(f"{display_name(name)}: {status}")
    out.flush()
    if not tally.checked and not tally.unopened:
        raise click.ClickException(
            f"no properly formatted {algorithm} checksum lines found"
            f"{_other_algorithm_hint(tally.first_improper, algorithm)}"
        )
    if tally.improper:
        lines = _count(tally.improper, "line is", "lines are")
        info(f"twocats sum: WARNING: {lines} improperly formatted")
    if tally.unreadable:
        listed = _count(tally.unreadable, "listed file", "listed files")
        info(f"twocats sum: WARNING: {listed} could not be read")
    if tally.mismatched:
        computed = _count(tally.mismatched, "computed checksum", "computed checksums")
        info(f"twocats sum: WARNING: {computed} did NOT match")
    document.close(
        mismatched=tally.mismatched,
        unreadable=tally.unreadable,
        improperly_formatted=tally.improper,
    )
    if tally.mismatched or tally.unreadable or tally.unopened:
        raise click.exceptions.Exit(1)


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"
