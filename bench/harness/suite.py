"""A suite's command line: the options every suite shares, and the run of a plain suite."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from bench.harness.report import Report, print_markdown

__all__ = ["PlainRun", "plain_smoke", "plain_suite", "run_suite", "suite_parser"]


def suite_parser(
    suite: str,
    description: str | None,
    *,
    repeats: int,
    min_time: float | None = None,
    smoke_help: str | None = "tiny sizes, no result files",
) -> argparse.ArgumentParser:
    """A suite's command line with the options they share: --repeats, --min-time, --out, --smoke."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {suite}", description=description)
    parser.add_argument("--repeats", type=int, default=repeats)
    if min_time is not None:
        parser.add_argument("--min-time", type=float, default=min_time)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help=smoke_help)
    return parser


def run_suite(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    smoke: Callable[[], int],
    full: Callable[[argparse.Namespace], Report],
) -> int:
    """Parse ``argv``; run ``smoke`` under --smoke, else write the full report where --out says."""
    args = parser.parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    full(args).write(args.out)
    return 0


class PlainRun(Protocol):
    """A suite's run that takes only the shared options and a smoke flag."""

    def __call__(self, *, repeats: int, min_time: float, smoke: bool = False) -> Report: ...


def plain_suite(
    suite: str,
    description: str | None,
    run: PlainRun,
    argv: Sequence[str] | None,
    *,
    repeats: int,
    min_time: float,
    smoke_help: str = "tiny sizes, no result files",
) -> int:
    """Run a suite whose options are only the shared ones: the full report, or one smoke pass."""
    parser = suite_parser(
        suite, description, repeats=repeats, min_time=min_time, smoke_help=smoke_help
    )
    return run_suite(
        parser,
        argv,
        lambda: plain_smoke(run),
        lambda args: run(repeats=args.repeats, min_time=args.min_time),
    )


def plain_smoke(run: PlainRun) -> int:
    """Run a plain suite once at its cheapest size and print the report; asserts no timing."""
    return print_markdown(run(repeats=1, min_time=0.0, smoke=True))
