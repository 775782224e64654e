"""The ``twocats`` command line: hash, verify, upgrade, needs-rehash, derive, tune, compare, sum,
bench and selftest.

Exit status: 0 success, 1 mismatch or failure, 2 bad input (options, parameters, a malformed hash
string), 130 interrupted (Ctrl-C).  Errors are one ``Error:`` line on standard error, never a
traceback.  With ``--json`` a command writes exactly one JSON document to standard output and all
other text to standard error; a command that fails writes ``{"error": ..., "exit_status": ...}``.

Importing this package, parsing arguments and ``--help`` import neither numpy nor numba: each
command's module is imported when the command runs, and imports the library inside its body.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Final

import click

from twocats import __version__
from twocats.cli._common import emit_json, translate_errors

__all__ = ["main", "run"]

# The commands, each loaded from its module only when it runs: name -> (module, attribute, the
# one-line help that ``twocats --help`` shows without importing the module).
_LAZY_COMMANDS: Final = {
    "bench": (
        "twocats.cli.bench",
        "bench_command",
        "Measure the TwoCats fill rate at each instruction-set level on this machine.",
    ),
    "compare": (
        "twocats.cli.compare",
        "compare_command",
        "Compare TwoCats with argon2id and scrypt at equal memory and at equal time.",
    ),
    "derive": (
        "twocats.cli.derive",
        "derive_command",
        "Derive a raw key from a password and write it to standard output.",
    ),
    "hash": (
        "twocats.cli.passwords",
        "hash_command",
        "Hash a password and print the PHC string to store.",
    ),
    "needs-rehash": (
        "twocats.cli.passwords",
        "needs_rehash_command",
        "Tell whether HASH was made with other parameters than the target ones.",
    ),
    "selftest": (
        "twocats.cli.selftest",
        "selftest",
        "Check a backend against known-answer TwoCats vectors.",
    ),
    "sum": (
        "twocats.cli.checksum",
        "sum_command",
        "Print or check checksums of FILES, many files hashed at once.",
    ),
    "tradeoff": (
        "twocats.cli.tradeoff",
        "tradeoff_command",
        "Run the published trade-off attacks on a block dependency graph (Argon2, TwoCats).",
    ),
    "tune": (
        "twocats.cli.tune",
        "tune_command",
        "Choose parameters whose verification, --concurrent at once, fits --time on this machine.",
    ),
    "upgrade": (
        "twocats.cli.passwords",
        "upgrade_command",
        "Raise the memory cost of a stored HASH to a target, without the password.",
    ),
    "upgrade-db": (
        "twocats.cli.upgrade_db",
        "upgrade_db_command",
        "Raise every TwoCats hash in a database table to the target cost, on Dask.",
    ),
    "verify": (
        "twocats.cli.passwords",
        "verify_command",
        "Check a password against a stored HASH.",
    ),
    "warmup": (
        "twocats.cli.warmup",
        "warmup_command",
        "Compile kernels into the cache ahead of use.",
    ),
}

# Commands whose whole effect is what they write to standard output and error: the console
# script ends the process right after them, without the interpreter's teardown (with numba
# loaded, that teardown costs about 0.2 s of CPU).
_QUICK_EXIT: Final = frozenset({"derive", "hash", "needs-rehash", "upgrade", "verify"})

# The context key telling that the command line asked for --json.
_JSON_WANTED: Final = "twocats.json"


class _Group(click.Group):
    """A click group with lazily loaded commands and the project's error contract."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_LAZY_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = _LAZY_COMMANDS.get(cmd_name)
        if lazy is None:
            return None
        module, attribute, _ = lazy
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module}.{attribute} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _LAZY_COMMANDS[name][2]) for name in self.list_commands(ctx)]
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


def _flushed() -> bool:
    """Flush standard output and error; return False if either cannot be written."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    return True


def run() -> None:
    """Run the ``twocats`` command line from ``sys.argv`` and end the process (the console script).

    After a command of :data:`_QUICK_EXIT` the process ends with ``os._exit`` once standard output
    and error are flushed; after any other command, or if flushing fails, it exits as usual.
    """
    # The group's own options take no values, so the first other word names the command.
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    try:
        main()
    except SystemExit as done:
        if command in _QUICK_EXIT and isinstance(done.code, int | None) and _flushed():
            os._exit(done.code or 0)
        raise
