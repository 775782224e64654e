"""The one assembly reader and classifier of the compiled kernels (tests, bench/ and the CLI).

Usage::

    from twocats.simd.asm import dispatcher_asm, profile_asm

    text, method = dispatcher_asm(kernel)     # every compiled signature of a numba kernel
    profile = profile_asm(text)               # instruction counts by ISA class
    profile.widest, profile.rank              # e.g. "zmm", 4 (AVX-512)

numba refuses to print kernels loaded from its disk cache; for those, the cached optimised LLVM
module is compiled to assembly again by the process's own target machine (the one that produced
the cached machine code), and ``method`` says "cached-ir" instead of "compiled".  On x86 the
classifier counts vector arithmetic by register width, AVX-512-only (EVEX) instructions,
VEX-encoded instructions, SSE instructions newer than SSE2, and scalar extensions newer than the
x86-64 baseline (BMI, MOVBE, POPCNT).  On AArch64 it counts NEON (Advanced SIMD) arithmetic on
v-registers with a lane arrangement (``v0.4s``, ``v1.16b``) and SVE instructions (z- and
p-registers).  Which of the two a text is, is told by its registers.  Importing this module
imports no numba.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Final

from twocats.simd.isa import IsaLevel, features_tier

__all__ = [
    "AARCH64_RANK_NAMES",
    "RANK_NAMES",
    "AsmProfile",
    "describe_check",
    "dispatcher_asm",
    "is_aarch64",
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

# AArch64: a NEON register with a lane arrangement (v0.4s, v1.16b; not an element such as v0.s[1]),
# an SVE vector or predicate register (z0.s, p0/z, a bare z0 in a spill) or an SVE address.
_NEON_REG = re.compile(r"\bv(\d{1,2})\.\d+[bhsd]\b")
_SVE_OPERAND = re.compile(r"\b(?:[zp]\d{1,2}(?:\.[bhsdq]\b|/[zm])|z\d{1,2}\b|mul vl\b)")
# Any AArch64 register operand (tells an AArch64 text from an x86 one, whose registers start "%").
_A64_REG = re.compile(r"(?:^|[\s,\[{])(?:[wx](?:\d{1,2}|zr)|sp|[qdsbh]\d{1,2}|v\d{1,2}\.)")
# AArch64 data movement on vector registers: loads, stores, moves, broadcasts, constants.
_A64_MOVES: Final = frozenset(
    {"mov", "movi", "mvni", "dup", "ins", "umov", "smov", "fmov", "ptrue", "pfalse"}
)
_A64_MEMORY = re.compile(r"^(?:ld|st|prf)")

#: Instruction-class ranks, as in :attr:`IsaLevel.rank` (x86).
RANK_NAMES: Final = ("scalar", "SSE2", "SSE4.2", "AVX2", "AVX-512")

#: Instruction-class ranks on AArch64.
AARCH64_RANK_NAMES: Final = ("scalar", "NEON", "SVE")


@dataclasses.dataclass
class AsmProfile:
    """Instruction counts of one or more kernels' assembly, by the classes that tell ISAs apart."""

    vector_ops: dict[str, int] = dataclasses.field(
        default_factory=lambda: {"xmm": 0, "ymm": 0, "zmm": 0, "neon": 0, "sve": 0}
    )
    evex_only: int = 0
    vex: int = 0
    sse_newer: int = 0
    scalar_ext: int = 0
    #: AArch64 instructions on NEON registers with a lane arrangement (moves included).
    neon: int = 0
    #: AArch64 SVE instructions (on z- or p-registers, moves included).
    sve: int = 0
    instructions: int = 0
    examples: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    #: Every distinct vector arithmetic mnemonic, by register width (AArch64: "neon", "sve").
    vector_mnemonics: dict[str, list[str]] = dataclasses.field(
        default_factory=lambda: {"xmm": [], "ymm": [], "zmm": [], "neon": [], "sve": []}
    )

    @property
    def vectorized(self) -> bool:
        """True if any vector arithmetic is present."""
        return sum(self.vector_ops.values()) > 0

    @property
    def arch(self) -> str:
        """The vector code's architecture: "aarch64" once NEON or SVE is seen, else "x86_64"."""
        return "aarch64" if self.neon or self.sve else "x86_64"

    @property
    def rank(self) -> int:
        """The highest instruction class present (see :data:`RANK_NAMES`, AArch64's beside it)."""
        if self.arch == "aarch64":
            return 2 if self.sve else int(self.vectorized)
        if self.evex_only:
            return 4
        if self.vex:
            return 3
        if self.sse_newer:
            return 2
        return 1 if self.vectorized else 0

    @property
    def rank_name(self) -> str:
        """The name of :attr:`rank` on this code's architecture, e.g. "AVX2" or "NEON"."""
        names = AARCH64_RANK_NAMES if self.arch == "aarch64" else RANK_NAMES
        return names[self.rank]

    @property
    def widest(self) -> str:
        """The widest register used by vector arithmetic ("zmm", "ymm", "xmm"; AArch64 "sve",
        "neon") or "scalar"."""
        for width in ("zmm", "ymm", "sve", "xmm", "neon"):
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
        self.neon += other.neon
        self.sve += other.sve
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
            "neon": self.neon,
            "sve": self.sve,
            "instructions": self.instructions,
            "rank": self.rank_name,
            "widest": self.widest,
            "examples": {kind: list(names) for kind, names in self.examples.items()},
        }


def _instruction_lines(asm: str, comments: tuple[str, ...]) -> list[str]:
    """Return the instruction lines of ``asm``: no directive, label, comment or empty line."""
    lines = []
    for raw in asm.splitlines():
        line = raw
        for marker in comments:
            line = line.split(marker, 1)[0]
        line = line.strip()
        if line and not line.startswith(".") and not line.endswith(":"):
            lines.append(line)
    return lines


def is_aarch64(asm: str) -> bool:
    """Whether ``asm`` is AArch64 assembly: no x86 register ("%...") and some AArch64 one."""
    found = False
    for line in _instruction_lines(asm, ("//", ";", "#")):
        if "%" in line:
            return False
        found = found or bool(_A64_REG.search(line.partition("\t" if "\t" in line else " ")[2]))
    return found


def _profile_aarch64(asm: str) -> AsmProfile:
    """Classify AArch64 assembly text (LLVM's syntax; "//" or ";" comments)."""
    profile = AsmProfile()
    for line in _instruction_lines(asm, ("//", ";")):
        mnemonic, _, operands = line.partition("\t" if "\t" in line else " ")
        mnemonic = mnemonic.strip().lower()
        operands = operands.strip()
        profile.instructions += 1
        sve = bool(_SVE_OPERAND.search(operands))
        neon = _NEON_REG.findall(operands)
        if sve:
            profile.sve += 1
            profile._example("sve", mnemonic)
        elif neon:
            profile.neon += 1
        if not (sve or neon) or mnemonic in _A64_MOVES or _A64_MEMORY.match(mnemonic):
            continue
        if mnemonic == "eor" and len(neon) == 3 and len(set(neon)) == 1:
            continue  # eor v0.16b, v0.16b, v0.16b: zeroing, no arithmetic meant
        width = "sve" if sve else "neon"
        profile.vector_ops[width] += 1
        profile._example(f"vector_{width}", mnemonic)
        profile._vector_mnemonic(width, mnemonic)
    return profile


def profile_asm(asm: str) -> AsmProfile:
    """Classify the instructions of assembly text as numba and LLVM print it.

    x86 text is in AT&T syntax; AArch64 text is recognised by its registers (:func:`is_aarch64`).
    """
    if is_aarch64(asm):
        return _profile_aarch64(asm)
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
    instructions for the AVX-512 levels, 512-bit vectors for avx512-zmm, NEON arithmetic for neon,
    no vector arithmetic at all for "none", no scalar extension for the x86-64 baseline).
    ``vectorized`` tells, separately, whether the vectorizer produced any vector arithmetic.
    """
    problems: list[str] = []
    tier = features_tier(cpu_name, features)
    expected_tier = {
        "avx512": ("AVX-512",),
        "avx512-zmm": ("AVX-512",),
        "avx2": ("AVX2",),
        "sse4.2": ("SSE4.2",),
        "sse2": ("SSE2",),
        "sve": ("SVE2", "SVE"),
        "neon": ("NEON",),
    }.get(level.key)
    if expected_tier is not None and tier not in expected_tier:
        problems.append(f"compiler target is {tier}, expected {' or '.join(expected_tier)}")
    if level.key == "avx512-zmm" and "-prefer-256-bit" not in features.split(","):
        problems.append("compiler target still prefers 256-bit vectors")
    if profile.rank > level.rank:
        problems.append(f"kernels use {profile.rank_name} instructions, above {level.label}")
    if level.key == "neon" and not profile.vector_ops["neon"]:
        problems.append("kernels contain no NEON vector arithmetic")
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
        "asm_rank": profile.rank_name,
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
