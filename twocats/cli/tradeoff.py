"""``twocats tradeoff``: the published trade-off attacks on a block dependency graph.

The options and messages of the command; the graphs are :mod:`twocats.perf.tradeoff.graphs`, the
attacks :mod:`twocats.perf.tradeoff.attacks`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from twocats.cli._common import UsageFailure, emit_json, json_option, progress_wanted

if TYPE_CHECKING:
    from twocats.perf.tradeoff.graphs import Graph
    from twocats.perf.tradeoff.model import Result

__all__ = ["tradeoff_command"]

#: The attacks --attack accepts (the library's list, spelled here so --help imports no numpy).
_CHOICES = ("ranking", "low-storage", "iterative", "depth-reducing", "best")


def _table(result: Result) -> list[str]:
    """The rows as text: the attack's own parameters, then alpha, C, D and both gains."""
    keys = list(result.rows[0].extra) if result.rows else []
    header = [*keys, "alpha", "C", "D", "E", "E free cores"]
    lines = ["  ".join(f"{name:>10}" for name in header)]
    for row in result.rows:
        cells = [f"{row.extra[key]:>10.4g}" for key in keys]
        cells += [f"{row.alpha:>10.4f}", f"{row.C:>10.4g}", f"{row.D:>10.3f}"]
        cells += [f"{row.gain(result.beta):>10.3f}", f"{row.gain(0.0):>10.3f}"]
        lines.append("  ".join(cells))
    return lines


def _summary(result: Result) -> str:
    best = result.best
    return (
        f"{result.attack}: E = {result.gain:.3f} (alpha = {best.alpha:.4f} of the memory's "
        f"{result.basis}, C = {best.C:.4g}, D = {best.D:.3f}); E with free cores = "
        f"{result.gain_free_cores:.3f}"
    )


@click.command("tradeoff")
@click.argument("graph")
@click.option(
    "--attack",
    "attack_name",
    type=click.Choice(_CHOICES),
    default="best",
    show_default=True,
    help="The attack to run; best runs every one that applies and reports the largest gain.",
)
@click.option(
    "--blocks",
    type=click.IntRange(8, 1 << 22),
    default=None,
    help="Blocks of the graph (default 65536 for argon2*/power; a TwoCats graph's own).",
)
@click.option(
    "--seeds",
    type=click.IntRange(1, 64),
    default=3,
    show_default=True,
    help="Graphs drawn for the data-dependent references; every figure is their mean.",
)
@click.option(
    "--multiply-latency",
    type=click.FloatRange(0, 1000),
    default=4.0,
    show_default=True,
    help="iterative: one multiplication of TwoCats' chain, in row steps (0 leaves the chain out).",
)
@click.option(
    "--budget",
    type=click.IntRange(1, 1000),
    default=24,
    show_default=True,
    help="depth-reducing: the most parameter settings the search tries.",
)
@json_option
def tradeoff_command(
    graph: str,
    attack_name: str,
    blocks: int | None,
    seeds: int,
    multiply_latency: float,
    budget: int,
    as_json: bool,
) -> None:
    """Run the published trade-off attacks on a block dependency graph (Argon2, TwoCats).

    GRAPH is argon2d, argon2i or argon2id (optionally :t=T,lanes=L,v=1.3|1.2.1), twocats
    (optionally :PROFILE or :$twocats$... parameters) or power:GAMMA.  Each row keeps the fraction
    alpha of the defender's memory (its peak, or its mean for the depth-reducing attack, whose
    guesses run staggered), at the computational penalty C (calls per block) and the depth penalty
    D (sequential time per block), both relative to the defender.  E is the gain in time-area
    product of the Argon2 specification's model, with the compression cores priced at the graph's
    memory; E with free cores bounds it.  The method and its checks are on the Security page.
    """
    from twocats.exceptions import InvalidParametersError
    from twocats.perf.tradeoff import attacks
    from twocats.perf.tradeoff.spec import parse_graph

    try:
        spec = parse_graph(graph, blocks)
        settings = attacks.Settings(range(seeds), multiply_latency, budget)
        first = spec.build(0)
        if attack_name != "best":
            why = attacks.applies(attack_name, first)
            if why is not None:
                raise InvalidParametersError(f"--attack {attack_name} on {spec.name}: {why}")
    except InvalidParametersError as error:
        raise UsageFailure(str(error)) from None

    def build(seed: int) -> Graph:
        return first if seed == 0 else spec.build(seed)

    def go(report: Callable[[str, int, int], None]) -> None:
        if attack_name == "best":
            verdict = attacks.best(build, settings, report)
            _emit(verdict.best, verdict.document(), as_json, verdict.results, seeds)
        else:
            result = attacks.run(
                attack_name,
                build,
                settings,
                lambda done, total: report(attack_name, done, total),
            )
            _emit(result, result.document(), as_json, (result,), seeds)

    if not progress_wanted():
        go(lambda name, done, total: None)
        return
    with click.progressbar(length=1, label=spec.name, file=sys.stderr) as bar:

        def report(name: str, done: int, total: int) -> None:
            label = f"{name} on {spec.name}"
            if bar.label != label:
                bar.label, bar.pos = label, 0
            bar.length = max(total, 1)
            bar.update(done - bar.pos)

        go(report)


def _emit(
    result: Result,
    document: dict[str, object],
    as_json: bool,
    every: tuple[Result, ...],
    seeds: int,
) -> None:
    if as_json:
        emit_json(document)
        return
    click.echo(
        f"{result.graph}: {result.blocks} blocks of memory, {result.nodes} computed, "
        f"{seeds} seeds; core {result.core.name}, beta = {result.beta:.3g}"
    )
    for line in _table(result):
        click.echo(line)
    for other in every:
        if other is not result:
            click.echo(_summary(other))
    click.echo(_summary(result))
