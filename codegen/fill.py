"""Generator of the compiled TwoCats slice-fill kernels (``twocats/kdf/fill/_generated/``).

One module is emitted per lane count in :data:`LANES`.  Each holds two kernels, one per block hash:
``fill_final_l<L>`` (the final and 2014 versions, spec twocats.md §6-§9) and ``fill_march_l<L>``
(March 2014, twocats-2014-03.md §8-§11).  They are declared with ``twocats.simd._jit.variants`` so
that the same source compiles twice: with the vectorizers on (backend ``simd``, SLP included) and
with them off (backend ``scalar``), and :mod:`twocats.kdf.fill.family` specialises each per hash
type, so that a kernel links only its own state hash.  A kernel fills one slice of the regions
``p_first, p_first + p_step, ...``; addressing (:mod:`twocats.kdf.fill.addressing`) and the state
hash (:mod:`twocats.kdf.fill.statehash`) are ordinary kernel source, only the lane rows are
generated. The kernels' interface (lane counts, names, scratch arrays, arguments) is
:mod:`twocats.kdf.fill.args`.

The shape follows the measured recipe of numba-simd.md §4: the lane state lives in ``L`` scalar
locals, every index is ``np.uint64``, each row of ``L`` words does all its loads before any store
(so the SLP vectorizer can pack the lanes), and the unrolled lane code uses a fresh name for every
temporary, which keeps numba's SSA pass cheap.  The final block hash is as fast as its multiply
chain allows only if nothing else waits on the chain's critical path: the chain runs in the same
loop as the lanes, one cache line of rows at a time, so that the core overlaps the two; its xors
stay apart (``opaque``); the source block's lines are prefetched a whole block ahead where the
addressing allows it; and the state hash between two blocks slices no array.

``python -m codegen`` rewrites the committed modules (with every other generated file),
and a test checks that they equal the output of :func:`render_all`.
"""

from __future__ import annotations

from pathlib import Path

import twocats.kdf.fill
from codegen import lanes as hash_codegen
from codegen.emit import HEADER, Emitter
from twocats.hashes import HASHES, HashFacts
from twocats.kdf.fill.args import CHAINS, DIGEST_AT, LANES, SCRATCH, kernel_name, module_name

__all__ = ["generated_dir", "render_all", "render_compress", "render_module", "scratch_args"]

# Rows of lanes per chunk of the March 2014 kernels: the multiply chain of a chunk runs just before
# its rows (a power of two).
_CHUNK_ROWS = 8

# Words in a 64-byte cache line: the final kernels unroll the rows of one line and prefetch once per
# line, and a sub-block of at least one line (64-byte sub-blocks are the default) takes that path.
_LINE_WORDS = 16

# How far ahead (in words) the kernels prefetch the source block and the block being written.  The
# hardware prefetchers stop at every 4 KiB page, and the source block sits at a new place in memory
# for every block, so without these hints each page of a 1 GiB fill starts with a cold miss.
_PREFETCH_WORDS = 1024

# From this many lanes on, one row is at least half a cache line and gets its own prefetch; smaller
# rows share one prefetch per chunk (March 2014 kernels).
_PREFETCH_PER_ROW_LANES = 8

_DOC = """TwoCats slice fill for {lanes} lane{plural} (from codegen.fill).

Each kernel is specialised per hash type by twocats.kdf.fill.family, which binds its globals
``state_hash`` (twocats.kdf.fill.statehash) and ``N_WORDS`` (the state words W)."""

_IMPORTS = """
import numpy as np

from twocats.kdf.fill.addressing import source_block
from twocats.simd._jit import variants
from twocats.simd.intrinsics import opaque, prefetch_read, prefetch_write

"""


def generated_dir() -> Path:
    """Return the folder that holds the generated modules."""
    return Path(twocats.kdf.fill.__file__).resolve().parent / "_generated"


def _emit_state_hash(
    w: Emitter, depth: int, march: bool, value: str, dest: str, offset: str, count: str
) -> None:
    """Write the first ``count`` words of ``Hv(states[p], value)`` to ``dest[offset:]``.

    The state hash leaves its digest in the scratch ``w32``; ``dest`` is ``mem`` or ``states``.
    """
    w.emit(depth, f"state_hash({march}, states, p, {value}, w32, w64)")
    w.emit(depth, f"for k in range({count}):")
    target = "states[p, k]" if dest == "states" else f"{dest}[{offset} + k]"
    w.emit(depth + 1, f"{target} = w32[DIGEST_AT + k]")


def _emit_final_chain(w: Emitter, depth: int, steps: str) -> None:
    """Emit ``steps`` steps of the final block hash's multiply chain over ``ca`` to ``cd``.

    ``opaque`` keeps LLVM from merging the xors of successive products, a rewrite that lengthens
    the chain's critical path (the bound of the whole fill) from five instructions to six.
    """
    w.emit(depth, f"for _m in range({steps}):")
    w.emit(depth + 1, "ca = opaque(ca ^ ((cb * cc) >> U32))")
    w.emit(depth + 1, "cb = (cb + cc) & MASK32")
    w.emit(depth + 1, "cc = opaque(cc ^ ((ca * cd) >> U32))")
    w.emit(depth + 1, "cd = (cd + ca) & MASK32")


def _emit_advance(w: Emitter, depth: int, words: str) -> None:
    """Move the three pointers of the lanes (``q``, ``f`` and ``t``) on by ``words``."""
    for name in "qft":
        w.emit(depth, f"{name} = {name} + {words}")


def _emit_march_rows(w: Emitter, depth: int, lanes: int) -> None:
    """Emit the rows of one March 2014 sub-block: per chunk of rows, the chain, then the lanes.

    The March 2014 chain reads the sub-block's first word, so it cannot run ahead of the memory.
    """
    w.emit(depth, "for _chunk in range(n_chunks):")
    w.emit(depth + 1, "for _cr in range(chunk):")
    w.emit(depth + 2, "for mi in range(n_mul):")
    w.emit(depth + 3, "prod = lo * odd[mi]")
    w.emit(depth + 3, "lo = (prod & MASK32) ^ rv")
    w.emit(depth + 3, "rv = (rv + (prod >> U32)) & MASK32")
    prefetch = ("prefetch_read(mem, f + AHEAD)", "prefetch_write(mem, t + AHEAD)")
    if lanes < _PREFETCH_PER_ROW_LANES:
        for line in prefetch:
            w.emit(depth + 1, line)
    w.emit(depth + 1, "for _row in range(chunk):")
    d = depth + 2
    if lanes >= _PREFETCH_PER_ROW_LANES:
        for line in prefetch:
            w.emit(d, line)
    _emit_lane_row(w, d, lanes)
    _emit_advance(w, d, "n_lanes")


def _emit_lane_row(w: Emitter, d: int, lanes: int, suffix: str = "", first: int = 0) -> None:
    """Emit one row of lanes: read ``q`` and ``f``, mix into the state, write ``t``.

    The row's words are ``first`` to ``first + lanes - 1``; its temporaries end in ``suffix``.
    """
    for k in range(lanes):
        w.emit(d, f"x{k}{suffix} = mem[q + {_off(first + k)}]")
    for k in range(lanes):
        w.emit(d, f"y{k}{suffix} = mem[f + {_off(first + k)}]")
    for k in range(lanes):
        w.emit(d, f"z{k}{suffix} = np.uint32(np.uint32(s{k} + x{k}{suffix}) ^ y{k}{suffix})")
        w.emit(d, f"s{k} = np.uint32((z{k}{suffix} << U8) | (z{k}{suffix} >> U24))")
    for k in range(lanes):
        w.emit(d, f"mem[t + {_off(first + k)}] = s{k}")


def _off(k: int) -> str:
    """Return the uint64 constant name for lane offset ``k``."""
    return f"K{k}"


def _emit_final_lines(w: Emitter, depth: int, lanes: int) -> None:
    """Emit the final block hash for sub-blocks of whole cache lines, one line per step.

    At the block's start the source's first lines are prefetched, unless the block before did it.
    Each line then runs its rows' steps of the multiply chain, prefetches, and mixes its rows,
    unrolled: the chain never reads memory and the lanes never read the chain, so the core runs
    the two side by side.
    """
    w.emit(depth, "if burst:")
    w.emit(depth + 1, "for _k in range(n_burst):")
    w.emit(depth + 2, "prefetch_read(mem, src + _k * LINE)")
    w.emit(depth, "for _sb in range(n_sub):")
    d = depth + 1
    w.emit(d, "q = prev + (np.uint64(mem[f]) & sub_mask) * sub")
    w.emit(d, "for _line in range(sub_lines):")
    d += 1
    _emit_final_chain(w, d, "line_steps")
    w.emit(d, "prefetch_read(mem, f + ahead)")
    w.emit(d, "prefetch_write(mem, t + AHEAD)")
    for r in range(_LINE_WORDS // lanes):
        _emit_lane_row(w, d, lanes, suffix=f"_{r}", first=r * lanes)
    _emit_advance(w, d, "LINE")


def _emit_final_rows(w: Emitter, depth: int, lanes: int) -> None:
    """Emit the final block hash for sub-blocks shorter than a line, row by row."""
    w.emit(depth, "for _sb in range(n_sub):")
    d = depth + 1
    w.emit(d, "q = prev + (np.uint64(mem[f]) & sub_mask) * sub")
    w.emit(d, "for _row in range(rows):")
    _emit_final_chain(w, d + 1, "n_mul")
    w.emit(d + 1, "prefetch_read(mem, f + ahead)")
    w.emit(d + 1, "prefetch_write(mem, t + AHEAD)")
    _emit_lane_row(w, d + 1, lanes)
    _emit_advance(w, d + 1, "n_lanes")


def _emit_block(w: Emitter, depth: int, lanes: int, chain: str) -> None:
    """Emit one BlockHash of ``src`` and ``prev`` into ``dst``, then the state hash ``Hv``."""
    for k in range(lanes):
        w.emit(depth, f"s{k} = states[p, {k}]")
    if chain == "final":
        for k, name in enumerate("abcd"):
            w.emit(depth, f"c{name} = np.uint64(states[p, {k}])")
        w.emit(depth, "f = src")
        w.emit(depth, "t = dst")
        w.emit(depth, "if sub >= LINE:")
        _emit_final_lines(w, depth + 1, lanes)
        w.emit(depth, "else:")
        _emit_final_rows(w, depth + 1, lanes)
        final_value = "ca"
    else:
        w.emit(depth, "for oi in range(n_mul):")
        w.emit(depth + 1, "odd[oi] = np.uint64(states[p, oi] | np.uint32(1))")
        w.emit(depth, "lo = U1")
        w.emit(depth, "for _rep in range(reps):")
        w.emit(depth + 1, "f = src")
        w.emit(depth + 1, "t = dst")
        w.emit(depth + 1, "for _sb in range(n_sub):")
        w.emit(depth + 2, "rv = np.uint64(mem[f])")
        w.emit(depth + 2, "q = prev + (rv & sub_mask) * sub")
        _emit_march_rows(w, depth + 2, lanes)
        final_value = "lo"
    for k in range(lanes):
        w.emit(depth, f"states[p, {k}] = s{k}")
    _emit_state_hash(w, depth, chain == "march", final_value, "states", "", "n_words")


def _emit_slice(w: Emitter, depth: int, lanes: int, chain: str) -> None:
    """Emit the loop over the blocks of one region's slice (addressing plus block hash)."""
    w.emit(depth, "for i in range(first, end):")
    d = depth + 1
    w.emit(d, "prev = base + (i - U1) * bl")
    w.emit(d, "dst = base + i * bl")
    addressing = "dependent, states[p, 0], states[p, 1], u_done, u_par, p, u_bpt"
    w.emit(d, f"src = source_block(i, {addressing}) * bl")
    if chain == "final":
        # A data-independent block knows the next block's source: it prefetches that one, a
        # whole block ahead, instead of its own lines AHEAD words on.
        w.emit(d, "ahead = AHEAD")
        w.emit(d, "burst = dependent != 0 or i == first")
        w.emit(d, "if dependent == 0 and i + U1 < end:")
        w.emit(d + 1, f"ahead = source_block(i + U1, {addressing}) * bl - src")
    _emit_block(w, d, lanes, chain)


def scratch_args(march: bool) -> str:
    """Return the kernel's scratch parameter names, comma-separated."""
    return ", ".join(name for name, _dtype, _words in SCRATCH["march" if march else "final"])


def _emit_kernel(w: Emitter, lanes: int, chain: str) -> None:
    """Emit the region kernel of one block hash (``chain``) for ``lanes`` lanes."""
    march = chain == "march"
    w.emit(0, "@variants(slp=True)")
    w.emit(0, f"def {kernel_name(chain, lanes)}(")
    w.emit(1, "mem, states, " + scratch_args(march) + ", p_first, p_step, done, per_slice, bpt,")
    tail = " time_cost," if march else ""
    w.emit(1, "blocklen, sub_blocklen, parallelism, multiplies, dependent," + tail)
    w.emit(0, "):")
    what = "March 2014 block hash" if march else "final/2014 block hash"
    w.emit(1, '"""Fill blocks [done, done + per_slice) of regions p_first, p_first + p_step, ...')
    w.emit(0, "")
    w.emit(1, f"The {what}; the arguments are those of twocats.kdf.fill.args.FillArgs.  The")
    w.emit(1, "globals state_hash and N_WORDS are bound per hash type (Variants.specialise).")
    w.emit(1, '"""')
    constants = [("U0", "0"), ("U1", "1"), ("U8", "8"), ("U24", "24"), ("U32", "32")]
    constants += [("MASK32", "0xFFFFFFFF"), ("n_lanes", str(lanes))]
    constants += [("AHEAD", str(_PREFETCH_WORDS))]
    if march:
        constants += [("CHUNK_ROWS", str(_CHUNK_ROWS))]
    else:
        constants += [("LINE", str(_LINE_WORDS))]
    for name, value in constants:
        w.emit(1, f"{name} = np.uint64({value})")
    for k in range(lanes if march else max(lanes, _LINE_WORDS)):
        w.emit(1, f"{_off(k)} = np.uint64({k})")
    lines = [
        "u_done = np.uint64(done)",
        "end = u_done + np.uint64(per_slice)",
        "u_bpt = np.uint64(bpt)",
        "bl = np.uint64(blocklen)",
        "u_par = np.uint64(parallelism)",
        "n_mul = np.uint64(multiplies)",
    ]
    if march:
        lines.append("reps = U1 << np.uint64(time_cost)")
    lines += [
        "sub = bl if dependent == 0 else np.uint64(sub_blocklen)",
        "n_sub = bl // sub",
        "sub_mask = n_sub - U1",
        "rows = sub // n_lanes",
    ]
    if march:
        lines += ["chunk = min(rows, CHUNK_ROWS)", "n_chunks = rows // chunk"]
    else:
        lines += [
            "sub_lines = sub // LINE",
            "line_steps = (LINE // n_lanes) * n_mul",
            "n_burst = min(AHEAD // LINE, bl // LINE)",
        ]
    lines += ["n_words = np.uint64(N_WORDS)", f"DIGEST_AT = np.uint64({DIGEST_AT})"]
    for line in lines:
        w.emit(1, line)
    w.emit(1, "for p in range(np.uint64(p_first), u_par, np.uint64(p_step)):")
    w.emit(2, "base = p * u_bpt * bl")
    w.emit(2, "first = u_done")
    w.emit(2, "if dependent == 0 and u_done == U0:")
    # Block 0 := Expand(states[p], blocklen); the state itself is not changed.  The final version
    # writes whole digests only, March 2014 truncates the last one.
    w.emit(3, "first = U1")
    if march:
        w.emit(3, "n_exp = (bl + n_words - U1) // n_words")
    else:
        w.emit(3, "n_exp = bl // n_words")
    w.emit(3, "for ck in range(n_exp):")
    w.emit(4, "n_out = min(n_words, bl - ck * n_words)")
    _emit_state_hash(w, 4, march, "ck", "mem", "base + ck * n_words", "n_out")
    _emit_slice(w, 2, lanes, chain)


def render_module(lanes: int) -> str:
    """Return the source text of the generated module for ``lanes`` lanes (both block hashes)."""
    if lanes not in LANES:
        raise ValueError(f"lanes must be one of {LANES}")
    w = Emitter()
    for chain in CHAINS:
        if chain != CHAINS[0]:
            w.emit(0, "")
            w.emit(0, "")
        _emit_kernel(w, lanes, chain)
    plural = "s" if lanes > 1 else ""
    doc = _DOC.format(lanes=lanes, plural=plural)
    return HEADER.format(doc=doc) + _IMPORTS + "\n" + "\n".join(w.lines) + "\n"


def _compress_function(spec: HashFacts) -> list[str]:
    """The unrolled BLAKE2 compression of ``spec`` on the words of one scratch array."""
    name = spec.name
    e = hash_codegen.Emitter(spec, "    ")
    h = [e.let("h", f"w[h + U64({i})]") for i in range(8)]
    m = [e.let("m", f"w[m + U64({i})]") for i in range(16)]
    f = e.let("f", f"{spec.word_type}(F_ONES) if last else {spec.word_type}(0)")
    if spec.word_bits == 32:
        t0 = e.let("t", "U32(U64(t) & MASK32)")
        out = hash_codegen.blake2_body(e, h, m, t0, e.let("t", "U32(U64(t) >> N32)"), f)
    else:
        out = hash_codegen.blake2_body(e, h, m, e.let("t", "U64(t)"), None, f)
    for i, word in enumerate(out):
        e.line(f"w[h + U64({i})] = {word}")
    return [
        "@jit",
        f"def {name}_compress(w: Any, h: Any, m: Any, t: Any, last: Any) -> None:",
        f'    """{name.upper()} compression of the block w[m:m+16] into w[h:h+8], unrolled.',
        "",
        "    ``t`` is the count of bytes hashed after this block and ``last`` marks the final",
        "    block; ``h`` and ``m`` are uint64 offsets.",
        '    """',
        *e.lines,
    ]


def render_compress() -> str:
    """Return the source of the unrolled BLAKE2 compressions of the fill's state hash.

    The state hash runs between two blocks, on the critical path of the fill: unrolled, with
    the work vector in locals, a compression costs about half of a loop over its rounds.  The
    rounds are those of the lane kernels (``codegen.lanes``), emitted once more here because the
    KDF does not import the lanes package.
    """
    facts = [spec for spec in HASHES if spec.is_blake2]
    # The shift amounts of the 64-bit rotations, and 32 (the 32-bit counter's high word).
    wide = [spec for spec in facts if spec.word_bits == 64]
    amounts = {n for spec in wide for r in spec.rotations for n in (r, 64 - r)} | {32}
    shifts = [f"N{n} = U64({n})" for n in sorted(amounts)]
    lines = [
        HEADER.format(doc="BLAKE2s and BLAKE2b compressions of the fill's state hash, unrolled."),
        "from typing import Any",
        "",
        "import numpy as np",
        "",
        "from twocats.simd._jit import jit",
        "",
        "U32 = np.uint32",
        "U64 = np.uint64",
        "MASK32 = U64(0xFFFFFFFF)",
        "F_ONES = U64(0xFFFFFFFFFFFFFFFF)",
        *shifts,
    ]
    for spec in facts:
        lines += hash_codegen.constants(spec)
    for spec in facts:
        lines += ["", "", *hash_codegen.helpers(spec)]
    for spec in facts:
        lines += ["", "", *_compress_function(spec)]
    return "\n".join(lines) + "\n"


def render_all() -> dict[str, str]:
    """Return ``{file name: source}`` for every generated fill module."""
    files = {f"{module_name(lanes)}.py": render_module(lanes) for lanes in LANES}
    files["compress.py"] = render_compress()
    return files
