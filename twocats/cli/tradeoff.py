"""``twocats tradeoff``: the ranking trade-off attack on a block dependency graph.

The options and messages of the command; the graphs are :mod:`twocats.perf.tradeoff.graphs`, the
attack :mod:`twocats.perf.tradeoff.ranking`.
"""

from __future__ import annotations

import sys

import click

from twocats.cli._common import UsageFailure, emit_json, json_option, progress_wanted

__all__ = ["tradeoff_command"]


@click.command("tradeoff")
@click.argument("graph")
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
@json_option
def tradeoff_command(graph: str, blocks: int | None, seeds: int, as_json: bool) -> None:
    """Run the ranking trade-off attack on a block dependency graph (Argon2, TwoCats).

    Prints C, D and alpha*D for each memory fraction alpha the attack reached.  GRAPH is argon2d,
    argon2i or argon2id (optionally :t=T,lanes=L), twocats (optionally :PROFILE or :$twocats$...
    parameters) or power:GAMMA.  C is the computation and D the sequential depth per block,
    relative to the defender's, when only the fraction alpha of the blocks is kept; E is the
    attacker's best time-area gain, the largest 1/(alpha*D).
    """
    from twocats.exceptions import InvalidParametersError
    from twocats.perf.tradeoff.ranking import attack
    from twocats.perf.tradeoff.spec import parse_graph

    try:
        spec = parse_graph(graph, blocks)
    except InvalidParametersError as error:
        raise UsageFailure(str(error)) from None
    if progress_wanted():
        with click.progressbar(length=1, label=f"ranking {spec.name}", file=sys.stderr) as bar:

            def report(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            result = attack(spec.build, range(seeds), report)
    else:
        result = attack(spec.build, range(seeds))
    if as_json:
        emit_json(result.document())
        return
    click.echo(f"{result.graph}: {result.blocks} blocks, {result.nodes} computed, {seeds} seeds")
    click.echo(f"{'q':>6}  {'alpha':>7}  {'C':>12}  {'D':>8}  {'alpha*D':>8}")
    for row in result.rows:
        cells = f"{row.q:>6}  {row.alpha:>7.4f}  {row.C:>12.4g}  {row.D:>8.3f}"
        click.echo(f"{cells}  {row.alpha_d:>8.3f}")
    best = result.best
    click.echo(f"E = {result.E:.3f} (alpha*D = {best.alpha_d:.3f} at alpha = {best.alpha:.3f})")
