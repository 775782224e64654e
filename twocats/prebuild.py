"""Write the kernels a platform wheel carries: ``python -m twocats.prebuild``.

Usage::

    python -m twocats.prebuild   # every x86-64 level this CPU runs; then python -m build

The fill kernels of the built-in profiles and the lane schedulers of the lane primitives, each
built by its registration (:mod:`twocats.kdf.fill.aot`, :mod:`twocats.lanes.aot`) into
:data:`twocats.simd.aot.PREBUILT_DIR`, one child process per x86-64 level
(:func:`twocats.simd.aotbuild.build_levels`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from twocats.kdf.fill.aot import build_fill
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.warmup import kernels_for
from twocats.lanes.aot import LANES, LaneKey
from twocats.lanes.primitives import PRIMITIVES
from twocats.profiles import BUILT_IN
from twocats.simd import aot
from twocats.simd.isa import X86_64_LEVELS

__all__ = ["main", "prebuilt_kernels", "prebuilt_lanes"]


def prebuilt_kernels() -> list[FillKey]:
    """Return the fill kernels of the built-in profiles on the simd backend (a wheel's set)."""
    found: dict[FillKey, None] = {}
    for params in BUILT_IN:
        for kernel in kernels_for(params, "simd"):
            found[kernel.key] = None
    return list(found)


def prebuilt_lanes() -> list[LaneKey]:
    """Return the lane schedulers of the lane primitives on the simd backend (a wheel's set)."""
    return [LaneKey(name, "simd") for name in PRIMITIVES]


def main(argv: list[str] | None = None) -> int:
    """``python -m twocats.prebuild``: write the artefacts a platform wheel carries.

    For each level of :data:`twocats.simd.isa.X86_64_LEVELS` this CPU runs, a child process with
    numba targeting that level builds the built-in profiles' fill kernels and the lane schedulers
    into :data:`twocats.simd.aot.PREBUILT_DIR`.  Run it before ``python -m build``.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m twocats.prebuild", description=main.__doc__)
    levels = [level for level, _flags in X86_64_LEVELS]
    parser.add_argument("--level", choices=levels, help="build here; numba must target LEVEL")
    parser.add_argument("--out", type=Path, default=aot.PREBUILT_DIR, help="target folder")
    args = parser.parse_args(argv)
    if not args.level:
        from twocats.simd.aotbuild import build_levels

        return build_levels("twocats.prebuild", args.out)
    from twocats.simd import aotcompile

    built = [build_fill(key, args.level, args.out) for key in prebuilt_kernels()]
    built += [aotcompile.build(LANES, key, args.level, args.out) for key in prebuilt_lanes()]
    if None in built:
        print(
            "cannot build these kernels here (an untested numba or an unnamed CPU)", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
