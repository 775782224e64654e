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
sve         nothing: numba's host default on an AArch64 CPU with SVE          simd
neon        the host features with every SVE and SME feature switched off     simd
none        the host ISA, every vectorizer off                                scalar
=========== ================================================================= =========

The x86 levels need an x86-64 host and the AArch64 ones (``sve``, ``neon``: Advanced SIMD) an
AArch64 host.  :func:`emulation` tells whether this process runs under an emulator such as
qemu-user, where the code can be checked but its speed means nothing.

Importing this module imports neither numba nor llvmlite (:func:`host_target` imports llvmlite).
"""

from __future__ import annotations

import dataclasses
import os
import platform
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from twocats.exceptions import InvalidParametersError
from twocats.simd.cache import AOT_ENV

__all__ = [
    "EMULATION_ENV",
    "LEVELS",
    "LEVELS_BY_KEY",
    "MATRIX_LEVELS",
    "TIERS",
    "VECTOR_BITS",
    "X86_64_BASELINE",
    "X86_64_LEVELS",
    "IsaLevel",
    "available_levels",
    "best_tier",
    "default_levels",
    "emulation",
    "enabled_features",
    "features_tier",
    "get_level",
    "host_arch",
    "host_target",
    "level_env",
]


@dataclasses.dataclass(frozen=True)
class IsaLevel:
    """One instruction-set level of the matrix: how its child process is configured and checked.

    ``rank`` is the highest instruction class its kernels may use, on its architecture's scale
    (x86: 0 scalar, 1 SSE2, 2 SSE4.2 and older SSE, 3 AVX/AVX2, 4 AVX-512; AArch64: 0 scalar,
    1 NEON, 2 SVE); ``required`` names the host features the level needs and ``arch`` the machine
    family it runs on ("x86_64", "aarch64", or None for any).
    """

    key: str
    label: str
    backend: str
    rank: int
    required: tuple[str, ...]
    arch: str | None = "x86_64"


LEVELS: Final = (
    IsaLevel("avx512", "AVX-512", "simd", 4, ("avx512f", "avx512vl", "avx512bw")),
    IsaLevel("avx512-zmm", "AVX-512 zmm", "simd", 4, ("avx512f", "avx512vl", "avx512bw")),
    IsaLevel("avx2", "AVX2", "simd", 3, ("avx2",)),
    IsaLevel("sse4.2", "SSE4.2", "simd", 2, ("sse4.2",)),
    IsaLevel("sse2", "SSE2 (x86-64)", "simd", 1, ()),
    IsaLevel("sve", "SVE", "simd", 2, ("sve",), arch="aarch64"),
    IsaLevel("neon", "NEON", "simd", 1, (), arch="aarch64"),
    IsaLevel("none", "no vectors", "scalar", 4, (), arch=None),
    IsaLevel("native", "host default", "simd", 4, (), arch=None),
)

#: The levels by key.
LEVELS_BY_KEY: Final = {level.key: level for level in LEVELS}

#: The bits of the vector registers the simd lane kernels are written for (AVX-512's).
VECTOR_BITS: Final = 512

#: The levels a full matrix runs, best first (each host runs those of its architecture).
MATRIX_LEVELS: Final = ("avx512", "avx512-zmm", "avx2", "sse4.2", "sse2", "sve", "neon", "none")

#: The x86-64 baseline's name, as LLVM and the psABI spell it (SSE2, no newer extension).
X86_64_BASELINE: Final = "x86-64"

# The /proc/cpuinfo flags of x86-64-v3 (AVX2); "abm" is how Linux names LZCNT.
_V3_FLAGS: Final = ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")

#: The x86-64 psABI levels that prebuilt artefacts are built for, best first, with the
#: ``/proc/cpuinfo`` flags each needs: AVX-512, AVX2 and the x86-64 baseline (SSE2).
X86_64_LEVELS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("x86-64-v4", (*_V3_FLAGS, "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
    ("x86-64-v3", _V3_FLAGS),
    (X86_64_BASELINE, ()),
)

#: The environment variable that declares an emulated run, naming the emulator (``qemu-user``).
EMULATION_ENV: Final = "TWOCATS_EMULATED"

# Features switched off for the SSE4.2 level besides every "avx*" one: each implies AVX (numba's own
# NUMBA_ENABLE_AVX=0 misses them, numba-simd.md §3.2).
_AVX_IMPLYING: Final = ("fma", "fma4", "f16c", "vaes", "vpclmulqdq", "xop", "sha512", "sm3", "sm4")


def host_arch() -> str:
    """Return the host's machine family: "x86_64", "aarch64" or what the platform names."""
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def emulation(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """Name the emulator this process runs under, or None on real hardware.

    The run says so in :data:`EMULATION_ENV`, or qemu-user gives itself away: it shows an AArch64
    process the host's own ``/proc/cpuinfo``, whose x86 ``vendor_id`` lines no ARM CPU has.
    """
    declared = os.environ.get(EMULATION_ENV, "").strip()
    if declared:
        return declared
    if host_arch() != "aarch64":
        return None
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 16)
    except OSError:
        return None
    return "qemu-user" if "\nvendor_id" in "\n" + text else None


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
    """Return the levels of ``keys`` this host can run (each needs a host of its ``arch``)."""
    enabled = enabled_features(host_features)
    levels = []
    for key in keys:
        level = get_level(key)
        if level.arch is not None and level.arch != host_arch():
            continue
        if all(feature in enabled for feature in level.required):
            levels.append(level)
    return levels


def default_levels(host_features: str) -> list[IsaLevel]:
    """Return the short run's levels: the best SIMD level, SSE2 on x86, and none.

    On AArch64 the best is SVE or NEON; on any other machine, the host default.
    """
    arch = host_arch()
    if arch == "aarch64":
        best = available_levels(host_features, ("sve", "neon"))[:1]
        return [*best, get_level("none")]
    if arch != "x86_64":
        return [get_level("native"), get_level("none")]
    best = available_levels(host_features, ("avx512", "avx2", "sse4.2"))[:1]
    return [*best, get_level("sse2"), get_level("none")]


def level_env(level: IsaLevel, host_features: str, cache_dir: Path) -> dict[str, str]:
    """Return the environment variables that put a child process at ``level``.

    ``cache_dir`` becomes the child's kernel cache (``TWOCATS_CACHE_DIR`` and ``NUMBA_CACHE_DIR``).
    The child compiles with numba and never loads an ahead-of-time artefact, whose machine code
    was built for the host and has no assembly to check.
    """
    env = {
        "TWOCATS_CACHE_DIR": str(cache_dir),
        "NUMBA_CACHE_DIR": str(cache_dir / "numba"),
        AOT_ENV: "0",
    }
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
        env["NUMBA_CPU_NAME"] = X86_64_BASELINE
        env["NUMBA_CPU_FEATURES"] = ""
    elif key == "neon" and host_features:
        env["NUMBA_CPU_FEATURES"] = _switch_off(
            host_features, lambda name: name.startswith(("sve", "sme"))
        )
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
    ("SVE2", ("sve2",)),
    ("SVE", ("sve",)),
    ("NEON", ("neon",)),
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
    if host_arch() == "aarch64" and "-neon" not in features.split(","):
        # Advanced SIMD is part of every AArch64 CPU, whether the feature string lists it or not.
        return "NEON"
    if not features and cpu_name in (X86_64_BASELINE, "generic"):
        return "SSE2"
    return f"baseline of {cpu_name}"
