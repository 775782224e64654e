"""Write the ahead-of-time kernels a platform wheel carries: ``python -m twocats.simd.aotbuild``.

Usage::

    python -m twocats.simd.aotbuild      # every x86-64 level this CPU runs, then: python -m build

Each kernel is built by :func:`twocats.simd.aotcompile.build_fill` into
:data:`twocats.simd.aot.PREBUILT_DIR`, one child process per x86-64 level (see :func:`main`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from twocats.profiles import BUILT_IN
from twocats.simd import aot
from twocats.simd.aotcompile import build_fill
from twocats.simd.warmup import kernels_for

__all__ = ["main", "prebuilt_kernels"]


def prebuilt_kernels() -> list[aot.FillKey]:
    """Return the fill kernels of the built-in profiles on the simd backend (a wheel's set)."""
    found: dict[aot.FillKey, None] = {}
    for params in BUILT_IN:
        for kernel in kernels_for(params, "simd"):
            found[aot.FillKey(kernel.lanes, "simd", kernel.hash_code, kernel.variant)] = None
    return list(found)


def main(argv: list[str] | None = None) -> int:
    """``python -m twocats.simd.aotbuild``: write the artefacts a platform wheel carries.

    For each x86-64 level of :data:`twocats.simd.aot.LEVELS` this CPU runs (so that every
    artefact is checked against numba's build of its level), a child process with numba
    targeting that level (``NUMBA_CPU_NAME``, no extra features) and an empty kernel cache builds
    the built-in profiles' fill kernels into :data:`twocats.simd.aot.PREBUILT_DIR`.  Run it
    before ``python -m build``; a level this CPU does not run is named and skipped.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m twocats.simd.aotbuild", description=main.__doc__
    )
    levels = [level for level, _flags in aot.LEVELS]
    parser.add_argument("--level", choices=levels, help="build here; numba must target LEVEL")
    parser.add_argument("--out", type=Path, default=aot.PREBUILT_DIR, help="target folder")
    args = parser.parse_args(argv)
    if args.level:
        for key in prebuilt_kernels():
            fields = (key.lanes, key.backend, key.hash_type, key.variant)
            built = build_fill(*fields, args.level, args.out)
            if built is None:
                print(f"cannot build {key.name} here", file=sys.stderr)
                return 1
        return 0
    runs = set(aot.host_levels())
    for level, _flags in aot.LEVELS:
        if level not in runs:
            print(f"{level}: skipped, this CPU does not run it", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="twocats-prebuild-") as cache:
            env = {**os.environ, "NUMBA_CPU_NAME": level, "NUMBA_CPU_FEATURES": ""}
            env |= {"TWOCATS_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache, aot.AOT_ENV: "1"}
            command = [sys.executable, "-m", "twocats.simd.aotbuild", "--level", level]
            command += ["--out", str(args.out)]
            if subprocess.run(command, env=env, check=False).returncode != 0:
                return 1
        print(f"{level}: built", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
