"""``twocats bench``: the TwoCats fill rate at each instruction-set level, measured on this machine.

The default run is short (seconds with a warm kernel cache): the best SIMD level of this CPU and
the scalar build, blake2s with 8 lanes on 64 MiB.  ``--full`` runs the longer table (the SSE2
baseline as well, 1 and 8 lanes, 1 GiB).  Every level runs in a child process of its own, compiled
for that level, and its kernels' assembly is checked against the level (see
:mod:`twocats.perf.levels`, which does the measuring; this module holds the options and the
messages).  Progress goes to standard error, one numbered line per step.
"""

from __future__ import annotations

import platform
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from twocats.cli._common import F, Failure, emit_json, info, json_option
from twocats.hashes import HASH_TYPES, by_name

__all__ = ["bench_command"]


@dataclass(frozen=True)
class _Plan:
    """The cells and levels of one run mode, before the options override them."""

    lanes: tuple[int, ...]
    mem_costs: tuple[int, ...]
    repeats: int
    min_seconds: float
    baseline_level: bool


_SHORT = _Plan(lanes=(8,), mem_costs=(16,), repeats=3, min_seconds=0.15, baseline_level=False)
_FULL = _Plan(lanes=(1, 8), mem_costs=(20,), repeats=3, min_seconds=0.5, baseline_level=True)


class _Steps:
    """Numbered progress lines on standard error: ``[3/8] AVX-512: blake2s L=8 ...``."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0

    def __call__(self, message: str) -> None:
        self.done += 1
        info(f"[{min(self.done, self.total)}/{self.total}] {message}")


def _check_lanes(lanes_list: tuple[int, ...], hash_type: str) -> None:
    words = by_name(hash_type).state_words
    if any(lanes & (lanes - 1) for lanes in lanes_list):
        raise click.BadParameter("lanes must be 1, 2, 4, 8 or 16", param_hint="--lanes")
    if any(lanes > words for lanes in lanes_list):
        raise click.BadParameter(
            f"lanes must be from 1 to {words} for {hash_type}", param_hint="--lanes"
        )


def _repeatable(
    flag: str, name: str, low: int, high: int, text: str, default: tuple[int, ...] = ()
) -> Callable[[F], F]:
    """A repeatable integer option from ``low`` to ``high``."""
    shown = f" [default: {', '.join(map(str, default))}]" if default else ""
    return click.option(
        flag,
        name,
        multiple=True,
        type=click.IntRange(low, high),
        default=default,
        help=f"{text} Repeatable.{shown}",
    )


def _level_keys() -> list[str]:
    from twocats.simd.isa import LEVELS

    return [level.key for level in LEVELS]


@click.command("bench")
@click.option(
    "--full",
    is_flag=True,
    help="The long table: also the SSE2 baseline, 1 and 8 lanes, 1 GiB (about a minute).",
)
@click.option(
    "--level",
    "level_keys",
    multiple=True,
    type=click.Choice(_level_keys()),
    help="ISA level to run (repeatable; default: the best SIMD level of this CPU and none, "
    "with --full also sse2).",
)
@_repeatable("--lanes", "lanes_list", 1, 16, "Lane counts (default 8, with --full 1 and 8).")
@_repeatable("--multiplies", "multiplies_list", 0, 8, "Multiply-chain lengths.", default=(2,))
@_repeatable(
    "--mem-cost",
    "mem_costs",
    10,
    30,
    "Memory costs: 2**MEM_COST KiB (default 16 = 64 MiB, with --full 20 = 1 GiB).",
)
@_repeatable("--parallelism", "parallelisms", 1, 255, "Regions on parallel threads.", default=(1,))
@click.option(
    "--hash",
    "hash_type",
    type=click.Choice(HASH_TYPES),
    default="blake2s",
    show_default=True,
    help="Hash function (lanes above 8 need blake2b or sha512).",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 100),
    default=None,
    help="Timed rounds per configuration, the median is shown (default 3).",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Kernel cache root (default: $TWOCATS_CACHE_DIR, else ~/.cache/twocats; it keeps one "
    "folder per ISA and vectorizer mode).",
)
@click.option("--cold", is_flag=True, help="Compile every kernel afresh in a temporary cache.")
@json_option
def bench_command(
    full: bool,
    level_keys: tuple[str, ...],
    lanes_list: tuple[int, ...],
    multiplies_list: tuple[int, ...],
    mem_costs: tuple[int, ...],
    parallelisms: tuple[int, ...],
    hash_type: str,
    repeats: int | None,
    cache_dir: Path | None,
    cold: bool,
    as_json: bool,
) -> None:
    """Measure the TwoCats fill rate at each instruction-set level on this machine.

    Every level runs in its own process, compiled for that level (a level's first run compiles its
    kernels, a few seconds each; later runs load them from the cache), and its kernels' assembly is
    checked against the level.  The table shows GB/s of memory filled per derivation, on a reused
    buffer.  The default run takes seconds; --full runs the longer table.
    """
    from twocats.exceptions import InvalidParametersError
    from twocats.perf.levels import (
        cell_grid,
        check_outputs,
        choose_levels,
        failed_levels,
        format_table,
        run_levels,
    )
    from twocats.simd.cache import cache_root
    from twocats.simd.isa import host_target

    plan = _FULL if full else _SHORT
    lanes_list = lanes_list or plan.lanes
    mem_costs = mem_costs or plan.mem_costs
    rounds = repeats or plan.repeats
    _check_lanes(lanes_list, hash_type)
    host_name, host_features = host_target()
    try:
        levels = choose_levels(level_keys, host_features, plan.baseline_level)
    except InvalidParametersError as error:
        raise click.BadParameter(str(error), param_hint="--level") from None
    cells = cell_grid(hash_type, lanes_list, multiplies_list, mem_costs, parallelisms)
    steps = _Steps(len(levels) * (1 + len(cells)))
    with tempfile.TemporaryDirectory(prefix="twocats-bench-") as temporary:
        root = Path(temporary) if cold else (cache_dir or cache_root())
        info(f"{len(cells)} configuration(s) at {len(levels)} level(s), each in its own process")
        results = run_levels(
            levels,
            cells,
            host_features=host_features,
            cache_dir=lambda level: root / level.key if cold else root,
            repeats=rounds,
            min_seconds=plan.min_seconds,
            progress=steps,
        )
    mismatches = check_outputs(results)
    failed = failed_levels(results)
    if as_json:
        emit_json(
            {
                "host": {"cpu_name": host_name, "machine": platform.machine()},
                "levels": results,
                "output_mismatches": mismatches,
            }
        )
    else:
        click.echo(
            f"TwoCats fill rate in GB/s of memory filled, median of {rounds} "
            f"({hash_type}, host {host_name}):"
        )
        click.echo(format_table(results))
        for message in mismatches:
            click.echo(f"output mismatch: {message}")
    if mismatches or failed:
        raise Failure("some levels failed their checks: " + ", ".join(failed or ["outputs"]))
