"""The ``twocats`` command line: hash, verify, upgrade, needs-rehash, derive, tune, compare, sum,
bench and selftest.

Exit status: 0 success, 1 mismatch or failure, 2 bad input (options, parameters, a malformed hash
string), 130 interrupted (Ctrl-C).  Errors are one ``Error:`` line on standard error, never a
traceback.  With ``--json`` a command writes exactly one JSON document to standard output and all
other text to standard error; a command that fails writes ``{"error": ..., "exit_status": ...}``.

Importing this package, parsing arguments and ``--help`` import neither numpy nor numba: each
command's module is imported when the command runs, and imports the library inside its body.
Importing this package imports no click either: the click group :data:`main` is loaded on first
use, and the console script runs ``twocats sum`` of files in its everyday form without click
(:mod:`twocats.cli._sum_quick`).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from twocats.cli._group import main

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


def __getattr__(name: str) -> Any:
    """``main``, the click group, loaded with click on first use."""
    if name == "main":
        from twocats.cli._group import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    if sys.argv[1:2] == ["sum"]:
        from twocats.cli._sum_quick import sum_quick

        status = sum_quick(sys.argv[2:])
        if status is not None:
            sys.exit(status)
    from twocats.cli._group import main

    try:
        main()
    except SystemExit as done:
        if command in _QUICK_EXIT and isinstance(done.code, int | None) and _flushed():
            os._exit(done.code or 0)
        raise
