"""``twocats warmup``: make the kernels this machine will use ready ahead of their first use.

Each kernel is compiled into the kernel cache, checked against its reference and, where a C
compiler and a tested numba release are present, built as an ahead-of-time artefact, so that
later processes hash without importing numba (:func:`twocats.simd.family.ready`).

With no option it makes ready what the default profile uses; ``--profile``, ``--params`` and the
parameter options name another parameter set, and ``--all`` every kernel of every family (the
fill, the lane primitives and the lane modes).  Kernels are made ready on several processes at
once (``--jobs``, default the usable CPUs).  A progress bar runs on standard error when it is a
terminal.  ``--shared`` then makes the cache readable by every user (files 0644, folders 0755),
for a cache that root warms for a service user; ``--wheel`` builds the kernels a platform wheel
carries into the package instead.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from twocats._machine import usable_cpus
from twocats.cli._common import (
    Failure,
    backend_option,
    emit_json,
    info,
    json_option,
    progress_wanted,
)
from twocats.cli._options import build_params, params_options
from twocats.exceptions import BackendError

if TYPE_CHECKING:
    from twocats.simd.family import Job

__all__ = ["artefacts_line", "warmup_command", "wheel_jobs"]


@click.command("warmup")
@params_options
@click.option("--all", "everything", is_flag=True, help="Every kernel of every family.")
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes compiling at once (default: the usable CPUs).",
)
@click.option(
    "--shared",
    is_flag=True,
    help="Then make the cache readable by every user (files 0644, folders 0755).",
)
@click.option(
    "--wheel",
    is_flag=True,
    help="Build the kernels a platform wheel carries into the package, for every x86-64 level "
    "this CPU runs (before python -m build).",
)
@backend_option
@json_option
def warmup_command(
    everything: bool,
    jobs: int | None,
    shared: bool,
    wheel: bool,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Compile kernels into the cache ahead of use.

    It compiles the kernels a parameter set uses (default: the default profile), or with --all
    every kernel: the fill's, the lane primitives' and the lane modes'.  Run it once after
    installing, or at image build time, so that the first hash does not pay for compilation.
    The kernels are cached per CPU model: a cache built on one machine is compiled again on a
    CPU of another kind.

    The cache is private to the user who writes it.  Run as root with --shared (for example in a
    container image), it serves a service user read-only: its files become 0644 and its folders
    0755, and a cache owned by root or by the user and writable by neither group nor others is
    trusted.  Run it again with --shared after anything else wrote to that cache.
    """
    from twocats.kdf.fill.family import FILL
    from twocats.lanes.registry import FAMILIES
    from twocats.simd.cache import cache_root
    from twocats.simd.family import Job
    from twocats.simd.registry import resolve_backend

    if wheel:
        given = [name for name, value in options.items() if value not in (None, False)]
        if everything or jobs or shared or backend or as_json or given:
            raise click.UsageError("--wheel builds a wheel's own kernels and takes no other option")
        _wheel()
        return
    chosen = resolve_backend(backend)
    if chosen == "reference":
        raise BackendError("the reference backend has no compiled kernels; choose scalar or simd")
    params = build_params(options)
    families = [FILL, *FAMILIES] if everything else [FILL]
    work = [
        Job(family, key)
        for family in families
        for key in family.keys(chosen, None if everything else params)
    ]
    started = time.perf_counter()
    seconds, usable = _warm(work, jobs, as_json)
    total = time.perf_counter() - started
    refused = _share() if shared else []
    if as_json:
        emit_json(
            {
                "backend": chosen,
                "cache": str(cache_root()),
                "kernels": seconds,
                "seconds": total,
                "ahead_of_time": usable,
                **({"shared_refused": refused} if shared else {}),
            }
        )
    else:
        plural = "s" if len(work) != 1 else ""
        info(f"{len(work)} kernel{plural} ready in {cache_root()} ({total:.1f} s)")
        info(artefacts_line(len(usable), len(work)))
        if len(usable) < len(work):
            info(f"Note: the others run through numba's cache ({_why_not_ahead_of_time()}).")
    for line in refused:
        info(f"--shared left alone: {line}")
    if refused:
        raise click.exceptions.Exit(1)


def _warm(work: list[Job], jobs: int | None, as_json: bool) -> tuple[dict[str, float], list[str]]:
    """Make ``work`` ready; return each label's seconds and the labels an artefact serves."""
    from twocats.simd.family import warm

    seconds: dict[str, float] = {}
    usable: list[str] = []
    done = warm(work, jobs or usable_cpus())
    bar = None
    if progress_wanted() and not as_json:
        bar = click.progressbar(length=len(work), label="compiling", file=sys.stderr)
    with bar if bar is not None else contextlib.nullcontext():
        for job, took, artefact in done:
            seconds[job.label] = took
            if artefact:
                usable.append(job.label)
            if bar is not None:
                bar.label = f"compiling ({job.label} ready)"
                bar.update(1)
    return seconds, usable


def _share() -> list[str]:
    """Share the kernel cache; return what was left alone (a refused root is one error line)."""
    from twocats.simd.cache import RefusedError
    from twocats.simd.family import share

    try:
        return share()
    except RefusedError as error:
        raise Failure(f"--shared refused the cache: {error}") from None


def wheel_jobs() -> list[Job]:
    """The kernels a platform wheel carries: the built-in profiles' fill kernels and the lane
    primitives' schedulers, on the simd backend."""
    from twocats.kdf.fill.family import FILL
    from twocats.lanes.primitives import FAMILY
    from twocats.profiles import BUILT_IN
    from twocats.simd.family import Job

    fills = dict.fromkeys(key for params in BUILT_IN for key in FILL.keys("simd", params))
    return [
        *(Job(FILL, key) for key in fills),
        *(Job(FAMILY, key) for key in FAMILY.keys("simd", None)),
    ]


def _wheel() -> None:
    """Build :func:`wheel_jobs` into the package's folder, one child per x86-64 level; exit 1
    when this CPU runs none of the levels."""
    from twocats.simd.aot import PREBUILT_DIR
    from twocats.simd.family import wheel

    built = 0
    for level, outcome in wheel(wheel_jobs(), PREBUILT_DIR):
        info(f"{level}: {outcome}")
        built += outcome == "built"
    if not built:
        raise Failure("no kernel was built: this CPU runs none of the wheel's x86-64 levels")


def artefacts_line(usable: int, count: int) -> str:
    """Say how many of `count` kernels load from an ahead-of-time artefact."""
    verb = "has" if usable == 1 else "have"
    return (
        f"{usable} of {count} kernel{'s' if count != 1 else ''} {verb} an ahead-of-time "
        "artefact, which hashes load without numba"
    )


def _why_not_ahead_of_time() -> str:
    """Why kernels were not built ahead of time, as far as this process can tell."""
    import numba

    from twocats.simd import aot, cache

    if not aot.enabled():
        return f"{cache.AOT_ENV}=0 or NUMBA_DISABLE_JIT turns them off"
    if numba.__version__ not in aot.BUILD_NUMBA:
        return f"they are built with numba {', '.join(sorted(aot.BUILD_NUMBA))} only"
    return "a build or a check failed; an earlier warning says which"
