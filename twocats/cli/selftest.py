"""``twocats selftest``: run known-answer vectors on a backend and report every failure.

Standard output gets one ``FAIL`` line per failing vector and a closing ``N passed, M failed`` line
(``, K skipped`` when ``--max-memory`` skips vectors); the exit status is 1 if any vector failed.
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
    max_memory_option,
    progress_wanted,
)
from twocats.exceptions import BackendError, TwoCatsError

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
@max_memory_option("no limit; larger vectors are counted as skipped")
@json_option
def selftest(
    vectors_file: Path | None, backend: str | None, max_memory: int | None, as_json: bool
) -> None:
    """Check a backend against known-answer TwoCats vectors.

    By default this runs the vectors packaged with twocats (all three algorithm versions and every
    entry point); --vectors runs any file in the shared JSON-lines schema, such as the reference
    repository's test_vectors file.
    """
    from twocats.kdf.engine import Engine
    from twocats.kdf.vectors import VectorFormatError, load_vectors, selftest_vectors

    try:
        vectors = load_vectors(vectors_file) if vectors_file is not None else selftest_vectors()
        engine = Engine(backend, max_memory=max_memory)
    except (VectorFormatError, BackendError) as error:
        raise UsageFailure(str(error)) from None
    try:
        engine.fill_slice()
    except TwoCatsError as error:
        raise Failure(str(error)) from None
    source = vectors_file.name if vectors_file is not None else "the packaged vectors"
    info(f"selftest: {len(vectors)} vectors from {source} on the {engine.backend} backend")

    passed = failed = skipped = 0
    failures: list[dict[str, str]] = []
    with _progress(vectors) as items:
        for item in items:
            try:
                if max_memory is not None and item.memory_bytes() > max_memory:
                    skipped += 1
                    continue
                ok = item.check(engine)
                reason = "output differs from the expected value"
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
    if skipped:
        summary += f", {skipped} skipped"
    if as_json:
        emit_json(
            {
                "backend": engine.backend,
                "source": source,
                "passed": passed,
                "failed": failed,
                "skipped": skipped,
                "failures": failures,
            }
        )
    else:
        click.echo(summary)
    if failed:
        raise click.exceptions.Exit(1)
