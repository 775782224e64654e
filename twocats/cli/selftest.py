"""``twocats selftest``: run known-answer vectors on a backend and report every failure.

Standard output gets one ``FAIL`` line per failing vector, one ``REFUSED`` line per vector over the
memory or work limit (those of ``twocats verify``, with the same options to raise them)
and a closing ``N passed, M failed`` line (``, K refused`` when some were); the exit status is 1 if
any vector failed.
With ``--json`` the same counts and failures are one JSON document on standard output instead.
A vector file that cannot be read or does not follow the schema is one ``Error:`` line and exit
status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import click

from twocats.cli._common import (
    Failure,
    UsageFailure,
    backend_option,
    emit_json,
    info,
    json_option,
    progress_wanted,
)
from twocats.cli._limits import verify_limits
from twocats.cli._options import stored_limits_options
from twocats.exceptions import BackendError, HashLimitError, TwoCatsError

__all__ = ["selftest"]

T = TypeVar("T")


@contextmanager
def _progress(items: list[T]) -> Iterator[Iterable[T]]:
    """Show a progress bar on standard error when it is a terminal."""
    if not progress_wanted():
        yield items
        return
    with click.progressbar(items, label="selftest", file=sys.stderr) as bar:
        yield bar


@click.command("selftest")
@click.option(
    "--vectors",
    "vectors_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A JSON-lines vector file in the shared schema (default: the packaged vectors).",
)
@backend_option
@stored_limits_options("a vector (counted as refused)")
@json_option
def selftest(
    vectors_file: Path | None,
    backend: str | None,
    max_memory: int | None,
    max_work: int | None,
    as_json: bool,
) -> None:
    """Check a backend against known-answer TwoCats vectors.

    By default this runs the vectors packaged with twocats (all three algorithm versions and every
    entry point); --vectors runs any file in the shared JSON-lines schema, such as the reference
    repository's test_vectors file.
    """
    from twocats.kdf.engine import Engine
    from twocats.kdf.vectors import VectorFormatError, load_vectors, selftest_vectors

    limit = verify_limits(max_memory, max_work)
    try:
        vectors = load_vectors(vectors_file) if vectors_file is not None else selftest_vectors()
        engine = Engine(backend, max_memory=limit.max_memory)
    except (VectorFormatError, BackendError) as error:
        raise UsageFailure(str(error)) from None
    try:
        engine.fill_slice()
    except TwoCatsError as error:
        raise Failure(str(error)) from None
    source = vectors_file.name if vectors_file is not None else "the packaged vectors"
    info(f"selftest: {len(vectors)} vectors from {source} on the {engine.backend} backend")

    passed = failed = refused = 0
    failures: list[dict[str, str]] = []
    refusals: list[dict[str, str]] = []
    with _progress(vectors) as items:
        for item in items:
            try:
                for params, old_mem_cost in item.derivations():
                    limit.check(params, old_mem_cost=old_mem_cost, subject="the vector")
                ok = item.check(engine)
                reason = "output differs from the expected value"
            except HashLimitError as error:
                refused += 1
                refusals.append({"vector": str(item), "reason": str(error)})
                if not as_json:
                    click.echo(f"REFUSED {item}: {error}")
                continue
            except TwoCatsError as error:
                ok, reason = False, str(error)
            if ok:
                passed += 1
            else:
                failed += 1
                failures.append({"vector": str(item), "reason": reason})
                if not as_json:
                    click.echo(f"FAIL {item}: {reason}")
    summary = f"{passed} passed, {failed} failed"
    if refused:
        summary += f", {refused} refused (over the limits: raise --max-memory or --max-work)"
    if as_json:
        emit_json(
            {
                "backend": engine.backend,
                "source": source,
                "passed": passed,
                "failed": failed,
                "refused": refused,
                "failures": failures,
                "refusals": refusals,
            }
        )
    else:
        click.echo(summary)
    if failed:
        raise click.exceptions.Exit(1)
