"""Instruction-set levels: the one place that names ISA tiers and builds a child's ISA recipe.

numba chooses the instruction set once per process, from environment variables read before it
compiles anything (spec numba-simd.md §3.2), so every level runs in a child process of its own, with
its own recipe:

=========== ================================================================= =========
level       recipe (set in the child's environment)                           backend
=========== ================================================================= =========
avx512      nothing: numba's host default (the CPU's tuning picks the width)  simd
avx512-zmm  the host features plus ``-prefer-256-bit``: 512-bit vectors       simd
avx2        the host features with every ``avx512*`` feature switched off     simd
sse4.2      the host features with every AVX-family feature switched off      simd
sse2        ``NUMBA_CPU_NAME=x86-64`` and an empty feature string (baseline)  simd
none        the host ISA, every vectorizer off                                scalar
=========== ================================================================= =========

Importing this module imports neither numba nor llvmlite (:func:`host_target` imports llvmlite).
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from twocats.exceptions import InvalidParametersError

__all__ = [
    "LEVELS",
    "LEVELS_BY_KEY",
    "MATRIX_LEVELS",
    "TIERS",
    "IsaLevel",
    "available_levels",
    "best_tier",
    "default_levels",
    "enabled_features",
    "features_tier",
    "get_level",
    "host_target",
    "level_env",
]


@dataclasses.dataclass(frozen=True)
class IsaLevel:
    """One instruction-set level of the matrix: how its child process is configured and checked.

    ``rank`` is the highest instruction class its kernels may use (0 scalar, 1 SSE2, 2 SSE4.2 and
    older SSE, 3 AVX/AVX2, 4 AVX-512); ``required`` names the host features the level needs.
    """

    key: str
    label: str
    backend: str
    rank: int
    required: tuple[str, ...]
    x86_only: bool = True


LEVELS: Final = (
    IsaLevel("avx512", "AVX-512", "simd", 4, ("avx512f", "avx512vl", "avx512bw")),
    IsaLevel("avx512-zmm", "AVX-512 zmm", "simd", 4, ("avx512f", "avx512vl", "avx512bw")),
    IsaLevel("avx2", "AVX2", "simd", 3, ("avx2",)),
    IsaLevel("sse4.2", "SSE4.2", "simd", 2, ("sse4.2",)),
    IsaLevel("sse2", "SSE2 (x86-64)", "simd", 1, ()),
    IsaLevel("none", "no vectors", "scalar", 4, (), x86_only=False),
    IsaLevel("native", "host default", "simd", 4, (), x86_only=False),
)

#: The levels by key.
LEVELS_BY_KEY: Final = {level.key: level for level in LEVELS}

#: The levels a full matrix runs on an x86-64 host with AVX-512, best first.
MATRIX_LEVELS: Final = ("avx512", "avx512-zmm", "avx2", "sse4.2", "sse2", "none")

# Features switched off for the SSE4.2 level besides every "avx*" one: each implies AVX (numba's own
# NUMBA_ENABLE_AVX=0 misses them, numba-simd.md §3.2).
_AVX_IMPLYING: Final = ("fma", "fma4", "f16c", "vaes", "vpclmulqdq", "xop", "sha512", "sm3", "sm4")


def _is_x86() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


def host_target() -> tuple[str, str]:
    """Return the host CPU name and LLVM feature string (imports llvmlite, not numba)."""
    import llvmlite.binding as llvm

    return str(llvm.get_host_cpu_name()), str(llvm.get_host_cpu_features().flatten())


def enabled_features(features: str) -> set[str]:
    """Return the names of the features an LLVM feature string switches on."""
    return {item[1:] for item in features.split(",") if item.startswith("+")}


def _switch_off(features: str, off: Callable[[str], bool]) -> str:
    """Return ``features`` with every enabled feature for which ``off(name)`` holds disabled."""
    items = []
    for item in features.split(","):
        if item.startswith("+") and off(item[1:]):
            item = "-" + item[1:]
        items.append(item)
    return ",".join(items)


def get_level(key: str) -> IsaLevel:
    """Return the level called ``key``; InvalidParametersError names the levels otherwise."""
    try:
        return LEVELS_BY_KEY[key]
    except KeyError:
        allowed = ", ".join(LEVELS_BY_KEY)
        raise InvalidParametersError(f"level must be one of {allowed}; got {key!r}") from None


def available_levels(host_features: str, keys: Iterable[str] = MATRIX_LEVELS) -> list[IsaLevel]:
    """Return the levels of ``keys`` this host can run (an x86 level needs an x86-64 host)."""
    enabled = enabled_features(host_features)
    levels = []
    for key in keys:
        level = get_level(key)
        if level.x86_only and not _is_x86():
            continue
        if all(feature in enabled for feature in level.required):
            levels.append(level)
    return levels


def default_levels(host_features: str) -> list[IsaLevel]:
    """Return the short run's levels: the best SIMD level, SSE2 and none (elsewhere: host, none)."""
    if not _is_x86():
        return [get_level("native"), get_level("none")]
    best = available_levels(host_features, ("avx512", "avx2", "sse4.2"))[:1]
    return [*best, get_level("sse2"), get_level("none")]


def level_env(level: IsaLevel, host_features: str, cache_dir: Path) -> dict[str, str]:
    """Return the environment variables that put a child process at ``level``.

    ``cache_dir`` becomes the child's kernel cache (``TWOCATS_CACHE_DIR`` and ``NUMBA_CACHE_DIR``).
    """
    env = {"TWOCATS_CACHE_DIR": str(cache_dir), "NUMBA_CACHE_DIR": str(cache_dir / "numba")}
    key = level.key
    if key == "avx512-zmm":
        env["NUMBA_CPU_FEATURES"] = host_features + ",-prefer-256-bit"
    elif key == "avx2":
        env["NUMBA_CPU_FEATURES"] = _switch_off(
            host_features, lambda name: name.startswith(("avx512", "avx10", "amx-avx512"))
        )
    elif key == "sse4.2":
        env["NUMBA_CPU_FEATURES"] = _switch_off(
            host_features,
            lambda name: name.startswith(("avx", "amx")) or name in _AVX_IMPLYING,
        )
    elif key == "sse2":
        # numba keeps the host features for every CPU name but "generic" unless told otherwise.
        env["NUMBA_CPU_NAME"] = "x86-64"
        env["NUMBA_CPU_FEATURES"] = ""
    elif key == "none":
        # The scalar backend compiles with both vectorizers off whatever the environment says;
        # the variables keep any other numba code of the child scalar as well.
        env["NUMBA_LOOP_VECTORIZE"] = "0"
        env["NUMBA_SLP_VECTORIZE"] = "0"
    return env


#: The ISA tiers recognised in an LLVM feature string, best first: (name, features that must be on).
TIERS: Final = (
    ("AVX-512", ("avx512f", "avx512vl", "avx512bw")),
    ("AVX2", ("avx2",)),
    ("AVX", ("avx",)),
    ("SSE4.2", ("sse4.2",)),
    ("SSSE3", ("ssse3",)),
    ("SSE2", ("sse2",)),
)


def best_tier(features: str) -> str | None:
    """Name the best tier of :data:`TIERS` that an LLVM feature string enables, or None."""
    enabled = enabled_features(features)
    for tier, required in TIERS:
        if all(feature in enabled for feature in required):
            return tier
    return None


def features_tier(cpu_name: str, features: str) -> str:
    """Name the best ISA tier a CPU name and LLVM feature string allow, e.g. ``"AVX2"``."""
    tier = best_tier(features)
    if tier is not None:
        return tier
    if not features and cpu_name in ("x86-64", "generic"):
        return "SSE2"
    return f"baseline of {cpu_name}"
