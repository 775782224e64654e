"""Generator of the compiled TwoCats slice-fill kernels (``twocats/kdf/fill/_generated/``).

One module is emitted per lane count in :data:`LANES`.  Each holds two kernels, one per block hash:
``fill_final_l<L>`` (the final and 2014 versions, spec twocats.md §6-§9) and ``fill_march_l<L>``
(March 2014, twocats-2014-03.md §8-§11).  They are declared with ``twocats.simd._jit.variants`` so
that the same source compiles twice: with the vectorizers on (backend ``simd``, SLP included) and
with them off (backend ``scalar``), and :mod:`twocats.kdf.fill.kernels` specialises each per hash
type, so that a kernel links only its own state hash.  A kernel fills one slice of the regions
``p_first, p_first + p_step, ...``; addressing (:mod:`twocats.kdf.fill.addressing`) and the state
hash (:mod:`twocats.kdf.fill.statehash`) are ordinary kernel source, only the lane rows are
generated. The kernels' interface (lane counts, names, scratch arrays, arguments) is
:mod:`twocats.kdf.fill.args`.

The shape follows the measured recipe of numba-simd.md §4: the lane state lives in ``L`` scalar
locals, every index is ``np.uint64``, each row of ``L`` words does all its loads before any store
(so the SLP vectorizer can pack the lanes), and the serial multiply chain runs in the same loop as
the lanes, a short chunk of rows ahead, so that its latency hides under the memory traffic.  The
unrolled lane code uses a fresh name for every temporary, which keeps numba's SSA pass cheap.

``python -m codegen`` rewrites the committed modules (with every other generated file),
and a test checks that they equal the output of :func:`render_all`.
"""

from __future__ import annotations

from pathlib import Path

import twocats.kdf.fill
from codegen.emit import HEADER, Emitter
from twocats.kdf.fill.args import CHAINS, LANES, SCRATCH, kernel_name, module_name

__all__ = ["generated_dir", "render_all", "render_module", "scratch_args"]

# Rows of lanes per chunk: the multiply chain of a chunk runs just before its rows (a power of two).
_CHUNK_ROWS = 8

# How far ahead (in words) the kernels prefetch the source block and the block being written.  The
# hardware prefetchers stop at every 4 KiB page, and the source block sits at a new place in memory
# for every block, so without these hints each page of a 1 GiB fill starts with a cold miss.
_PREFETCH_WORDS = 1024

# Words in a 64-byte sub-block, the shape that gets a path with its rows unrolled.
_SHORT_SUB_WORDS = 16

# From this many lanes on, one row is at least half a cache line and gets its own prefetch; smaller
# rows share one prefetch per chunk.
_PREFETCH_PER_ROW_LANES = 8

_DOC = """TwoCats slice fill for {lanes} lane{plural} (from codegen.fill).

Each kernel is specialised per hash type by twocats.kdf.fill.kernels, which binds its globals
``state_hash`` (twocats.kdf.fill.statehash) and ``N_WORDS`` (the state words W)."""

_IMPORTS = """
import numpy as np

from twocats.kdf.fill.addressing import source_block
from twocats.simd._jit import variants
from twocats.simd.intrinsics import prefetch_read, prefetch_write

"""


def generated_dir() -> Path:
    """Return the folder that holds the generated modules."""
    return Path(twocats.kdf.fill.__file__).resolve().parent / "_generated"


def _emit_state_hash(
    w: Emitter, depth: int, march: bool, value: str, dest: str, offset: str, count: str
) -> None:
    """Write the first ``count`` words of ``Hv(states[p], value)`` to ``dest[offset:]``."""
    w.emit(
        depth,
        f"state_hash({march}, states[p], {value}, {dest}, {offset}, {count}, w32, w64)",
    )


def _emit_final_chain(w: Emitter, depth: int, steps: str) -> None:
    """Emit ``steps`` steps of the final block hash's multiply chain over ``ca`` to ``cd``."""
    w.emit(depth, f"for _m in range({steps}):")
    w.emit(depth + 1, "ca = ca ^ ((cb * cc) >> U32)")
    w.emit(depth + 1, "cb = (cb + cc) & MASK32")
    w.emit(depth + 1, "cc = cc ^ ((ca * cd) >> U32)")
    w.emit(depth + 1, "cd = (cd + ca) & MASK32")


def _emit_rows(w: Emitter, depth: int, lanes: int, chain: str) -> None:
    """Emit the rows of one sub-block: per chunk of rows, the multiply chain, then the lanes.

    The chain never reads memory and the lanes never read the chain, so running the chain steps of
    ``chunk`` rows ahead of those rows gives the same result as the spec's row-by-row order while
    leaving one short chain loop per chunk instead of one per row.
    """
    w.emit(depth, "for _chunk in range(n_chunks):")
    if chain == "final":
        _emit_final_chain(w, depth + 1, "chunk_steps")
    else:
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
    w.emit(d, "q = q + n_lanes")
    w.emit(d, "f = f + n_lanes")
    w.emit(d, "t = t + n_lanes")


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


def _emit_short_sub_blocks(w: Emitter, depth: int, lanes: int) -> None:
    """Emit the final block hash for 64-byte sub-blocks with the rows of a sub-block unrolled.

    64-byte sub-blocks are the default and the common password-dependent shape; a sub-block is then
    only ``16 / lanes`` rows, so loops per sub-block would cost more than the rows themselves.
    """
    rows = _SHORT_SUB_WORDS // lanes
    w.emit(depth, "for _sb in range(n_sub):")
    d = depth + 1
    w.emit(d, "q = prev + (np.uint64(mem[f]) & sub_mask) * SHORT_SUB")
    _emit_final_chain(w, d, "short_steps")
    w.emit(d, "prefetch_read(mem, f + AHEAD)")
    w.emit(d, "prefetch_write(mem, t + AHEAD)")
    for r in range(rows):
        _emit_lane_row(w, d, lanes, suffix=f"_{r}", first=r * lanes)
    w.emit(d, "f = f + SHORT_SUB")
    w.emit(d, "t = t + SHORT_SUB")


def _emit_block(w: Emitter, depth: int, lanes: int, chain: str) -> None:
    """Emit one BlockHash of ``src`` and ``prev`` into ``dst``, then the state hash ``Hv``."""
    for k in range(lanes):
        w.emit(depth, f"s{k} = states[p, {k}]")
    if chain == "final":
        for k, name in enumerate("abcd"):
            w.emit(depth, f"c{name} = np.uint64(states[p, {k}])")
        w.emit(depth, "f = src")
        w.emit(depth, "t = dst")
        w.emit(depth, "if sub == SHORT_SUB:")
        _emit_short_sub_blocks(w, depth + 1, lanes)
        w.emit(depth, "else:")
        w.emit(depth + 1, "for _sb in range(n_sub):")
        w.emit(depth + 2, "q = prev + (np.uint64(mem[f]) & sub_mask) * sub")
        _emit_rows(w, depth + 2, lanes, chain)
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
        _emit_rows(w, depth + 2, lanes, chain)
        final_value = "lo"
    for k in range(lanes):
        w.emit(depth, f"states[p, {k}] = s{k}")
    _emit_state_hash(w, depth, chain == "march", final_value, "states[p]", "U0", "n_words")


def _emit_slice(w: Emitter, depth: int, lanes: int, chain: str) -> None:
    """Emit the loop over the blocks of one region's slice (addressing plus block hash)."""
    w.emit(depth, "for i in range(first, end):")
    d = depth + 1
    w.emit(d, "prev = base + (i - U1) * bl")
    w.emit(d, "dst = base + i * bl")
    w.emit(
        d,
        "src = source_block(i, dependent, states[p, 0], states[p, 1], u_done, u_par, p, u_bpt)"
        " * bl",
    )
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
    constants += [("CHUNK_ROWS", str(_CHUNK_ROWS)), ("AHEAD", str(_PREFETCH_WORDS))]
    for name, value in constants:
        w.emit(1, f"{name} = np.uint64({value})")
    for k in range(lanes if march else max(lanes, _SHORT_SUB_WORDS)):
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
        "chunk = min(rows, CHUNK_ROWS)",
        "n_chunks = rows // chunk",
    ]
    if not march:
        lines += [
            "chunk_steps = chunk * n_mul",
            f"SHORT_SUB = np.uint64({_SHORT_SUB_WORDS})",
            "short_steps = (SHORT_SUB // n_lanes) * n_mul",
        ]
    lines.append("n_words = np.uint64(N_WORDS)")
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


def render_all() -> dict[str, str]:
    """Return ``{file name: source}`` for every generated fill module."""
    return {f"{module_name(lanes)}.py": render_module(lanes) for lanes in LANES}
