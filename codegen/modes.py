"""Generator of the compiled lane-mode kernels in ``twocats/lanes/modes/_generated/``.

Straight-line code binds a fresh name at every assignment (numba's SSA reconstruction is quadratic
in re-definitions of one name inside a basic block, numba-simd.md §5.1). The round or step
functions are loops over rounds whose body is one unrolled round on the lanes of a constant-width
lane loop: a constant width lets LLVM prove that the rows of the state never overlap, so the lane
loop vectorizes without runtime alias checks, and looping over rounds instead of unrolling them all
keeps each kernel's compile time near a second.

``python -m codegen`` rewrites the committed files (with every other generated file of
the project), and its ``--check``, which a test runs, reports any that differ from this output.
"""

from __future__ import annotations

from pathlib import Path

import twocats.lanes.modes
from codegen import lanes as hash_codegen
from codegen.emit import HEADER, Emitter
from twocats.hashes import HASHES
from twocats.lanes.modes.widths import LSH_WIDTH, SHA256_NARROW
from twocats.lanes.reference.blake2tree import BLAKE2B, BLAKE2S, Blake2Variant
from twocats.lanes.reference.keccak import ROTATION_OFFSETS, ROUND_CONSTANTS
from twocats.lanes.reference.lsh import LSH256, LSH512, LshVariant, step_constants
from twocats.lanes.reference.lsh import SIGMA as LSH_SIGMA
from twocats.lanes.reference.lsh import TAU as LSH_TAU

__all__ = ["GENERATED", "KECCAK_WIDTHS", "generate_all", "keccak_module"]

GENERATED = Path(twocats.lanes.modes.__file__).resolve().parent / "_generated"

# The facts of the project's lane hashes, by name (their helpers and rounds are emitted once).
_FACTS = {facts.name: facts for facts in HASHES}

#: The numbers of Keccak states advanced together by one permutation kernel.
KECCAK_WIDTHS = (4, 8)

#: The imports of every generated mode module.
IMPORTS = """
from typing import Any

import numpy as np

from twocats.simd._jit import variants
"""


def _header(doc: str, *imports: str, helpers: bool = False) -> str:
    """The header and imports of a generated mode module.

    ``imports`` are further ``from numba...`` and ``from twocats...`` lines; ``helpers`` says
    the module defines jit helpers.
    """
    jit = "from twocats.simd._jit import jit, variants" if helpers else IMPORTS.splitlines()[-1]
    numba = [line for line in imports if line.startswith("from numba")]
    ours = [line for line in imports if line not in numba]
    head = IMPORTS.splitlines()[:-1]
    lines = [*head[:-1], *numba, head[-1], *ours, jit]
    return HEADER.format(doc=doc) + "\n".join(lines) + "\n"


def _rotl64(name: str, amount: int) -> str:
    """Spell a left rotation of a uint64-valued name by a constant amount."""
    return f"(({name} << N{amount}) | ({name} >> N{64 - amount}))"


def keccak_round(e: Emitter, width: int) -> None:
    """Emit one Keccak-f[1600] round on lane ``k`` of the flat state ``S`` (row stride ``width``).

    Lane (x, y) of state k lives at S[(x + 5*y) * width + k]; the round constant is named ``rc``.
    """
    a = [e.let("a", f"S[{i * width} + k]") for i in range(25)]
    c = [
        e.let("c", f"{a[x]} ^ {a[x + 5]} ^ {a[x + 10]} ^ {a[x + 15]} ^ {a[x + 20]}")
        for x in range(5)
    ]
    d = [e.let("d", f"{c[(x - 1) % 5]} ^ {_rotl64(c[(x + 1) % 5], 1)}") for x in range(5)]
    b = [""] * 25
    for x in range(5):
        for y in range(5):
            i = x + 5 * y
            moved = e.let("t", f"{a[i]} ^ {d[x]}")
            target = y + 5 * ((2 * x + 3 * y) % 5)
            offset = ROTATION_OFFSETS[i]
            b[target] = moved if offset == 0 else e.let("b", _rotl64(moved, offset))
    for y in range(5):
        for x in range(5):
            i = x + 5 * y
            chi = f"{b[i]} ^ (~{b[(x + 1) % 5 + 5 * y]} & {b[(x + 2) % 5 + 5 * y]})"
            if i == 0:
                chi = f"{chi} ^ rc"
            e.line(f"S[{i * width} + k] = {chi}")


def keccak_permutation(width: int) -> list[str]:
    """The permutation kernel over ``width`` states as source lines."""
    e = Emitter(" " * 12)
    keccak_round(e, width)
    return [
        "@variants",
        f"def keccak_x{width}(S: Any, first: Any) -> None:",
        f'    """Apply rounds first..23 of Keccak-f[1600] to {width} states in place.',
        "",
        f"    S is the flat (25, {width}) uint64 state: lane i of state k at S[{width} * i + k].",
        "    first = 0 gives Keccak-f[1600]; first = 12 gives the 12-round Keccak-p of TurboSHAKE.",
        '    """',
        "    for r in range(first, 24):",
        "        rc = KECCAK_RC[r]",
        f"        for k in range({width}):",
        *e.lines,
    ]


def keccak_module() -> str:
    """Return the text of the generated Keccak module."""
    constants = ["U64 = np.uint64"]
    constants += [f"N{n} = U64({n})" for n in range(1, 64)]
    rc = ", ".join(f"0x{value:016X}" for value in ROUND_CONSTANTS)
    constants.append(f"KECCAK_RC = np.array([{rc}], dtype=np.uint64)")
    parts = [
        _header(
            doc="Keccak-f[1600] over 4 and 8 states in lock-step (the sponge: kernels/keccak.py)."
        ),
        *constants,
    ]
    for width in KECCAK_WIDTHS:
        parts += ["", "", *keccak_permutation(width)]
    return "\n".join(parts) + "\n"


class _Words:
    """Spell word arithmetic for 32-bit or 64-bit words (casts and shift constants differ)."""

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def wrap(self, expr: str) -> str:
        """Reduce an expression to a word (a cast for 32-bit words; uint64 arithmetic wraps)."""
        return f"U32({expr})" if self.bits == 32 else expr

    def rotl(self, name: str, amount: int) -> str:
        """Spell a left rotation of a word-valued name by a constant amount."""
        amount %= self.bits
        if amount == 0:
            return name
        if self.bits == 32:
            return f"U32(({name} << {amount}) | ({name} >> {32 - amount}))"
        return f"(({name} << N{amount}) | ({name} >> N{64 - amount}))"


def lsh_step(
    e: Emitter, w: _Words, v: LshVariant, cv: list[str], msg: list[str], sc: str, odd: bool
) -> list[str]:
    """Emit one LSH step; return the names of the new chaining value (after the permutation).

    ``sc`` is an expression for the index of the step's first constant in the table LSHxxx_SC.
    """
    alpha, beta = (v.alpha_odd, v.beta_odd) if odd else (v.alpha_even, v.beta_even)
    t = [""] * 16
    table = f"{v.name.upper()}_SC"
    for col in range(8):
        x = e.let("x", f"{cv[col]} ^ {msg[col]}")
        y = e.let("y", f"{cv[col + 8]} ^ {msg[col + 8]}")
        s = e.let("s", w.wrap(f"{x} + {y}"))
        x = e.let("x", f"{w.rotl(s, alpha)} ^ {table}[{sc} + {col}]")
        s = e.let("s", w.wrap(f"{x} + {y}"))
        y = e.let("y", w.rotl(s, beta))
        t[col] = e.let("t", w.wrap(f"{x} + {y}"))
        t[col + 8] = e.let("t", w.rotl(y, v.gamma[col])) if v.gamma[col] else y
    return [t[LSH_SIGMA[i]] for i in range(16)]


def lsh_step_pair(
    e: Emitter, w: _Words, v: LshVariant, cv: list[str], even: list[str], odd: list[str]
) -> tuple[list[str], list[str], list[str]]:
    """Emit steps 2jj and 2jj+1 and the next two expanded message halves; return new names."""
    cv = lsh_step(e, w, v, cv, even, "pair", odd=False)
    cv = lsh_step(e, w, v, cv, odd, "pair + 8", odd=True)
    new_even = [e.let("m", w.wrap(f"{odd[i]} + {even[LSH_TAU[i]]}")) for i in range(16)]
    new_odd = [e.let("m", w.wrap(f"{new_even[i]} + {odd[LSH_TAU[i]]}")) for i in range(16)]
    return cv, new_even, new_odd


def lsh_lanes(v: LshVariant, width: int) -> list[str]:
    """The multi-message compression kernel of ``v`` over ``width`` lanes as source lines."""
    w = _Words(v.word_bits)
    e = Emitter(" " * 12)
    cv = [e.let("h", f"CV[{i * width} + k]") for i in range(16)]
    even = [e.let("m", f"E[{i * width} + k]") for i in range(16)]
    odd = [e.let("m", f"O[{i * width} + k]") for i in range(16)]
    cv, even, odd = lsh_step_pair(e, w, v, cv, even, odd)
    for i in range(16):
        e.line(f"CV[{i * width} + k] = {cv[i]}")
        e.line(f"E[{i * width} + k] = {even[i]}")
        e.line(f"O[{i * width} + k] = {odd[i]}")
    name = v.name
    return [
        "@variants",
        f"def {name}_lanes_x{width}(CV: Any, M: Any, E: Any, O: Any) -> None:",
        f'    """Compress one block into each of {width} {name.upper()} chaining values in place.',
        "",
        f"    CV is the flat (16, {width}) state, M the flat (32, {width}) block words (word i of",
        f"    lane k at M[{width} * i + k]); E and O are (16, {width}) scratch rows for the",
        "    expanded message.",
        '    """',
        f"    for i in range({16 * width}):",
        "        E[i] = M[i]",
        f"        O[i] = M[i + {16 * width}]",
        f"    for pair in range(0, {16 * (v.steps // 2)}, 16):",
        f"        for k in range({width}):",
        *e.lines,
        f"    for i in range({16 * width}):",
        "        CV[i] ^= E[i]",
    ]


def lsh_single(v: LshVariant) -> list[str]:
    """The single-message compression of ``v`` (state in locals across the steps) as lines."""
    w = _Words(v.word_bits)
    e = Emitter(" " * 8)
    cv = [f"h{i}" for i in range(16)]
    even = [f"e{i}" for i in range(16)]
    odd = [f"o{i}" for i in range(16)]
    new_cv, new_even, new_odd = lsh_step_pair(e, w, v, cv, even, odd)
    for names, new in ((cv, new_cv), (even, new_even), (odd, new_odd)):
        e.line(", ".join(names) + " = " + ", ".join(new))
    loads = [f"    h{i} = CV[{i}]" for i in range(16)]
    loads += [f"    e{i} = M[{i}]" for i in range(16)]
    loads += [f"    o{i} = M[{i + 16}]" for i in range(16)]
    stores = [f"    CV[{i}] = h{i} ^ e{i}" for i in range(16)]
    return [
        "@variants",
        f"def {v.name}_compress(CV: Any, M: Any) -> None:",
        f'    """Compress the 32 block words M into the {v.name.upper()} state CV in place."""',
        *loads,
        f"    for pair in range(0, {16 * (v.steps // 2)}, 16):",
        *e.lines,
        *stores,
    ]


def lsh_module() -> str:
    """Return the text of the generated LSH module."""
    lines = [
        _header(doc="LSH-256 and LSH-512 (KS X 3262): lanes and one-message compressions."),
        "U32 = np.uint32",
        "U64 = np.uint64",
        *[f"N{n} = U64({n})" for n in range(1, 64)],
    ]
    for v in (LSH256, LSH512):
        digits = v.word_bits // 4
        table = ", ".join(f"0x{c:0{digits}X}" for row in step_constants(v) for c in row)
        lines.append(f"{v.name.upper()}_SC = np.array([{table}], dtype=np.uint{v.word_bits})")
    for v in (LSH256, LSH512):
        lines += ["", "", *lsh_lanes(v, LSH_WIDTH), "", "", *lsh_single(v)]
    return "\n".join(lines) + "\n"


def blake2_lanes(v: Blake2Variant) -> list[str]:
    """The BLAKE2 compression over the leaves of the parallel tree (one leaf per lane)."""
    width = v.leaves
    e = hash_codegen.Emitter(_FACTS[v.name], " " * 8)
    h = [e.let("h", f"H[{i * width} + k]") for i in range(8)]
    m = [e.let("m", f"M[{i * width} + k]") for i in range(16)]
    t = e.let("t", "T[k]")
    t0, t1 = t, None
    if v.word_bits == 32:
        t0 = e.let("t", f"U32({t} & U64(0xFFFFFFFF))")
        t1 = e.let("t", f"U32({t} >> U64(32))")
    f0 = e.let("f", "F0[k]")
    f1 = e.let("f", "F1[k]")
    for i, name in enumerate(hash_codegen.blake2_body(e, h, m, t0, t1, f0, f1)):
        e.line(f"H[{i * width} + k] = {name}")
    # One vector of all the leaves: left to its cost model, LLVM packs BLAKE2sp's eight leaves in
    # two xmm registers on AVX2.
    return [
        f"@variants(vector_width={width})",
        f"def {v.name}_tree_lanes(H: Any, M: Any, T: Any, F0: Any, F1: Any) -> None:",
        f'    """{v.name.upper()} compression of one block into each of {width} states in place.',
        "",
        f"    H is the flat (8, {width}) state and M the flat (16, {width}) block words (word i of",
        f"    lane k at {width} * i + k); T[k] is lane k's byte counter after the block, F0[k] and",
        "    F1[k] its final-block and last-node flag words.",
        '    """',
        f"    for k in range({width}):",
        *e.lines,
    ]


def blake2_module() -> str:
    """Return the text of the generated BLAKE2sp/BLAKE2bp module."""
    lines = [
        _header(
            "BLAKE2sp and BLAKE2bp: the leaves of the parallel tree in lanes.",
            "from twocats.lanes._generated.blake2b import blake2b_g",
            "from twocats.lanes._generated.blake2s import blake2s_g",
        ),
        "U32 = np.uint32",
        "U64 = np.uint64",
    ]
    for v in (BLAKE2S, BLAKE2B):
        lines += hash_codegen.constants(_FACTS[v.name])
    for v in (BLAKE2S, BLAKE2B):
        lines += ["", "", *blake2_lanes(v)]
    return "\n".join(lines) + "\n"


def sha256_narrow_kernel(width: int) -> list[str]:
    """A SHA-256 compression over a constant ``width`` lanes (the flat layout vectorizes).

    The project's general SHA-256 lane kernel is built for 16 lanes per vector; j-lanes and
    j-pointers with 4 or 8 lanes run on this one instead.  Its rounds call the round and
    schedule helpers of the general kernel's module.
    """
    e = hash_codegen.Emitter(_FACTS["sha256"], " " * 8)
    h = [e.let("h", f"HF[{i * width} + k]") for i in range(8)]
    w = [e.let("w", f"MF[{i * width} + k]") for i in range(16)]
    for i, name in enumerate(hash_codegen.sha2_body(e, h, w)):
        e.line(f"HF[{i * width} + k] = {name}")
    return [
        "@variants",
        f"def sha256_lanes_x{width}(H: Any, M: Any, T: Any, F: Any, n: Any) -> None:",
        f'    """SHA-256 compression of one block into each lane of H (8, {width}) in place.',
        "",
        f"    M (16, {width}) holds the decoded block words.  T, F and n are not read: the",
        "    arguments match the project's general lane kernel, and every lane is computed.",
        '    """',
        "    # Flat views of the rows, made without numba's runtime (an artefact has none).",
        f"    HF = carray(pointer(U64(H.ctypes.data)), ({8 * width},), U32)",
        f"    MF = carray(pointer(U64(M.ctypes.data)), ({16 * width},), U32)",
        f"    for k in range({width}):",
        *e.lines,
    ]


def sha256tree_module() -> str:
    """Return the text of the generated narrow SHA-256 lane kernel of the SHA-2 tree modes."""
    lines = [
        _header(
            "SHA-2 tree modes: SHA-256 over 8 lanes (j-lanes and j-pointers).",
            "from numba.np.numpy_support import carray",
            "from twocats.lanes._generated.sha256 import sha256_round, sha256_schedule",
            "from twocats.lanes._words import pointer",
        ),
        "U32 = np.uint32",
        "U64 = np.uint64",
        *hash_codegen.constants(_FACTS["sha256"]),
        "",
        "",
        *sha256_narrow_kernel(SHA256_NARROW),
    ]
    return "\n".join(lines) + "\n"


def generate_all() -> dict[str, str]:
    """Return every generated file's name and content."""
    return {
        "keccak.py": keccak_module(),
        "lsh.py": lsh_module(),
        "blake2tree.py": blake2_module(),
        "sha256tree.py": sha256tree_module(),
    }
