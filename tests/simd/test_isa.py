"""The ISA-level machinery of ``twocats bench``: recipes, assembly classification and verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from twocats.perf.levels import Cell, check_outputs, format_table
from twocats.simd.asm import profile_asm, verify_level
from twocats.simd.isa import features_tier, get_level, level_env

HOST = "+64bit,+avx,+avx2,+avx512bw,+avx512f,+avx512vl,+bmi2,+f16c,+fma,+sse2,+sse4.2,+ssse3,+vaes"
AVX2_FEATURES = "+avx,+avx2,-avx512bw,-avx512f,-avx512vl,+sse2,+sse4.2"
SSE42_FEATURES = "-avx,-avx2,-avx512f,+sse2,+sse4.2,+ssse3"

# Small AT&T-syntax samples in the form numba's inspect_asm prints, one per instruction set.
ASM_AVX512_YMM = """
\t.text
.LBB0_3:
\tvmovdqu\t(%rcx,%r8,4), %ymm1
\tvpaddd\t%ymm1, %ymm2, %ymm3
\tvpxor\t(%rdx), %ymm3, %ymm3
\tvprold\t$8, %ymm3, %ymm3
\tvmovdqu\t%ymm3, (%rax)
\tvzeroupper
\tretq
"""
ASM_ZMM = "\tvpaddd\t%zmm1, %zmm2, %zmm3\n\tvprold\t$8, %zmm3, %zmm3\n"
ASM_AVX2 = """
\tvpaddd\t%ymm1, %ymm2, %ymm3
\tvpxor\t%ymm4, %ymm3, %ymm3
\tvpshufb\t%ymm5, %ymm3, %ymm3
\tvpsrld\t$24, %ymm3, %ymm6
\trorxl\t$24, %eax, %ecx
"""
ASM_SSE42 = "\tpaddd\t%xmm1, %xmm0\n\tpxor\t%xmm2, %xmm0\n\tpshufb\t%xmm3, %xmm0\n"
ASM_SSE2 = """
\tpaddd\t%xmm1, %xmm0
\tpxor\t%xmm2, %xmm0
\tmovdqa\t%xmm0, %xmm1
\tpslld\t$8, %xmm0
\tpsrld\t$24, %xmm1
\tpor\t%xmm1, %xmm0
\troll\t$8, %eax
"""
ASM_SCALAR_HOST = """
# a comment line
\trorxl\t$24, %eax, %ecx
\tvpxor\t%xmm0, %xmm0, %xmm0
\tvmovdqu\t%ymm0, (%rdi)
\taddl\t%ecx, %edx
\tmulxq\t%r8, %r9, %r10
"""
ASM_SCALAR_BASELINE = (
    "\troll\t$8, %eax\n\taddl\t%eax, %edx\n\tpxor\t%xmm0, %xmm0\n\tmovq\t%rax, %xmm0\n"
)


def test_avx512_ymm_sample_is_avx512() -> None:
    """A ymm kernel with vprold counts as AVX-512 (EVEX-only), widest register ymm."""
    profile = profile_asm(ASM_AVX512_YMM)
    assert profile.vector_ops == {"xmm": 0, "ymm": 3, "zmm": 0, "neon": 0, "sve": 0}
    assert profile.evex_only == 1
    assert profile.widest == "ymm"
    assert profile.to_dict()["rank"] == "AVX-512"
    assert profile.instructions == 7


def test_zmm_registers_are_avx512() -> None:
    """Any zmm register is AVX-512, and its arithmetic counts as 512-bit."""
    profile = profile_asm(ASM_ZMM)
    assert profile.vector_ops["zmm"] == 2
    assert profile.evex_only == 2


def test_mask_registers_and_gpr_broadcasts_are_evex() -> None:
    """Masked operations and vpbroadcastd from a general register exist only in AVX-512."""
    assert profile_asm("\tvpaddd\t%xmm1, %xmm2, %xmm3 {%k1}\n").evex_only == 1
    assert profile_asm("\tvpbroadcastd\t%eax, %ymm0\n").evex_only == 1
    assert profile_asm("\tvpbroadcastd\t%xmm1, %ymm0\n").evex_only == 0
    assert profile_asm("\tvpbroadcastd\t(%rdi,%rax,4), %ymm0\n").evex_only == 0
    assert profile_asm("\tvpaddd\t%ymm17, %ymm2, %ymm3\n").evex_only == 1


def test_avx2_sample_is_avx2() -> None:
    """A VEX ymm kernel without EVEX-only instructions is AVX2."""
    profile = profile_asm(ASM_AVX2)
    assert profile.to_dict()["rank"] == "AVX2"
    assert profile.vector_ops["ymm"] == 4
    assert profile.scalar_ext == 1


def test_sse_samples_tell_sse42_from_sse2() -> None:
    """pshufb (SSSE3) lifts a legacy-SSE kernel above SSE2; plain paddd/pslld/por stays SSE2."""
    assert profile_asm(ASM_SSE42).to_dict()["rank"] == "SSE4.2"
    sse2 = profile_asm(ASM_SSE2)
    assert sse2.to_dict()["rank"] == "SSE2"
    assert sse2.vector_ops == {"xmm": 5, "ymm": 0, "zmm": 0, "neon": 0, "sve": 0}
    assert sse2.scalar_ext == 0


def test_zeroing_idioms_and_moves_are_not_vector_arithmetic() -> None:
    """Register zeroing and vector moves in scalar code do not count as vectorization."""
    profile = profile_asm(ASM_SCALAR_HOST)
    assert not profile.vectorized
    assert profile.scalar_ext == 2
    assert profile.instructions == 5


def test_verdicts_for_matching_levels() -> None:
    """Each sample verifies at its own level."""
    cases = [
        ("avx512", ASM_AVX512_YMM, "znver4", HOST),
        ("avx512-zmm", ASM_ZMM, "znver4", HOST + ",-prefer-256-bit"),
        ("avx2", ASM_AVX2, "znver4", AVX2_FEATURES),
        ("sse4.2", ASM_SSE42, "znver4", SSE42_FEATURES),
        ("sse2", ASM_SSE2, "x86-64", ""),
        ("none", ASM_SCALAR_HOST, "znver4", HOST),
    ]
    for key, asm, cpu, features in cases:
        check = verify_level(get_level(key), profile_asm(asm), cpu, features)
        assert check["verified"], (key, check["problems"])


@pytest.mark.parametrize(
    ("key", "asm", "cpu", "features", "problem"),
    [
        ("avx2", ASM_AVX512_YMM, "znver4", AVX2_FEATURES, "above AVX2"),
        ("sse4.2", ASM_AVX2, "znver4", SSE42_FEATURES, "above SSE4.2"),
        ("sse2", ASM_SSE42, "x86-64", "", "above SSE2"),
        ("sse2", ASM_SCALAR_HOST, "x86-64", "", "newer than x86-64"),
        ("none", ASM_SSE2, "znver4", HOST, "vector arithmetic"),
        ("avx512", ASM_AVX2, "znver4", HOST, "no AVX-512 instruction"),
        ("avx512-zmm", ASM_AVX512_YMM, "znver4", HOST + ",-prefer-256-bit", "512-bit"),
        ("avx2", ASM_AVX2, "znver4", HOST, "compiler target is AVX-512"),
    ],
)
def test_verdicts_catch_the_wrong_level(
    key: str, asm: str, cpu: str, features: str, problem: str
) -> None:
    """A kernel above its level, or a target that is not the level's, fails with a reason."""
    check = verify_level(get_level(key), profile_asm(asm), cpu, features)
    assert not check["verified"]
    assert any(problem in text for text in check["problems"]), check["problems"]


def test_unvectorized_sse2_kernel_still_verifies_its_ceiling() -> None:
    """Scalar code in the SSE2 process is within the level; the verdict says it is unvectorized."""
    check = verify_level(get_level("sse2"), profile_asm(ASM_SCALAR_BASELINE), "x86-64", "")
    assert check["verified"]
    assert not check["vectorized"]


def test_recipes_follow_the_spec() -> None:
    """The env recipes switch off AVX-512 for avx2, every AVX feature for sse4.2, all for sse2."""
    avx2 = level_env(get_level("avx2"), HOST, Path("/c"))
    assert "-avx512f" in avx2["NUMBA_CPU_FEATURES"]
    assert "+avx2" in avx2["NUMBA_CPU_FEATURES"]
    sse42 = level_env(get_level("sse4.2"), HOST, Path("/c"))["NUMBA_CPU_FEATURES"]
    assert all(f"-{name}" in sse42 for name in ("avx", "avx2", "fma", "f16c", "vaes", "avx512f"))
    assert "+sse4.2" in sse42
    assert "+bmi2" in sse42
    sse2 = level_env(get_level("sse2"), HOST, Path("/c"))
    assert sse2["NUMBA_CPU_NAME"] == "x86-64"
    assert sse2["NUMBA_CPU_FEATURES"] == ""
    none = level_env(get_level("none"), HOST, Path("/c"))
    assert none["NUMBA_LOOP_VECTORIZE"] == "0"
    assert "NUMBA_CPU_FEATURES" not in none
    assert none["TWOCATS_CACHE_DIR"] == "/c"
    assert all(env["TWOCATS_AOT"] == "0" for env in (avx2, sse2, none))
    assert features_tier("znver4", avx2["NUMBA_CPU_FEATURES"]) == "AVX2"
    assert features_tier("znver4", sse42) == "SSE4.2"
    assert features_tier("x86-64", "") == "SSE2"


def test_output_mismatch_between_levels_is_reported() -> None:
    """check_outputs flags a cell whose output differs between two levels."""
    cell = {**Cell().__dict__, "output": "aa", "gbps": 1.0}
    levels = [
        {"level": "avx2", "cells": [cell]},
        {"level": "sse2", "cells": [{**cell, "output": "ab"}]},
        {"level": "none", "cells": [cell]},
    ]
    problems = check_outputs(levels)
    assert len(problems) == 1
    assert "sse2" in problems[0]


def test_table_has_one_row_per_level_and_column_per_configuration() -> None:
    """format_table labels columns by the fields that vary and prints every rate."""
    check = {
        "verified": True,
        "vectorized": True,
        "widest": "ymm",
        "asm_rank": "AVX-512",
        "problems": [],
    }
    cells = [{**Cell(lanes=lanes).__dict__, "gbps": float(lanes)} for lanes in (1, 8)]
    levels = [
        {"label": "AVX-512", "check": check, "cells": cells},
        {"label": "SSE2", "error": "child process exited with status 1"},
    ]
    lines = format_table(levels).splitlines()
    assert lines[0].split() == ["level", "ISA", "check", "L=1", "L=8"]
    assert lines[1].split()[-2:] == ["1.00", "8.00"]
    assert "exited" in lines[2]
    assert format_table(levels, markdown=True).startswith("| level | ISA check | L=1 | L=8 |")
