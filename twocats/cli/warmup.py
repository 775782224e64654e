"""``twocats warmup``: compile the kernels this machine will use into the kernel cache.

Each fill kernel also gets an ahead-of-time artefact (:mod:`twocats.kdf.fill.aot`) where a C
compiler and a tested numba release are present, so that later processes hash without importing
numba.

With no option it compiles what the default profile uses; ``--profile``, ``--params`` and the
parameter options name another parameter set, and ``--all`` compiles every fill kernel and lane
hash.  The cache is ``$TWOCATS_CACHE_DIR`` (default ``~/.cache/twocats``); a kernel already there is
loaded, not compiled again.  Kernels compile on several processes at once (``--jobs``, default the
usable CPUs).  A progress bar runs on standard error when it is a terminal.  ``--shared`` then
makes the cache readable by every user (files 0644, folders 0755), for a cache that root warms
for a service user.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

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
    from twocats.kdf.fill.warmup import Kernel
    from twocats.simd.warmup import Job

__all__ = ["artefacts_line", "warmup_command"]


@click.command("warmup")
@params_options
@click.option("--all", "everything", is_flag=True, help="Every fill kernel and lane hash.")
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
@backend_option
@json_option
def warmup_command(
    everything: bool,
    jobs: int | None,
    shared: bool,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Compile kernels into the cache ahead of use.

    It compiles the kernels a parameter set uses (default: the default profile), or with --all
    every fill kernel and lane hash.  Run it once after installing, or at image build time, so
    that the first hash does not pay for compilation.  The kernels are cached per CPU model: a
    cache built on one machine is compiled again on a CPU of another kind.

    The cache is private to the user who writes it.  Run as root with --shared (for example in a
    container image), it serves a service user read-only: its files become 0644 and its folders
    0755, and a cache owned by root or by the user and writable by neither group nor others is
    trusted.  Run it again with --shared after anything else wrote to that cache.
    """
    from twocats.kdf.fill.warmup import all_kernels, kernels_for
    from twocats.lanes.warmup import lane_kernels
    from twocats.simd.cache import cache_root
    from twocats.simd.registry import resolve_backend
    from twocats.simd.warmup import compile_kernels, default_jobs

    chosen = resolve_backend(backend)
    if chosen == "reference":
        raise BackendError("the reference backend has no compiled kernels; choose scalar or simd")
    params = build_params(options)
    fills = all_kernels(chosen) if everything else kernels_for(params, chosen)
    kernels: list[Job] = [*fills, *(lane_kernels(chosen) if everything else [])]
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    done = compile_kernels(kernels, jobs or default_jobs())
    if progress_wanted() and not as_json:
        with click.progressbar(length=len(kernels), label="compiling", file=sys.stderr) as bar:
            for kernel, took in done:
                seconds[kernel.label] = took
                bar.label = f"compiling ({kernel.label} ready)"
                bar.update(1)
    else:
        seconds.update((kernel.label, took) for kernel, took in done)
    total = time.perf_counter() - started
    usable = _usable_artefacts(fills)
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
        _report(kernels, fills, usable, total)
    for line in refused:
        info(f"--shared left alone: {line}")
    if refused:
        raise click.exceptions.Exit(1)


def _share() -> list[str]:
    """Share the kernel cache (and a moved artefacts' folder); return what was left alone.

    A cache root that is a link or someone else's is refused whole, with one error line.
    """
    from twocats.simd import aot
    from twocats.simd.cache import RefusedError, cache_root, share

    roots = [cache_root()]
    if not aot.aot_dir().is_relative_to(cache_root()):
        roots.append(aot.aot_dir())
    refused: list[str] = []
    for root in roots:
        try:
            refused += share(root).refused
        except RefusedError as error:
            raise Failure(f"--shared refused the cache: {error}") from None
    return refused


def _report(kernels: list[Job], fills: list[Kernel], usable: list[str], total: float) -> None:
    """Say what is ready, on standard error."""
    from twocats.simd.cache import cache_root

    plural = "s" if len(kernels) != 1 else ""
    info(f"{len(kernels)} kernel{plural} ready in {cache_root()} ({total:.1f} s)")
    count = len(fills)
    info(artefacts_line(len(usable), count))
    if len(usable) < count:
        info(f"Note: the others run through numba's cache ({_why_not_ahead_of_time()}).")


def artefacts_line(usable: int, count: int) -> str:
    """Say how many of `count` fill kernels load from an ahead-of-time artefact."""
    verb = "has" if usable == 1 else "have"
    return (
        f"{usable} of {count} fill kernel{'s' if count != 1 else ''} {verb} an ahead-of-time "
        "artefact, which hashes load without numba"
    )


def _why_not_ahead_of_time() -> str:
    """Why fill kernels were not built ahead of time, as far as this process can tell."""
    import numba

    from twocats.simd import aot, cache
    from twocats.simd.aotcompile import BUILD_NUMBA

    if not aot.enabled():
        return f"{cache.AOT_ENV}=0 or NUMBA_DISABLE_JIT turns them off"
    if numba.__version__ not in BUILD_NUMBA:
        return f"they are built with numba {', '.join(sorted(BUILD_NUMBA))} only"
    return "a build or a check failed; an earlier warning says which"


def _usable_artefacts(fills: list[Kernel]) -> list[str]:
    """Return the labels of the fill kernels whose ahead-of-time artefact loads and checks."""
    from twocats.kdf.fill.aot import load_fill

    return [kernel.label for kernel in fills if load_fill(kernel.key) is not None]
