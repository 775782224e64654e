"""Generator of the unrolled hash kernels in ``twocats/lanes/_generated/``.

The compression functions are emitted as straight-line code in which every assignment binds a fresh
name.  numba's SSA reconstruction is quadratic in the number of re-definitions of a name inside one
basic block, so single-assignment code compiles about three times faster (numba-simd.md §5.1).

``python -m codegen`` rewrites these files with every other
generated file of the project.
"""

from __future__ import annotations

from pathlib import Path

import twocats.lanes
from codegen.emit import HEADER
from codegen.emit import Emitter as BaseEmitter
from twocats.hashes import LANE_HASHES, HashFacts
from twocats.hashes import SIGMA as _SIGMA
from twocats.lanes.primitives import LANE_VECTORS
from twocats.simd.isa import VECTOR_BITS

__all__ = ["GENERATED", "HASHES", "SIGMA", "generate_all"]

GENERATED = Path(twocats.lanes.__file__).resolve().parent / "_generated"


#: The hash facts the kernels are generated from (one table for the whole project).
HASHES = LANE_HASHES

#: The BLAKE2 message permutations; BLAKE2b's rounds 10 and 11 reuse rows 0 and 1.
SIGMA = _SIGMA


class Emitter(BaseEmitter):
    """The source emitter with the word type, constants and rotations of one hash type."""

    def __init__(self, spec: HashFacts, indent: str) -> None:
        super().__init__(indent)
        self.spec = spec

    def const(self, name: str) -> str:
        """Name a module-level constant of this hash, e.g. ``SHA256_K5`` for ``K5``."""
        return f"{self.spec.name.upper()}_{name}"

    def wrap(self, expr: str) -> str:
        """Reduce an expression to a word: a cast for 32-bit words, nothing for 64-bit words."""
        return f"U32({expr})" if self.spec.word_bits == 32 else expr

    def shift(self, amount: int) -> str:
        """Spell a shift amount: a literal for 32-bit code, a uint64 constant for 64-bit code."""
        return str(amount) if self.spec.word_bits == 32 else f"N{amount}"

    def rotr(self, name: str, amount: int) -> str:
        """Spell a right rotation of a word-valued name (without the final cast)."""
        left = self.shift(self.spec.word_bits - amount)
        return f"(({name} >> {self.shift(amount)}) | ({name} << {left}))"


# The unrolled bodies call small helpers (BLAKE2's G, one SHA-2 round, one schedule word) instead of
# spelling out every operation: numba types each operation separately, at about a millisecond
# apiece, while calls to an already compiled helper are typed once per signature.  LLVM inlines the
# helpers, so the machine code equals that of fully spelled-out code.


# The boolean function of each group of 20 SHA-1 rounds: choose, parity, majority, parity.
_SHA1_F = ("d ^ (b & (c ^ d))", "b ^ c ^ d", "(b & c) | (d & (b | c))", "b ^ c ^ d")


def sha1_helpers(spec: HashFacts) -> list[str]:
    """The jitted SHA-1 round helpers (one per group of 20 rounds) and schedule helper."""
    rotate_a, rotate_b, rotate_w = spec.rotations
    rotl_a = f"U32((a << {rotate_a}) | (a >> {32 - rotate_a}))"
    lines: list[str] = []
    for group in range(4):
        first = 20 * group
        lines += [
            "@jit",
            f"def sha1_round{group}(a: Any, b: Any, c: Any, d: Any, e: Any, w: Any) -> Any:",
            f'    """One of SHA-1 rounds {first}..{first + 19}: the new a, and b rotated."""',
            f"    f = {_SHA1_F[group]}",
            f"    t = U32({rotl_a} + f + e + SHA1_K{group} + w)",
            f"    return t, U32((b << {rotate_b}) | (b >> {32 - rotate_b}))",
            "",
            "",
        ]
    return [
        *lines,
        "@jit",
        "def sha1_schedule(w3: Any, w8: Any, w14: Any, w16: Any) -> Any:",
        '    """One SHA-1 schedule word from the words 3, 8, 14 and 16 places back."""',
        "    x = U32(w3 ^ w8 ^ w14 ^ w16)",
        f"    return U32((x << {rotate_w}) | (x >> {32 - rotate_w}))",
    ]


def helpers(spec: HashFacts) -> list[str]:
    """The jitted helper functions of ``spec`` as source lines."""
    if spec.is_sha1:
        return sha1_helpers(spec)
    e = Emitter(spec, "    ")
    n = spec.name
    if spec.is_blake2:
        r1, r2, r3, r4 = spec.rotations
        e.line('"""BLAKE2 mixing function G on four state words and two message words."""')
        a = e.let("a", e.wrap("a + b + x"))
        z = e.let("z", e.wrap(f"d ^ {a}"))
        d = e.let("d", e.wrap(e.rotr(z, r1)))
        c = e.let("c", e.wrap(f"c + {d}"))
        z = e.let("z", e.wrap(f"b ^ {c}"))
        b = e.let("b", e.wrap(e.rotr(z, r2)))
        a = e.let("a", e.wrap(f"{a} + {b} + y"))
        z = e.let("z", e.wrap(f"{d} ^ {a}"))
        d = e.let("d", e.wrap(e.rotr(z, r3)))
        c = e.let("c", e.wrap(f"{c} + {d}"))
        z = e.let("z", e.wrap(f"{b} ^ {c}"))
        b = e.let("b", e.wrap(e.rotr(z, r4)))
        e.line(f"return {a}, {b}, {c}, {d}")
        signature = f"def {n}_g(a: Any, b: Any, c: Any, d: Any, x: Any, y: Any) -> Any:"
        return ["@jit", signature, *e.lines]
    sa0, sa1, sa2, se0, se1, se2, s00, s01, s02, s10, s11, s12 = spec.rotations
    e.line('"""One SHA-2 round: return the new e and a words."""')
    s1 = e.let("s", e.wrap(f"{e.rotr('e', se0)} ^ {e.rotr('e', se1)} ^ {e.rotr('e', se2)}"))
    ch = e.let("x", "g ^ (e & (f ^ g))")
    t1 = e.let("t", e.wrap(f"h + {s1} + {ch} + k + w"))
    s0 = e.let("s", e.wrap(f"{e.rotr('a', sa0)} ^ {e.rotr('a', sa1)} ^ {e.rotr('a', sa2)}"))
    maj = e.let("x", "(a & b) ^ (c & (a ^ b))")
    e.line(f"return {e.wrap(f'd + {t1}')}, {e.wrap(f'{t1} + {s0} + {maj}')}")
    round_lines = [
        "@jit",
        f"def {n}_round(",
        "    a: Any, b: Any, c: Any, d: Any, e: Any, f: Any, g: Any, h: Any, k: Any, w: Any",
        ") -> Any:",
        *e.lines,
    ]
    e = Emitter(spec, "    ")
    e.line('"""One SHA-2 message schedule word from the words 2, 7, 15 and 16 places back."""')
    low = e.rotr("w15", s00) + " ^ " + e.rotr("w15", s01) + f" ^ (w15 >> {e.shift(s02)})"
    high = e.rotr("w2", s10) + " ^ " + e.rotr("w2", s11) + f" ^ (w2 >> {e.shift(s12)})"
    low = e.let("s", e.wrap(low))
    high = e.let("s", e.wrap(high))
    e.line(f"return {e.wrap(f'{high} + w7 + {low} + w16')}")
    return [
        *round_lines,
        "",
        "",
        "@jit",
        f"def {n}_schedule(w2: Any, w7: Any, w15: Any, w16: Any) -> Any:",
        *e.lines,
    ]


def blake2_body(
    e: Emitter, h: list[str], m: list[str], t0: str, t1: str | None, f: str, f1: str | None = None
) -> list[str]:
    """Emit one BLAKE2 compression and return the new chaining words.

    ``t0`` and ``t1`` name the byte counter's words (``t1`` None: zero), ``f`` and ``f1`` the
    final-block and last-node flags (``f1`` None: zero).  The lane kernels of the hashes and of
    the BLAKE2 tree modes are both emitted here.
    """
    v = list(h)
    v += [e.const(f"IV{i}") for i in range(4)]
    v.append(e.let("v", e.wrap(f"{e.const('IV4')} ^ {t0}")))
    v.append(e.let("v", e.wrap(f"{e.const('IV5')} ^ {t1}")) if t1 is not None else e.const("IV5"))
    v.append(e.let("v", e.wrap(f"{e.const('IV6')} ^ {f}")))
    v.append(e.let("v", e.wrap(f"{e.const('IV7')} ^ {f1}")) if f1 is not None else e.const("IV7"))
    g = f"{e.spec.name}_g"

    def mix(a: int, b: int, c: int, d: int, x: str, y: str) -> None:
        call = f"{g}({v[a]}, {v[b]}, {v[c]}, {v[d]}, {x}, {y})"
        v[a], v[b], v[c], v[d] = e.let_many([f"v{a}", f"v{b}", f"v{c}", f"v{d}"], call)

    for rnd in range(e.spec.rounds):
        s = SIGMA[rnd % 10]
        mix(0, 4, 8, 12, m[s[0]], m[s[1]])
        mix(1, 5, 9, 13, m[s[2]], m[s[3]])
        mix(2, 6, 10, 14, m[s[4]], m[s[5]])
        mix(3, 7, 11, 15, m[s[6]], m[s[7]])
        mix(0, 5, 10, 15, m[s[8]], m[s[9]])
        mix(1, 6, 11, 12, m[s[10]], m[s[11]])
        mix(2, 7, 8, 13, m[s[12]], m[s[13]])
        mix(3, 4, 9, 14, m[s[14]], m[s[15]])
    return [e.let("h", e.wrap(f"{h[i]} ^ {v[i]} ^ {v[i + 8]}")) for i in range(8)]


def sha2_body(e: Emitter, h: list[str], m: list[str]) -> list[str]:
    """Emit one SHA-2 compression (schedule and rounds) and return the new chaining words.

    The rounds call the helpers ``<hash>_schedule`` and ``<hash>_round`` and read the constants
    ``<HASH>_K<t>`` of :func:`constants` (the SHA-2 tree modes' narrow kernel is emitted here too).
    """
    n = e.spec.name
    w = list(m)
    for t in range(16, e.spec.rounds):
        w.append(e.let("w", f"{n}_schedule({w[t - 2]}, {w[t - 7]}, {w[t - 15]}, {w[t - 16]})"))
    a, b, c, d, ee, f, g, hh = h
    for t in range(e.spec.rounds):
        args = f"{a}, {b}, {c}, {d}, {ee}, {f}, {g}, {hh}, {e.const(f'K{t}')}, {w[t]}"
        new_e, new_a = e.let_many(["e", "a"], f"{n}_round({args})")
        hh, g, f, ee = g, f, ee, new_e
        d, c, b, a = c, b, a, new_a
    final = [a, b, c, d, ee, f, g, hh]
    return [e.let("h", e.wrap(f"{h[i]} + {final[i]}")) for i in range(8)]


def sha1_body(e: Emitter, h: list[str], m: list[str]) -> list[str]:
    """Emit one SHA-1 compression (all 80 rounds) and return the new chaining words."""
    w = list(m)
    for t in range(16, 80):
        w.append(e.let("w", f"sha1_schedule({w[t - 3]}, {w[t - 8]}, {w[t - 14]}, {w[t - 16]})"))
    a, b, c, d, v = h
    for t in range(80):
        call = f"sha1_round{t // 20}({a}, {b}, {c}, {d}, {v}, {w[t]})"
        new_a, new_c = e.let_many(["a", "c"], call)
        a, b, c, d, v = new_a, a, new_c, c, d
    return [e.let("h", f"U32({h[i]} + {x})") for i, x in enumerate((a, b, c, d, v))]


def _body(e: Emitter, h: list[str], m: list[str], t: str, f: str) -> list[str]:
    """Emit the compression of ``e.spec``; ``t`` and ``f`` name BLAKE2's counter and flag."""
    spec = e.spec
    if spec.is_sha1:
        return sha1_body(e, h, m)
    if not spec.is_blake2:
        return sha2_body(e, h, m)
    if spec.word_bits == 32:
        t0 = e.let("t", f"U32({t} & MASK32)")
        t1 = e.let("t", f"U32({t} >> N32)")
        return blake2_body(e, h, m, t0, t1, f)
    return blake2_body(e, h, m, t, None, f)


def lanes_function(spec: HashFacts) -> list[str]:
    """The multi-lane structure-of-arrays compression of ``spec`` as source lines."""
    e = Emitter(spec, "        ")
    rows = "" if spec.chain_words == 8 else f" (in its first {spec.chain_words} rows)"
    # One zmm register holds 16 words of 32 bits or 8 of 64 bits; LLVM's cost model would pick a
    # narrower factor for this big loop body, which measured about half as fast.  The arrays are
    # declared free of overlap, which spares a few hundred runtime alias checks per call.
    vectors = LANE_VECTORS.get(spec.name, 1)
    interleave = f", interleave={vectors}" if vectors > 1 else ""
    head = [
        f"@variants(vector_width={VECTOR_BITS // spec.word_bits}{interleave}, noalias=True)",
        f"def {spec.name}_lanes(H: Any, M: Any, T: Any, F: Any, n: Any) -> None:",
        f'    """{spec.name.upper()} compression of lanes 0..n-1 in lock-step.',
        "",
        f"    H[8, L] holds the states{rows} and M[16, L] the decoded block words, lanes",
        "    innermost.  BLAKE2 reads T[L], the byte counters after the block, and F[L], the",
        "    final-block flag words; SHA-1 and SHA-2 ignore them.  The four arrays must not share",
        "    memory.",
        '    """',
        "    for l in range(U64(n)):",
    ]
    h = [e.let("h", f"H[{i}, l]") for i in range(spec.chain_words)]
    m = [e.let("m", f"M[{i}, l]") for i in range(16)]
    t = e.let("t", "T[l]") if spec.is_blake2 else "t"
    f = e.let("f", "F[l]") if spec.is_blake2 else "f"
    out = _body(e, h, m, t, f)
    for i, name_i in enumerate(out):
        e.line(f"H[{i}, l] = {name_i}")
    return head + e.lines


def constants(spec: HashFacts) -> list[str]:
    """Module-level constants of ``spec`` (numba freezes globals into the machine code)."""
    wt, digits, prefix = spec.word_type, spec.word_bits // 4, spec.name.upper()
    lines = [f"{prefix}_IV{i} = {wt}(0x{x:0{digits}X})" for i, x in enumerate(spec.iv)]
    names = ", ".join(f"{prefix}_IV{i}" for i in range(spec.chain_words))
    lines.append(f"{prefix}_IV = np.array([{names}], dtype=np.uint{spec.word_bits})")
    lines += [f"{prefix}_K{t} = {wt}(0x{k:0{digits}X})" for t, k in enumerate(spec.k)]
    return lines


def hash_module(spec: HashFacts) -> str:
    """Source of ``_generated/<hash>.py``: helpers and the lane kernel (scheduler.py drives it)."""
    shifts = [f"N{i} = U64({i})" for i in range(1, 64) if i != 32] if spec.word_bits == 64 else []
    title = f"{spec.name.upper()} kernels: the multi-lane compression."
    parts = [
        HEADER.format(doc=title),
        "from typing import Any",
        "",
        "import numpy as np",
        "",
        "from twocats.simd._jit import jit, variants",
        "",
        "U32 = np.uint32",
        "U64 = np.uint64",
        "MASK32 = U64(0xFFFFFFFF)",
        "N32 = U64(32)",
        *shifts,
        "",
        *constants(spec),
        "",
        "",
        *helpers(spec),
        "",
        "",
        *lanes_function(spec),
    ]
    return "\n".join(parts) + "\n"


def generate_all() -> dict[str, str]:
    """Return every generated file's name and content."""
    return {f"{spec.name}.py": hash_module(spec) for spec in HASHES}
