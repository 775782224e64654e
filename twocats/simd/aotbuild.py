"""Build a platform wheel's ahead-of-time kernels: one child process per x86-64 level.

Usage::

    from twocats.simd.aotbuild import build_levels

    build_levels([sys.executable, "-m", "twocats.prebuild"], out)

Each child runs ``command --level LEVEL --out OUT`` with numba targeting that level and an empty
kernel cache; the command builds its kernel set there (the fill's is
:mod:`twocats.prebuild`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from twocats.simd import aot, cache
from twocats.simd.isa import X86_64_LEVELS

__all__ = ["build_levels"]


def build_levels(command: list[str], out: Path) -> int:
    """Run ``command`` once per level of :data:`~twocats.simd.isa.X86_64_LEVELS` this CPU runs.

    Every artefact is so checked against numba's build of its level; a level this CPU does not
    run is named and skipped.  Returns 0, or 1 when a child fails.
    """
    runs = set(aot.host_levels())
    for level, _flags in X86_64_LEVELS:
        if level not in runs:
            print(f"{level}: skipped, this CPU does not run it", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="twocats-prebuild-") as scratch:
            env = {**os.environ, "NUMBA_CPU_NAME": level, "NUMBA_CPU_FEATURES": ""}
            env |= {"TWOCATS_CACHE_DIR": scratch, "NUMBA_CACHE_DIR": scratch, cache.AOT_ENV: "1"}
            child = [*command, "--level", level, "--out", str(out)]
            if subprocess.run(child, env=env, check=False).returncode != 0:
                return 1
        print(f"{level}: built", file=sys.stderr)
    return 0
