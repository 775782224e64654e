"""The one assembly reader and classifier of the compiled kernels (tests, bench/ and the CLI).

Usage::

    from twocats.simd.asm import dispatcher_asm, profile_asm

    text, method = dispatcher_asm(kernel)     # every compiled signature of a numba kernel
    profile = profile_asm(text)               # instruction counts by ISA class
    profile.widest, profile.rank              # e.g. "zmm", 4 (AVX-512)

numba refuses to print kernels loaded from its disk cache; for those, the cached optimised LLVM
module is compiled to assembly again by the process's own target machine (the one that produced
the cached machine code), and ``method`` says "cached-ir" instead of "compiled".  The classifier
counts vector arithmetic by register width, AVX-512-only (EVEX) instructions, VEX-encoded
instructions, SSE instructions newer than SSE2, and scalar extensions newer than the x86-64
baseline (BMI, MOVBE, POPCNT).  Importing this module imports no numba.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Final

from twocats.simd.isa import IsaLevel, features_tier

__all__ = [
    "RANK_NAMES",
    "AsmProfile",
    "describe_check",
    "dispatcher_asm",
    "library_asm",
    "profile_asm",
    "vector_ops",
    "verify_level",
]


def library_asm(library: Any) -> tuple[str, str]:
    """Return the assembly of one numba code library and how it was obtained."""
    if getattr(library, "_disable_inspection", False):
        module = library._get_module_for_linking()
        return str(library._codegen._tm.emit_assembly(module)), "cached-ir"
    return str(library.get_asm_str()), "compiled"


def dispatcher_asm(dispatcher: Any) -> tuple[str, str]:
    """Return the assembly of every compiled signature of a numba kernel and how it was obtained."""
    texts = []
    methods = set()
    for signature in dispatcher.signatures:
        text, method = library_asm(dispatcher.overloads[signature].library)
        texts.append(text)
        methods.add(method)
    return "\n".join(texts), "+".join(sorted(methods))


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
    #: Every distinct vector arithmetic mnemonic, by register width.
    vector_mnemonics: dict[str, list[str]] = dataclasses.field(
        default_factory=lambda: {"xmm": [], "ymm": [], "zmm": []}
    )

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
        for width, names in other.vector_mnemonics.items():
            for name in names:
                self._vector_mnemonic(width, name)

    def wide_mnemonics(self) -> set[str]:
        """The vector arithmetic mnemonics on 256- and 512-bit registers."""
        return {*self.vector_mnemonics["ymm"], *self.vector_mnemonics["zmm"]}

    def _vector_mnemonic(self, width: str, mnemonic: str) -> None:
        names = self.vector_mnemonics[width]
        if mnemonic not in names:
            names.append(mnemonic)

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
        profile._vector_mnemonic(width, mnemonic)
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


def vector_ops(asm: str, width: str = "zmm") -> int:
    """Count the vector arithmetic instructions on ``width`` registers in ``asm``."""
    return profile_asm(asm).vector_ops[width]
