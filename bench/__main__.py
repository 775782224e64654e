"""Entry point: ``python -m bench [suite | smoke | docs] [--smoke] [suite options]``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

from bench import SUITES
from twocats._extras import MissingExtraError, missing_extra

USAGE = """usage: python -m bench [SUITE | smoke] [--smoke] [suite options]

  python -m bench                 run every suite at full size
  python -m bench SUITE [opts]    run one suite (see python -m bench SUITE --help)
  python -m bench SUITE --smoke   run one suite at its cheapest size
  python -m bench smoke           run every suite at its cheapest size (no timing asserts)
  python -m bench docs [--check]  write (or check) the documentation's figures from the results

suites: {suites}
"""


def _suite(name: str) -> Any:
    """Import a suite's module; without a package it needs, an ImportError naming the extra."""
    module = SUITES[name]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is None or error.name.partition(".")[0] in ("bench", "twocats"):
            raise
        raise missing_extra(module, error) from None


def _smoke_all() -> int:
    failed = []
    for name in SUITES:
        print(f"== smoke: {name}", flush=True)
        if _suite(name).smoke() != 0:
            failed.append(name)
    if failed:
        print("smoke failures: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to one suite, every suite, or every suite's smoke run."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(USAGE.format(suites=", ".join(SUITES)))
        return 0
    if not args:
        return max((_suite(name).main([]) for name in SUITES), default=0)
    if args[0] == "smoke":
        return _smoke_all()
    if args[0] == "docs":
        from bench import docs

        return docs.main(args[1:])
    name, rest = args[0], args[1:]
    if name not in SUITES:
        print(USAGE.format(suites=", ".join(SUITES)), file=sys.stderr)
        print(f"unknown suite {name!r}", file=sys.stderr)
        return 2
    suite = _suite(name)
    if "--smoke" in rest:
        return int(suite.smoke())
    return int(suite.main(rest))


def _run(argv: Sequence[str] | None = None) -> int:
    """Run :func:`main`; a suite that needs a package which is not installed is one line, 2."""
    try:
        return main(argv)
    except MissingExtraError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(_run())
