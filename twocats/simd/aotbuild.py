"""Build a platform wheel's ahead-of-time kernels: one child process per x86-64 level.

Usage::

    from twocats.simd.aotbuild import build_levels

    build_levels("twocats.prebuild", out)

Each child, an isolated Python (:mod:`twocats._child`), runs the module as ``python -m module
--level LEVEL --out OUT`` with numba targeting that level and an empty kernel cache; the module
builds its kernel set there (the fill's and the lanes' is :mod:`twocats.prebuild`).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from twocats._child import run
from twocats.simd import aot, cache
from twocats.simd.isa import X86_64_LEVELS

__all__ = ["build_levels"]


# The longest one level's build may take.
_LEVEL_SECONDS = 3600


def build_levels(module: str, out: Path) -> int:
    """Run ``module`` once per level of :data:`~twocats.simd.isa.X86_64_LEVELS` this CPU runs.

    Every artefact is so checked against numba's build of its level; a level this CPU does not
    run is named and skipped.  Returns 0, or 1 when a child fails.
    """
    runs = set(aot.host_levels())
    for level, _flags in X86_64_LEVELS:
        if level not in runs:
            print(f"{level}: skipped, this CPU does not run it", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="twocats-prebuild-") as scratch:
            settings = {"NUMBA_CPU_NAME": level, "NUMBA_CPU_FEATURES": ""}
            settings |= {cache.CACHE_ENV: scratch, "NUMBA_CACHE_DIR": scratch, cache.AOT_ENV: "1"}
            arguments = ["--level", level, "--out", str(out.resolve())]
            program = (
                f"import runpy; sys.argv[1:] = {arguments!r}; "
                f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
            )
            if run(program, settings=settings, timeout=_LEVEL_SECONDS).returncode != 0:
                return 1
        print(f"{level}: built", file=sys.stderr)
    return 0
