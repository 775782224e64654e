"""The ``twocats`` click group: its lazily loaded commands and the project's error contract.

:mod:`twocats.cli` names the commands and runs the console script; importing this module
imports click.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

import click

from twocats import __version__
from twocats.cli import _LAZY_COMMANDS
from twocats.cli._common import emit_json, translate_errors

__all__ = ["main"]

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
