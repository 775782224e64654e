"""Write the fill kernels a platform wheel carries: ``python -m twocats.kdf.fill.prebuild``.

Usage::

    python -m twocats.kdf.fill.prebuild   # every x86-64 level this CPU runs; then python -m build

Each kernel is built by :func:`twocats.kdf.fill.aot.build_fill` into
:data:`twocats.simd.aot.PREBUILT_DIR`, one child process per x86-64 level
(:func:`twocats.simd.aotbuild.build_levels`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from twocats.kdf.fill.aot import build_fill
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.warmup import kernels_for
from twocats.profiles import BUILT_IN
from twocats.simd import aot
from twocats.simd.isa import X86_64_LEVELS

__all__ = ["main", "prebuilt_kernels"]


def prebuilt_kernels() -> list[FillKey]:
    """Return the fill kernels of the built-in profiles on the simd backend (a wheel's set)."""
    found: dict[FillKey, None] = {}
    for params in BUILT_IN:
        for kernel in kernels_for(params, "simd"):
            found[kernel.key] = None
    return list(found)


def main(argv: list[str] | None = None) -> int:
    """``python -m twocats.kdf.fill.prebuild``: write the fill artefacts a platform wheel carries.

    For each level of :data:`twocats.simd.isa.X86_64_LEVELS` this CPU runs, a child process with
    numba targeting that level builds the built-in profiles' fill kernels into
    :data:`twocats.simd.aot.PREBUILT_DIR`.  Run it before ``python -m build``.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m twocats.kdf.fill.prebuild", description=main.__doc__
    )
    levels = [level for level, _flags in X86_64_LEVELS]
    parser.add_argument("--level", choices=levels, help="build here; numba must target LEVEL")
    parser.add_argument("--out", type=Path, default=aot.PREBUILT_DIR, help="target folder")
    args = parser.parse_args(argv)
    if not args.level:
        from twocats.simd.aotbuild import build_levels

        return build_levels([sys.executable, "-m", "twocats.kdf.fill.prebuild"], args.out)
    for key in prebuilt_kernels():
        if build_fill(key, args.level, args.out) is None:
            print(f"cannot build {key.name} here", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
