"""The ``twocats`` command line: hash, verify, upgrade, needs-rehash, derive, tune, compare, sum,
bench and selftest.

Exit status: 0 success, 1 mismatch or failure, 2 bad input (options, parameters, a malformed hash
string), 130 interrupted (Ctrl-C).  Errors are one ``Error:`` line on standard error, never a
traceback.  With ``--json`` a command writes exactly one JSON document to standard output and all
other text to standard error; a command that fails writes ``{"error": ..., "exit_status": ...}``.

Importing this package, parsing arguments and ``--help`` import neither numpy nor numba: every
command imports the library inside its body.
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Final

import click

from twocats import __version__
from twocats.cli._common import emit_json, translate_errors
from twocats.cli.checksum import sum_command
from twocats.cli.compare import compare_command
from twocats.cli.derive import derive_command
from twocats.cli.passwords import (
    hash_command,
    needs_rehash_command,
    upgrade_command,
    verify_command,
)
from twocats.cli.tune import tune_command

# numba colours compile errors with colorama where that is installed, and colorama then writes a
# terminal reset after the command's output at exit; the command line never shows compile errors.
os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")

__all__ = ["main"]

# Commands defined in modules this package does not load until they run: name -> (module,
# attribute, one-line help shown by ``twocats --help`` without importing the module).
_LAZY_COMMANDS: Final = {
    "bench": (
        "twocats.cli.bench",
        "bench_command",
        "Measure the TwoCats fill rate at each instruction-set level on this machine.",
    ),
    "selftest": (
        "twocats.cli.selftest",
        "selftest",
        "Check a backend against known-answer TwoCats vectors.",
    ),
    "warmup": (
        "twocats.cli.warmup",
        "warmup_command",
        "Compile kernels into the cache ahead of use.",
    ),
    "upgrade-db": (
        "twocats.cli.upgrade_db",
        "upgrade_db_command",
        "Raise every TwoCats hash in a database table to the target cost, on Dask.",
    ),
}

# The context key telling that the command line asked for --json.
_JSON_WANTED: Final = "twocats.json"


class _Group(click.Group):
    """A click group with lazily loaded commands and the project's error contract."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = _LAZY_COMMANDS.get(cmd_name)
        if lazy is None:
            return super().get_command(ctx, cmd_name)
        module, attribute, _ = lazy
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module}.{attribute} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            lazy = _LAZY_COMMANDS.get(name)
            if lazy is not None:
                rows.append((name, lazy[2]))
                continue
            command = super().get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_JSON_WANTED] = "--json" in args
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return translate_errors(lambda: super(_Group, self).invoke(ctx))
        except click.ClickException as error:
            # A failing command asked for JSON still writes its one document: the error.
            if ctx.meta.get(_JSON_WANTED):
                emit_json({"error": error.format_message(), "exit_status": error.exit_code})
            raise


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="twocats")
def main() -> None:
    """TwoCats memory-hard password hashing and SIMD lane hashing.

    Passwords are read from a hidden prompt or with --password-stdin, never from the command line.
    Exit status: 0 success, 1 mismatch or failure, 2 bad input, 130 interrupted.
    """


for _command in (
    hash_command,
    verify_command,
    upgrade_command,
    needs_rehash_command,
    derive_command,
    tune_command,
    compare_command,
    sum_command,
):
    main.add_command(_command)
