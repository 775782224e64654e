"""``twocats bench``: the TwoCats fill rate at each instruction-set level, measured on this machine.

numba chooses the instruction set once per process, from environment variables read before it
compiles anything (spec numba-simd.md §3.2), so every level runs in a child process of its own, with
its own kernel cache directory and its own recipe:

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

Each child reports the CPU name and feature string its compiler really used and the assembly of
every fill kernel it compiled; :func:`verify_level` checks both against the level.  The assembly is
classified by :func:`profile_asm`: vector arithmetic by register width, AVX-512-only (EVEX)
instructions, VEX-encoded instructions, SSE instructions newer than SSE2, and scalar extensions
newer than the x86-64 baseline (BMI, MOVBE, POPCNT).

The same machinery drives the full trade-off matrix of the repository's ``bench`` folder
(``python -m bench matrix --full``); this command runs a short version of it.  Importing this
module imports neither numpy nor numba: the children do the work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import click

from twocats.cli._common import Failure, emit_json, info, json_option
from twocats.cli.tune import load_average
from twocats.params import DIGEST_SIZES, HASH_TYPES

__all__ = [
    "LEVELS",
    "AsmProfile",
    "Cell",
    "ChildError",
    "IsaLevel",
    "LevelProcess",
    "available_levels",
    "bench_command",
    "format_size",
    "format_table",
    "host_target",
    "level_env",
    "profile_asm",
    "project_cache_root",
    "run_level",
    "run_levels",
    "verify_level",
    "worker_main",
]

#: The password, salt and data every benchmark derivation uses (public constants, as in the
#: PHC mailing-list vectors, so outputs can be compared across levels and with published vectors).
BENCH_PASSWORD: Final = b"password"
BENCH_SALT: Final = b"salt"

#: Timed rounds per cell.  A round is one call, or several (at most MAX_CALLS_PER_ROUND) when one
#: call is shorter than MIN_CELL_SECONDS / rounds; the time of a round is seconds per call.
DEFAULT_REPEATS: Final = 5
MIN_CELL_SECONDS: Final = 0.5
MAX_CALLS_PER_ROUND: Final = 50

#: The memory cost of the calls that compile the kernels before anything is timed (256 KiB).
_COMPILE_MEM_COST: Final = 8


# -- instruction-set levels ------------------------------------------------------------------------


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

_LEVELS_BY_KEY: Final = {level.key: level for level in LEVELS}

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


def _enabled(features: str) -> set[str]:
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
    """Return the level called ``key``."""
    try:
        return _LEVELS_BY_KEY[key]
    except KeyError:
        allowed = ", ".join(_LEVELS_BY_KEY)
        raise click.BadParameter(f"level must be one of {allowed}; got {key!r}") from None


def available_levels(host_features: str, keys: Iterable[str] = MATRIX_LEVELS) -> list[IsaLevel]:
    """Return the levels of ``keys`` this host can run (an x86 level needs an x86-64 host)."""
    enabled = _enabled(host_features)
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


def features_tier(cpu_name: str, features: str) -> str:
    """Name the best ISA tier a CPU name and LLVM feature string allow, e.g. ``"AVX2"``."""
    enabled = _enabled(features)
    tiers = (
        ("AVX-512", ("avx512f", "avx512vl", "avx512bw")),
        ("AVX2", ("avx2",)),
        ("AVX", ("avx",)),
        ("SSE4.2", ("sse4.2",)),
        ("SSSE3", ("ssse3",)),
        ("SSE2", ("sse2",)),
    )
    for tier, required in tiers:
        if all(feature in enabled for feature in required):
            return tier
    if not features and cpu_name in ("x86-64", "generic"):
        return "SSE2"
    return f"baseline of {cpu_name}"


# -- assembly classification -----------------------------------------------------------------------

_VREG = re.compile(r"%([xyz])mm(\d+)")
_MASK_REG = re.compile(r"%k[0-7]\b")
# A general-purpose register as a whole operand (not inside a memory reference).
_GPR_OPERAND = re.compile(r"^%(?:r[a-z0-9]+|e[a-z]{2})$")

# Packed (vector) arithmetic, logic, shifts, rotates, shuffles and compares, after an optional "v".
_VECTOR_OP = re.compile(
    r"^v?(?:"
    r"p(?:add|sub|mul|max|min|avg|abs|sign|sad|madd|cmp|and|or|xor|sll|srl|sra|rol|ror|shuf|"
    r"alignr|unpck|ack|blend|erm|ternlog|hadd|hsub|conflict|lzcnt|opcnt|multishift|dp|shld|shrd|"
    r"compress|expand|test)\w*"
    r"|(?:add|sub|mul|div|max|min|sqrt|and|andn|or|xor|shuf|unpckl|unpckh|blend|blendv)p[sd]"
    r"|vfn?m(?:add|sub)\w*p[sd]"
    r"|(?:perm|shuf[if]|align[dq])\w*"
    r")$"
)

# Register-zeroing and all-ones idioms: same register in every operand, no arithmetic meant.
_IDIOMS: Final = frozenset(
    {
        "pxor",
        "vpxor",
        "vpxord",
        "vpxorq",
        "xorps",
        "vxorps",
        "xorpd",
        "vxorpd",
        "pcmpeqd",
        "vpcmpeqd",
        "psubd",
        "vpsubd",
        "vpternlogd",
        "vpternlogq",
    }
)

# Instructions that exist only with AVX-512 (EVEX) encodings.
_EVEX_ONLY = re.compile(
    r"^(?:v(?:pro[lr]v?[dq]|pternlog[dq]|perm[it]2\w+|p(?:and|andn|or|xor)[dq]|"
    r"movdq[au](?:8|16|32|64)|pmov(?:s|us)?(?:qd|qw|qb|dw|db|wb)|"
    r"(?:extract|insert)[if](?:32x4|32x8|64x2|64x4)|shuf[if](?:32x4|64x2)|"
    r"broadcast[if](?:32x2|32x4|32x8|64x2|64x4)|pcompress[bwdq]|pexpand[bwdq]|pabsq|"
    r"pm(?:ax|in)[su]q|pmullq|psraq|psravq|pconflict[dq]|plzcnt[dq]|popcnt[bwdq]|"
    r"pmultishiftqb|psh[lr]dv?[wdq]|pbroadcastm\w+|pmovm2[bwdq]|pmov[bwdq]2m|pcmpu?[bwdq]|"
    r"ptestn?m[bwdq]|scalef\w+|getexp\w+|rndscale\w+|fixupimm\w+|rcp14\w+|rsqrt14\w+)"
    r"|k(?:mov|and|andn|or|xor|xnor|not|shift[lr]|test|ortest|add|unpck)[bwdq]\w*)$"
)

# SSE instructions newer than SSE2 (SSE3, SSSE3, SSE4.1, SSE4.2) in their legacy (non-VEX) form.
_SSE_NEWER = re.compile(
    r"^(?:pshufb|palignr|ph(?:add|sub)(?:w|d|sw)|pabs[bwd]|psign[bwd]|pmaddubsw|pmulhrsw|"
    r"pmulld|pmuldq|pm(?:in|ax)(?:ud|uw|sb|sd)|pblendw|pblendvb|blendv?p[sd]|pextr[bdq]|"
    r"pinsr[bdq]|pmov[sz]x\w+|ptest|pcmpeqq|pcmpgtq|packusdw|round[ps][sd]|insertps|extractps|"
    r"dpp[sd]|mpsadbw|phminposuw|movntdqa|pcmp[ei]str[im]|lddqu|movs[hl]dup|movddup|"
    r"add(?:sub)?p[sd]|h(?:add|sub)p[sd])$"
)

# Scalar instructions newer than the x86-64 baseline (BMI1, BMI2, LZCNT, MOVBE, POPCNT, ADX).
_SCALAR_EXT = re.compile(
    r"^(?:rorx|shlx|shrx|sarx|mulx|pdep|pext|bzhi|andn|blsr|blsi|blsmsk|tzcnt|bextr|lzcnt|"
    r"movbe|popcnt|adcx|adox)[bwlq]?$"
)

#: Instruction-class ranks, as in :attr:`IsaLevel.rank`.
RANK_NAMES: Final = ("scalar", "SSE2", "SSE4.2", "AVX2", "AVX-512")


@dataclasses.dataclass
class AsmProfile:
    """Instruction counts of one or more kernels' assembly, by the classes that tell ISAs apart."""

    vector_ops: dict[str, int] = dataclasses.field(
        default_factory=lambda: {"xmm": 0, "ymm": 0, "zmm": 0}
    )
    evex_only: int = 0
    vex: int = 0
    sse_newer: int = 0
    scalar_ext: int = 0
    instructions: int = 0
    examples: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    @property
    def vectorized(self) -> bool:
        """True if any vector arithmetic is present."""
        return sum(self.vector_ops.values()) > 0

    @property
    def rank(self) -> int:
        """The highest instruction class present (see :data:`RANK_NAMES`)."""
        if self.evex_only:
            return 4
        if self.vex:
            return 3
        if self.sse_newer:
            return 2
        return 1 if self.vectorized else 0

    @property
    def widest(self) -> str:
        """The widest register used by vector arithmetic ("zmm", "ymm", "xmm") or "scalar"."""
        for width in ("zmm", "ymm", "xmm"):
            if self.vector_ops[width]:
                return width
        return "scalar"

    def merge(self, other: AsmProfile) -> None:
        """Add the counts of ``other`` to this profile."""
        for width, count in other.vector_ops.items():
            self.vector_ops[width] += count
        self.evex_only += other.evex_only
        self.vex += other.vex
        self.sse_newer += other.sse_newer
        self.scalar_ext += other.scalar_ext
        self.instructions += other.instructions
        for kind, names in other.examples.items():
            for name in names:
                self._example(kind, name)

    def _example(self, kind: str, mnemonic: str) -> None:
        names = self.examples.setdefault(kind, [])
        if mnemonic not in names and len(names) < 8:
            names.append(mnemonic)

    def to_dict(self) -> dict[str, Any]:
        """Return the profile as a JSON-ready dict (with the derived rank and width)."""
        return {
            "vector_ops": dict(self.vector_ops),
            "evex_only": self.evex_only,
            "vex": self.vex,
            "sse_newer": self.sse_newer,
            "scalar_ext": self.scalar_ext,
            "instructions": self.instructions,
            "rank": RANK_NAMES[self.rank],
            "widest": self.widest,
            "examples": {kind: list(names) for kind, names in self.examples.items()},
        }


def profile_asm(asm: str) -> AsmProfile:
    """Classify the instructions of AT&T-syntax assembly text (as numba and LLVM print it)."""
    profile = AsmProfile()
    for raw in asm.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith(".") or line.endswith(":"):
            continue
        mnemonic, _, operands = line.partition("\t" if "\t" in line else " ")
        mnemonic = mnemonic.strip().lower()
        operands = operands.strip()
        if mnemonic.startswith("{"):
            continue
        profile.instructions += 1
        vregs = _VREG.findall(operands)
        if _SCALAR_EXT.match(mnemonic) and not vregs:
            profile.scalar_ext += 1
            profile._example("scalar_ext", mnemonic)
        evex = bool(
            _EVEX_ONLY.match(mnemonic)
            or _MASK_REG.search(operands)
            or "{1to" in operands
            or any(width == "z" or int(number) >= 16 for width, number in vregs)
            or (
                mnemonic.startswith("vpbroadcast")
                and _GPR_OPERAND.match(operands.split(",")[0].strip())
            )
        )
        if evex:
            profile.evex_only += 1
            profile._example("evex_only", mnemonic)
        elif mnemonic.startswith("v") and (vregs or mnemonic == "vzeroupper"):
            profile.vex += 1
            profile._example("vex", mnemonic)
        elif _SSE_NEWER.match(mnemonic) and vregs:
            profile.sse_newer += 1
            profile._example("sse_newer", mnemonic)
        if not vregs or not _VECTOR_OP.match(mnemonic):
            continue
        if (
            mnemonic in _IDIOMS
            and len(vregs) == operands.count(",") + 1
            and len({f"{w}{n}" for w, n in vregs}) == 1
        ):
            continue
        width = max((w for w, _ in vregs), key="xyz".index) + "mm"
        profile.vector_ops[width] += 1
        profile._example(f"vector_{width}", mnemonic)
    return profile


def verify_level(
    level: IsaLevel, profile: AsmProfile, cpu_name: str, features: str
) -> dict[str, Any]:
    """Check a child's kernels and reported target against ``level``.

    ``verified`` means: the compiler's reported target is the level's, no instruction in the
    kernels is newer than the level allows, and the level's defining evidence is present (AVX-512
    instructions for the AVX-512 levels, 512-bit vectors for avx512-zmm, no vector arithmetic at all
    for "none", no scalar extension for the x86-64 baseline).  ``vectorized`` tells, separately,
    whether the vectorizer produced any vector arithmetic.
    """
    problems: list[str] = []
    tier = features_tier(cpu_name, features)
    expected_tier = {
        "avx512": "AVX-512",
        "avx512-zmm": "AVX-512",
        "avx2": "AVX2",
        "sse4.2": "SSE4.2",
        "sse2": "SSE2",
    }.get(level.key)
    if expected_tier is not None and tier != expected_tier:
        problems.append(f"compiler target is {tier}, expected {expected_tier}")
    if level.key == "avx512-zmm" and "-prefer-256-bit" not in features.split(","):
        problems.append("compiler target still prefers 256-bit vectors")
    if profile.rank > level.rank:
        problems.append(f"kernels use {RANK_NAMES[profile.rank]} instructions, above {level.label}")
    if level.key in ("avx512", "avx512-zmm") and profile.rank < 4:
        problems.append("kernels contain no AVX-512 instruction")
    if level.key == "avx512-zmm" and not profile.vector_ops["zmm"]:
        problems.append("kernels contain no 512-bit vector arithmetic")
    if level.key == "sse2" and profile.scalar_ext:
        problems.append("kernels use scalar instructions newer than x86-64")
    if level.key == "none" and profile.vectorized:
        problems.append("kernels contain vector arithmetic")
    if level.key == "avx2" and profile.vectorized and not profile.vector_ops["ymm"]:
        problems.append("vector arithmetic stays 128-bit")
    return {
        "verified": not problems and profile.instructions > 0,
        "problems": problems if profile.instructions else ["no kernel assembly was available"],
        "features_tier": tier,
        "asm_rank": RANK_NAMES[profile.rank],
        "vectorized": profile.vectorized,
        "widest": profile.widest,
    }


def describe_check(check: dict[str, Any]) -> str:
    """Summarise a verification result, e.g. ``ok: AVX2 code, widest vector ymm``."""
    if not check["verified"]:
        return "FAILED: " + "; ".join(check["problems"])
    if not check["vectorized"]:
        return "ok: no vector arithmetic"
    return f"ok: {check['asm_rank']} code, widest vector {check['widest']}"


# -- cells and the child process -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cell:
    """One measured configuration.  ``fresh`` allocates the work memory anew for every call."""

    hash_type: str = "blake2s"
    lanes: int = 8
    multiplies: int = 2
    mem_cost: int = 20
    parallelism: int = 1
    variant: str = "2015"
    fresh: bool = False

    @property
    def memory_bytes(self) -> int:
        """Work memory in bytes (``1024 << mem_cost``)."""
        return 1024 << self.mem_cost

    def label(self) -> str:
        """A short human-readable name."""
        fresh = ", fresh memory" if self.fresh else ""
        variant = "" if self.variant == "2015" else f"{self.variant} "
        return (
            f"{variant}{self.hash_type} L={self.lanes} M={self.multiplies} "
            f"{format_size(self.memory_bytes)} p={self.parallelism}{fresh}"
        )

    def params(self) -> Any:
        """Return the :class:`twocats.params.Params` of this cell."""
        from twocats.params import Params

        extra: dict[str, Any] = {"hash_size": 32} if self.variant == "2014-03" else {}
        return Params(
            variant=self.variant,
            hash_type=self.hash_type,
            mem_cost=self.mem_cost,
            lanes=self.lanes,
            multiplies=self.multiplies,
            parallelism=self.parallelism,
            **extra,
        )


def format_size(nbytes: int) -> str:
    """Write a power-of-two byte count as KiB, MiB or GiB."""
    if nbytes >= 1 << 30:
        return f"{nbytes >> 30} GiB"
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _kernel_asm(dispatcher: Any) -> tuple[str, str]:
    """Return the assembly of every compiled signature of a kernel and how it was obtained.

    numba refuses to print kernels loaded from its disk cache; for those, the cached optimised LLVM
    module is compiled to assembly again by the process's own target machine (the one that
    produced the cached machine code).
    """
    texts = []
    method = "compiled"
    for signature in dispatcher.signatures:
        library = dispatcher.overloads[signature].library
        if getattr(library, "_disable_inspection", False):
            method = "cached-ir"
            texts.append(str(library._codegen._tm.emit_assembly(library._shared_module)))
        else:
            texts.append(str(dispatcher.inspect_asm(signature)))
    return "\n".join(texts), method


def _compile_params(lanes: int, variant: str) -> Any:
    """Return small parameters that compile the fill kernel for ``lanes`` lanes."""
    from twocats.params import Params

    hash_type = "blake2s" if lanes <= DIGEST_SIZES[0] // 4 else "blake2b"
    extra: dict[str, Any] = {"hash_size": 32} if variant == "2014-03" else {}
    return Params(
        variant=variant,
        hash_type=hash_type,
        mem_cost=_COMPILE_MEM_COST,
        lanes=lanes,
        parallelism=1,
        **extra,
    )


def _rusage() -> tuple[float, float, int]:
    try:
        import resource
    except ImportError:  # pragma: no cover - platforms without the resource module
        return 0.0, 0.0, 0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime, usage.ru_minflt


class _Worker:
    """The child's side: compiles the kernels, then times cells one request at a time."""

    def __init__(self) -> None:
        from twocats.kdf import Engine

        self._engine_class = Engine
        self.engine: Any = None
        self.backend = "simd"

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Carry out one request (see :class:`LevelProcess`) and return its reply."""
        op = request["op"]
        if op == "setup":
            return self.setup(str(request["backend"]), [int(n) for n in request["lanes"]])
        if op == "exit":
            return {}
        if op == "release":
            self.engine.release()
            return {}
        cell = Cell(**request["cell"])
        if op == "prepare":
            started = time.perf_counter()
            output = self.call(cell)
            return {"first_s": time.perf_counter() - started, "output": output.hex()}
        if op == "time":
            count = int(request["count"])
            u0, s0, f0 = _rusage()
            started = time.perf_counter()
            for _ in range(count):
                self.call(cell)
            elapsed = time.perf_counter() - started
            u1, s1, f1 = _rusage()
            return {
                "seconds": elapsed / count,
                "user_s": (u1 - u0) / count,
                "sys_s": (s1 - s0) / count,
                "minor_faults": (f1 - f0) // count,
            }
        raise ValueError(f"unknown request {op!r}")

    def call(self, cell: Cell) -> bytes:
        """Derive once with ``cell``'s parameters (on a new engine when it wants fresh memory)."""
        engine = self._engine_class(self.backend) if cell.fresh else self.engine
        result: bytes = engine.derive(BENCH_PASSWORD, BENCH_SALT, cell.params())
        return result

    def setup(self, backend: str, lanes_list: list[int]) -> dict[str, Any]:
        """Compile the fill kernel of every lane count and disassemble them."""
        from numba.core.registry import cpu_target

        from twocats.simd.fill import fill_kernel

        self.backend = backend
        self.engine = self._engine_class(backend)
        _triple, cpu_name, features = cpu_target.target_context.codegen().magic_tuple()
        compile_s: dict[str, float] = {}
        combined = AsmProfile()
        per_lanes: dict[str, Any] = {}
        methods = set()
        for lanes in lanes_list:
            started = time.perf_counter()
            params = _compile_params(lanes, "2015")
            self.engine.derive(BENCH_PASSWORD, BENCH_SALT, params)
            compile_s[str(lanes)] = time.perf_counter() - started
            asm, method = _kernel_asm(fill_kernel(lanes, backend, params.hash_code))
            methods.add(method)
            profile = profile_asm(asm)
            per_lanes[str(lanes)] = profile.to_dict()
            combined.merge(profile)
        self.engine.release()
        return {
            "cpu_name": cpu_name,
            "features": features,
            "compile_s": compile_s,
            "asm": {
                "method": "+".join(sorted(methods)),
                "combined": combined.to_dict(),
                "per_lanes": per_lanes,
            },
            "profile": dataclasses.asdict(combined),
        }


def worker_main() -> None:
    """Entry point of a child process: answer one JSON request per line of stdin on stdout."""
    worker = _Worker()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = worker.handle(request)
        except Exception as error:  # the parent reports it and stops using this child
            reply = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if request["op"] == "exit":
            return


class ChildError(RuntimeError):
    """A level's child process died or could not carry out a request."""


class LevelProcess:
    """A child process at one ISA level that compiles and times cells on request.

    Requests and replies are one JSON document per line: ``setup`` (compile and disassemble the
    kernels), ``prepare`` (one untimed call: compiles nothing more, maps the memory, returns the
    output), ``time`` (``count`` calls, returns seconds per call and resource usage), ``release``
    (free the work memory) and ``exit``.  The child's progress and errors go to this process's
    standard error.
    """

    def __init__(self, level: IsaLevel, host_features: str, cache_dir: Path) -> None:
        self.level = level
        self.env = level_env(level, host_features, cache_dir)
        command = [sys.executable, "-c", "from twocats.cli.bench import worker_main; worker_main()"]
        self._process = subprocess.Popen(
            command, env={**os.environ, **self.env}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return the reply; raise :class:`ChildError` on any failure."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        try:
            stdin.write(json.dumps({"op": op, **fields}) + "\n")
            stdin.flush()
            line = stdout.readline()
        except OSError as error:
            raise ChildError(f"{self.level.key}: child process is gone ({error})") from None
        if not line:
            status = self._process.wait()
            raise ChildError(f"child process exited with status {status}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise ChildError(str(reply["error"]))
        return reply

    @property
    def returncode(self) -> int | None:
        """The child's exit status, or None while it runs."""
        return self._process.returncode

    def close(self) -> None:
        """Ask the child to exit and wait for it (kill it if it does not answer)."""
        with contextlib.suppress(ChildError):
            self.request("exit")
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def _cell_result(cell: Cell, first: dict[str, Any], rounds: list[dict[str, Any]]) -> dict[str, Any]:
    times = [float(entry["seconds"]) for entry in rounds]
    median = statistics.median(times)
    return {
        **dataclasses.asdict(cell),
        "memory_bytes": cell.memory_bytes,
        "first_s": first["first_s"],
        "calls_per_round": first["count"],
        "times_s": times,
        "median_s": median,
        "min_s": min(times),
        "max_s": max(times),
        "spread": (max(times) - min(times)) / median,
        "gbps": cell.memory_bytes / median / 1e9,
        "user_s": statistics.median(float(entry["user_s"]) for entry in rounds),
        "sys_s": statistics.median(float(entry["sys_s"]) for entry in rounds),
        "minor_faults": int(statistics.median(int(entry["minor_faults"]) for entry in rounds)),
        "load1": first["load1"],
        "output": first["output"],
    }


def run_levels(
    levels: Sequence[IsaLevel],
    cells: Sequence[Cell],
    *,
    host_features: str,
    cache_dir: Callable[[IsaLevel], Path],
    repeats: int = DEFAULT_REPEATS,
    min_seconds: float = MIN_CELL_SECONDS,
    first_level_cells: Sequence[Cell] = (),
) -> list[dict[str, Any]]:
    """Measure ``cells`` at every level, each level in a child process of its own.

    The children start and compile one after the other.  Then every cell is timed at all levels
    in rotation: one untimed call per level, then ``repeats`` rounds in which each level in turn
    runs the cell (several calls when one is shorter than ``min_seconds / repeats``).  A noisy
    neighbour on a shared machine then disturbs the levels alike, so a ratio between levels
    compares the same moments.  ``first_level_cells`` are measured by the first level only.
    Returns one verified result per level; a level whose child fails carries an ``error``.
    """
    results: list[dict[str, Any]] = []
    processes: dict[str, LevelProcess] = {}
    lanes = sorted({cell.lanes for cell in [*cells, *first_level_cells]})
    try:
        for level in levels:
            process = LevelProcess(level, host_features, cache_dir(level))
            result: dict[str, Any] = {
                "level": level.key, "label": level.label, "backend": level.backend,
                "env": process.env, "cells": [],
            }  # fmt: skip
            results.append(result)
            _progress(f"{level.label}: compiling the kernels for lanes {lanes} ...")
            try:
                setup = process.request("setup", backend=level.backend, lanes=lanes)
            except ChildError as error:
                result["error"] = str(error)
                process.close()
                continue
            profile = AsmProfile(**setup.pop("profile"))
            result.update(setup)
            result["check"] = verify_level(level, profile, setup["cpu_name"], setup["features"])
            processes[level.key] = process
            _progress(f"  {describe_check(result['check'])}; compile {setup['compile_s']} s")
        by_key = {result["level"]: result for result in results}
        jobs = [(cell, list(processes)) for cell in cells]
        jobs += [(cell, list(processes)[:1]) for cell in first_level_cells]
        # The largest memory first, so each child allocates its biggest buffer early.
        for cell, keys in sorted(jobs, key=lambda job: -job[0].memory_bytes):
            _time_cell(cell, [key for key in keys if key in processes], processes, by_key,
                       repeats, min_seconds)  # fmt: skip
    finally:
        for process in processes.values():
            process.close()
    return results


def _time_cell(
    cell: Cell,
    keys: list[str],
    processes: dict[str, LevelProcess],
    results: dict[str, dict[str, Any]],
    repeats: int,
    min_seconds: float,
) -> None:
    """Time one cell at the levels ``keys`` in rotation and append the results."""
    firsts: dict[str, dict[str, Any]] = {}
    rounds: dict[str, list[dict[str, Any]]] = {key: [] for key in keys}
    round_seconds = min_seconds / repeats

    def drop(key: str, error: ChildError) -> None:
        results[key]["error"] = str(error)
        processes.pop(key).close()

    for key in keys:
        try:
            load = load_average()
            first = processes[key].request("prepare", cell=dataclasses.asdict(cell))
        except ChildError as error:
            drop(key, error)
            continue
        count = max(
            1, min(MAX_CALLS_PER_ROUND, math.ceil(round_seconds / max(first["first_s"], 1e-6)))
        )
        firsts[key] = {**first, "count": count, "load1": load}
    for _ in range(repeats):
        for key in list(firsts):
            if key not in processes:
                continue
            try:
                reply = processes[key].request(
                    "time", cell=dataclasses.asdict(cell), count=firsts[key]["count"]
                )
            except ChildError as error:
                drop(key, error)
                continue
            rounds[key].append(reply)
    for key, first in firsts.items():
        if key not in processes:
            continue
        result = _cell_result(cell, first, rounds[key])
        results[key]["cells"].append(result)
        try:
            processes[key].request("release")
        except ChildError as error:
            drop(key, error)
        _progress(
            f"  [{key}] {cell.label()}: {result['gbps']:.2f} GB/s "
            f"(median {result['median_s']:.4f} s, spread {100 * result['spread']:.0f}%)"
        )


def run_level(
    level: IsaLevel,
    cells: Sequence[Cell],
    *,
    host_features: str,
    cache_dir: Path,
    repeats: int = DEFAULT_REPEATS,
    min_seconds: float = MIN_CELL_SECONDS,
) -> dict[str, Any]:
    """Measure ``cells`` at one level in a child process (see :func:`run_levels`)."""
    return run_levels(
        [level], cells, host_features=host_features, cache_dir=lambda _level: cache_dir,
        repeats=repeats, min_seconds=min_seconds,
    )[0]  # fmt: skip


def check_outputs(levels: Sequence[dict[str, Any]]) -> list[str]:
    """Return a message for every cell whose output differs between levels (bit-exactness)."""
    seen: dict[str, tuple[str, str]] = {}
    problems = []
    for level in levels:
        for cell in level.get("cells", []):
            key = json.dumps({k: cell[k] for k in dataclasses.asdict(Cell())}, sort_keys=True)
            first = seen.setdefault(key, (level["level"], cell["output"]))
            if first[1] != cell["output"]:
                problems.append(f"{level['level']} and {first[0]} differ on {key}")
    return problems


# -- tables ----------------------------------------------------------------------------------------

_CELL_FIELDS: Final = ("hash_type", "lanes", "multiplies", "mem_cost", "parallelism", "variant")


def _column_label(cell: dict[str, Any], varying: Sequence[str]) -> str:
    parts = []
    for name in varying:
        value = cell[name]
        if name == "lanes":
            parts.append(f"L={value}")
        elif name == "multiplies":
            parts.append(f"M={value}")
        elif name == "mem_cost":
            parts.append(format_size(1024 << int(value)))
        elif name == "parallelism":
            parts.append(f"p={value}")
        else:
            parts.append(str(value))
    return " ".join(parts) or "GB/s"


def format_table(levels: Sequence[dict[str, Any]], markdown: bool = False) -> str:
    """Return a table of GB/s with one row per level and one column per cell configuration."""
    cells = [cell for level in levels for cell in level.get("cells", [])]
    varying = [name for name in _CELL_FIELDS if len({cell[name] for cell in cells}) > 1]
    columns: list[str] = []
    for cell in cells:
        label = _column_label(cell, varying)
        if label not in columns:
            columns.append(label)
    header = ["level", "ISA check", *columns]
    rows = []
    for level in levels:
        values = {
            _column_label(cell, varying): f"{cell['gbps']:.2f}" for cell in level.get("cells", [])
        }
        check = level.get("error") or describe_check(level["check"])
        rows.append([level["label"], check, *(values.get(column, "-") for column in columns)])
    if markdown:
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        padded = (
            value.ljust(widths[i]) if i < 2 else value.rjust(widths[i])
            for i, value in enumerate(row)
        )
        out.append("  ".join(padded).rstrip())
    return "\n".join(out)


# -- the command -----------------------------------------------------------------------------------


def project_cache_root() -> Path:
    """Return the project's kernel cache root: ``$TWOCATS_CACHE_DIR``, else ``~/.cache/twocats``.

    Every level may share it: the project's cache keeps one folder per ISA and vectorizer mode.
    """
    configured = os.environ.get("TWOCATS_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "twocats"


@click.command("bench")
@click.option(
    "--level",
    "level_keys",
    multiple=True,
    type=click.Choice(list(_LEVELS_BY_KEY)),
    help="ISA level to run (repeatable; default: the best SIMD level of this CPU, sse2, none).",
)
@click.option(
    "--lanes",
    "lanes_list",
    multiple=True,
    type=click.IntRange(1, 16),
    default=(1, 8),
    show_default=True,
    help="Lane counts (repeatable).",
)
@click.option(
    "--multiplies",
    "multiplies_list",
    multiple=True,
    type=click.IntRange(0, 8),
    default=(2,),
    show_default=True,
    help="Multiply-chain lengths (repeatable).",
)
@click.option(
    "--mem-cost",
    "mem_costs",
    multiple=True,
    type=click.IntRange(10, 30),
    default=(20,),
    show_default=True,
    help="Memory costs: 2**MEM_COST KiB (repeatable; 20 is 1 GiB).",
)
@click.option(
    "--parallelism",
    "parallelisms",
    multiple=True,
    type=click.IntRange(1, 255),
    default=(1,),
    show_default=True,
    help="Regions filled on parallel threads (repeatable).",
)
@click.option(
    "--hash",
    "hash_type",
    type=click.Choice(HASH_TYPES),
    default="blake2s",
    show_default=True,
    help="Hash function (lanes above 8 need blake2b or sha512).",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 100),
    default=3,
    show_default=True,
    help="Timed calls per configuration (the median is shown).",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Kernel cache root (default: $TWOCATS_CACHE_DIR, else ~/.cache/twocats; it keeps one "
    "folder per ISA and vectorizer mode).",
)
@click.option("--cold", is_flag=True, help="Compile every kernel afresh in a temporary cache.")
@json_option
def bench_command(
    level_keys: tuple[str, ...],
    lanes_list: tuple[int, ...],
    multiplies_list: tuple[int, ...],
    mem_costs: tuple[int, ...],
    parallelisms: tuple[int, ...],
    hash_type: str,
    repeats: int,
    cache_dir: Path | None,
    cold: bool,
    as_json: bool,
) -> None:
    """Measure the TwoCats fill rate at each instruction-set level on this machine.

    Every level runs in its own process, compiled for that level (the first run of a level compiles
    its kernels, about a minute each), and its kernels' assembly is checked against the level.  The
    table shows GB/s of memory filled per derivation, on a reused buffer.
    """
    host_name, host_features = host_target()
    levels = [get_level(key) for key in level_keys] if level_keys else default_levels(host_features)
    unavailable = [
        level.key for level in levels if level not in available_levels(host_features, [level.key])
    ]
    if unavailable:
        raise click.BadParameter(
            f"this CPU cannot run {', '.join(unavailable)}", param_hint="--level"
        )
    words = DIGEST_SIZES[HASH_TYPES.index(hash_type)] // 4
    if any(lanes & (lanes - 1) for lanes in lanes_list):
        raise click.BadParameter("lanes must be 1, 2, 4, 8 or 16", param_hint="--lanes")
    if any(lanes > words for lanes in lanes_list):
        raise click.BadParameter(
            f"lanes must be from 1 to {words} for {hash_type}", param_hint="--lanes"
        )
    cells = [
        Cell(hash_type, lanes, multiplies, mem_cost, parallelism)
        for mem_cost in mem_costs
        for multiplies in multiplies_list
        for parallelism in parallelisms
        for lanes in lanes_list
    ]
    with tempfile.TemporaryDirectory(prefix="twocats-bench-") as temporary:
        root = Path(temporary) if cold else (cache_dir or project_cache_root())
        info(f"{len(cells)} configuration(s) at {len(levels)} level(s), each in its own process")
        results = run_levels(
            levels, cells, host_features=host_features,
            cache_dir=lambda level: root / level.key if cold else root, repeats=repeats,
        )  # fmt: skip
    mismatches = check_outputs(results)
    failed = [r["level"] for r in results if "error" in r or not r["check"]["verified"]]
    if as_json:
        emit_json(
            {
                "host": {"cpu_name": host_name, "machine": platform.machine()},
                "levels": results,
                "output_mismatches": mismatches,
            }
        )
    else:
        click.echo(
            f"TwoCats fill rate in GB/s of memory filled, median of {repeats} "
            f"({hash_type}, host {host_name}):"
        )
        click.echo(format_table(results))
        for message in mismatches:
            click.echo(f"output mismatch: {message}")
    if mismatches or failed:
        raise Failure("some levels failed their checks: " + ", ".join(failed or ["outputs"]))
