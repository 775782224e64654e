"""The AArch64 half of the ISA machinery, on any host: levels, recipes, the assembly classifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from twocats.perf.levels import Cell, format_table
from twocats.simd import isa
from twocats.simd.asm import is_aarch64, profile_asm, verify_level
from twocats.simd.isa import available_levels, default_levels, features_tier, get_level, level_env

NEOVERSE_V1 = "+neon,+fp-armv8,+crc,+lse,+rdm,+dotprod,+sha2,+aes,+sve,+sve2,+bf16,+i8mm"
GRAVITON2 = "+neon,+fp-armv8,+crc,+lse,+rdm,+dotprod,+sha2,+aes"

# Small samples of LLVM's AArch64 output, in the form numba prints it.
ASM_NEON = """
\t.text
\t.globl\tblake2s_lanes
.LBB0_2:                                // =>This Inner Loop Header: Depth=1
\tldr\tq0, [x8, #16]
\tadd\tv1.4s, v1.4s, v0.4s
\teor\tv2.16b, v2.16b, v1.16b
\tushr\tv3.4s, v2.4s, #7
\tsli\tv3.4s, v2.4s, #25
\trev32\tv4.8h, v3.8h
\ttbl\tv5.16b, { v4.16b }, v6.16b
\tmov\tw9, v5.s[1]
\tstr\tq5, [x8], #16
\tsubs\tx10, x10, #1
\tb.ne\t.LBB0_2
\tret
\t.section\t".note.GNU-stack","",%progbits
"""
ASM_SCALAR = """
// %bb.0:
\tldp\tq0, q1, [x1]
\tmovi\tv2.2d, #0000000000000000
\tstp\tq0, q1, [x0]
\tadd\tw8, w8, w9
\teor\tw8, w8, w10
\tror\tw8, w8, #7
\tadd\tx11, x11, #1
\tret
"""
ASM_SVE = """
\tptrue\tp0.s
\tld1w\t{ z0.s }, p0/z, [x0, x8, lsl #2]
\tadd\tz0.s, z0.s, z1.s
\teor\tz2.d, z2.d, z0.d
\tst1w\t{ z2.s }, p0, [x1, x8, lsl #2]
\tstr\tz3, [sp, #1, mul vl]
"""
ASM_X86 = "\tvpaddd\t%ymm1, %ymm2, %ymm3\n\tretq\n"


@pytest.fixture
def aarch64_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the level table see an AArch64 host on real hardware."""
    monkeypatch.setattr(isa.platform, "machine", lambda: "aarch64")
    monkeypatch.delenv(isa.EMULATION_ENV, raising=False)


def test_neon_sample_is_neon_arithmetic() -> None:
    """v-registers with lane arrangements count as NEON arithmetic; loads, moves do not."""
    profile = profile_asm(ASM_NEON)
    assert is_aarch64(ASM_NEON)
    assert profile.vectorized
    assert profile.rank_name == "NEON"
    assert profile.widest == "neon"
    assert set(profile.vector_mnemonics["neon"]) == {"add", "eor", "ushr", "sli", "rev32", "tbl"}
    assert profile.vector_ops["neon"] == 6
    assert profile.sve == 0
    assert profile.instructions == 12


def test_scalar_sample_has_no_vector_arithmetic() -> None:
    """q-register copies, a zeroing movi and general-purpose ARX are not vector arithmetic."""
    profile = profile_asm(ASM_SCALAR)
    assert is_aarch64(ASM_SCALAR)
    assert not profile.vectorized
    assert profile.rank_name == "scalar"
    assert profile.widest == "scalar"


def test_sve_sample_is_sve() -> None:
    """z- and p-registers and 'mul vl' addresses count as SVE; only add and eor as arithmetic."""
    profile = profile_asm(ASM_SVE)
    assert profile.sve == 6
    assert profile.vector_mnemonics["sve"] == ["add", "eor"]
    assert profile.rank_name == "SVE"
    assert profile.widest == "sve"


def test_x86_text_is_not_aarch64() -> None:
    """x86 AT&T text keeps the x86 classifier, and AArch64 text never counts x86 classes."""
    assert not is_aarch64(ASM_X86)
    assert profile_asm(ASM_X86).vector_ops["ymm"] == 1
    assert not is_aarch64("\tretq\n\tnop\n")
    neon = profile_asm(ASM_NEON)
    assert neon.vex == neon.evex_only == neon.sse_newer == neon.scalar_ext == 0


def test_levels_on_aarch64(aarch64_host: None) -> None:
    """An AArch64 host runs sve (when offered), neon and none, never an x86 level."""
    assert [level.key for level in default_levels(GRAVITON2)] == ["neon", "none"]
    assert [level.key for level in default_levels(NEOVERSE_V1)] == ["sve", "none"]
    assert [level.key for level in available_levels(GRAVITON2)] == ["neon", "none"]
    assert [level.key for level in available_levels(NEOVERSE_V1)] == ["sve", "neon", "none"]
    assert [level.key for level in default_levels("")] == ["neon", "none"]


def test_aarch64_levels_are_not_offered_on_x86(monkeypatch: pytest.MonkeyPatch) -> None:
    """An x86-64 host never runs neon or sve."""
    monkeypatch.setattr(isa.platform, "machine", lambda: "x86_64")
    keys = [level.key for level in available_levels(NEOVERSE_V1 + ",+avx2,+sse4.2")]
    assert "neon" not in keys
    assert "sve" not in keys


def test_neon_recipe_switches_off_sve() -> None:
    """The neon level keeps the host's features with every SVE and SME one off."""
    env = level_env(get_level("neon"), NEOVERSE_V1 + ",+sme", Path("/c"))
    features = env["NUMBA_CPU_FEATURES"].split(",")
    assert {"-sve", "-sve2", "-sme", "+neon", "+dotprod"} <= set(features)
    assert features_tier("neoverse-v1", env["NUMBA_CPU_FEATURES"]) == "NEON"
    assert "NUMBA_CPU_FEATURES" not in level_env(get_level("sve"), NEOVERSE_V1, Path("/c"))


def test_tiers_name_aarch64_features(aarch64_host: None) -> None:
    """SVE2, SVE and NEON are named from the feature string; an empty one is AArch64's NEON."""
    assert features_tier("neoverse-v1", NEOVERSE_V1) == "SVE2"
    assert features_tier("neoverse-n1", GRAVITON2) == "NEON"
    assert features_tier("generic", "") == "NEON"
    # What LLVM reports under qemu-user, which shows the process the host's x86 /proc/cpuinfo.
    assert features_tier("generic", "-aes,-rand,-sha2,-sve") == "NEON"
    assert features_tier("generic", "-neon") == "baseline of generic"


def test_verdicts_on_aarch64_samples() -> None:
    """neon needs NEON arithmetic and no SVE; none needs no vector arithmetic at all."""
    neon = get_level("neon")
    assert verify_level(neon, profile_asm(ASM_NEON), "neoverse-n1", GRAVITON2)["verified"]
    sve_code = verify_level(neon, profile_asm(ASM_SVE), "neoverse-n1", GRAVITON2)
    assert "kernels use SVE instructions, above NEON" in sve_code["problems"]
    scalar = verify_level(neon, profile_asm(ASM_SCALAR), "neoverse-n1", GRAVITON2)
    assert "kernels contain no NEON vector arithmetic" in scalar["problems"]
    none = get_level("none")
    assert verify_level(none, profile_asm(ASM_SCALAR), "neoverse-n1", GRAVITON2)["verified"]
    assert not verify_level(none, profile_asm(ASM_NEON), "neoverse-n1", GRAVITON2)["verified"]
    sve = verify_level(get_level("sve"), profile_asm(ASM_SVE), "neoverse-v1", NEOVERSE_V1)
    assert sve["verified"]
    assert sve["asm_rank"] == "SVE"


def test_emulation_is_declared_or_told_by_cpuinfo(
    aarch64_host: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """qemu-user shows an AArch64 process the host's x86 /proc/cpuinfo; the run may say so too."""
    x86_info = tmp_path / "x86"
    x86_info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2\n")
    arm_info = tmp_path / "arm"
    arm_info.write_text("processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n")
    assert isa.emulation(x86_info) == "qemu-user"
    assert isa.emulation(arm_info) is None
    assert isa.emulation(tmp_path / "missing") is None
    monkeypatch.setenv(isa.EMULATION_ENV, "qemu-aarch64")
    assert isa.emulation(arm_info) == "qemu-aarch64"


def test_emulated_table_shows_no_speed() -> None:
    """Under an emulator the table prints n/m instead of rates, and says why."""
    check = {"verified": True, "vectorized": True, "widest": "neon", "asm_rank": "NEON"}
    cell = {**Cell().__dict__, "gbps": 0.01}
    levels = [{"label": "NEON", "check": check, "cells": [cell], "emulation": "qemu-user"}]
    table = format_table(levels)
    assert "0.01" not in table
    assert "n/m" in table
    assert "not meaningful under qemu-user" in table
    assert "0.01" in format_table([{**levels[0], "emulation": None}])
