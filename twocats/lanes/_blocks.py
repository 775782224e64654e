"""The simd build's block decode: whole blocks of a group of lanes, transposed in vector registers.

The lane compressions read message word i of lane l at M[i, l] (lanes innermost), while each
lane's block lies in its message as 16 consecutive words.  The scheduler's plain decode moves the
words one at a time; :func:`transposed_groups` loads each lane's block as whole 512-bit vectors,
transposes every group of as many lanes as one vector holds (16 of 32-bit words, 8 of 64-bit
words) with two-source shuffles, byte-swaps where the hash's words are big-endian, and stores
whole rows of M.  Its vector code belongs to the simd build only: the scheduler binds it there
with :class:`~twocats.simd._jit.PerBackend` and :func:`no_groups` in the scalar build.

Kernel code only: importing this module imports numba.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from twocats.simd._jit import jit
from twocats.simd.isa import VECTOR_BITS

__all__ = ["no_groups", "transposed_groups"]

#: The words of a lane's block.
BLOCK_WORDS = 16

#: How many blocks ahead of each lane's block the decode asks the cache for: the lanes read
#: many messages at once, more streams than the hardware prefetchers follow.
PREFETCH_BLOCKS = 4


def _butterfly(builder: ir.IRBuilder, rows: list[Any], size: int) -> list[Any]:
    """Transpose ``size`` vectors of ``size`` words: after the stages, word k of vector j is
    word j of input vector k.  Each stage swaps the off-diagonal halves of blocks of ``2 s``
    vectors, one two-source shuffle per output vector."""
    index = ir.VectorType(ir.IntType(32), size)
    step = size // 2
    while step:
        low = ir.Constant(index, [p if not p & step else size + p - step for p in range(size)])
        high = ir.Constant(index, [p + step if not p & step else size + p for p in range(size)])
        out = list(rows)
        for i in range(size):
            if not i & step:
                out[i] = builder.shuffle_vector(rows[i], rows[i + step], low)
                out[i + step] = builder.shuffle_vector(rows[i], rows[i + step], high)
        rows = out
        step //= 2
    return rows


def _transpose_intrinsic(swap: bool) -> Any:
    """Build ``f(M, meta, T, first)``: decode the next blocks of lanes first..first+n-1 into their
    columns of M, n the words of one vector, byte-swapping each word if ``swap``.

    Lane l's next block starts T[l] bytes into its message of meta[1, l] bytes at address
    meta[0, l]; where that block is not whole, M's own words are loaded in its place (the
    scheduler decodes such a block word by word afterwards, or the lane is idle).
    """

    def typer(typingctx: Any, M: Any, meta: Any, T: Any, first: Any) -> Any:
        if not isinstance(M, types.Array) or M.ndim != 2 or M.layout != "C":
            return None
        if M.dtype not in (types.uint32, types.uint64) or meta.layout != "C":
            return None

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            m_type = signature.args[0]
            rows = context.make_array(m_type)(context, builder, args[0])
            lanes = context.make_array(signature.args[1])(context, builder, args[1])
            starts = context.make_array(signature.args[2])(context, builder, args[2]).data
            lane = args[3]
            bits = m_type.dtype.bitwidth
            size = VECTOR_BITS // bits
            vector = ir.VectorType(ir.IntType(bits), size)
            i64 = ir.IntType(64)
            block_bytes = ir.Constant(i64, BLOCK_WORDS * bits // 8)
            nowhere = builder.ptrtoint(rows.data, i64)
            # meta is C-contiguous: its rows 0 and 1 (addresses, lengths) are nlanes words apart.
            stride = builder.extract_value(lanes.shape, 1)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            hint = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            prefetch = builder.module.globals.get("llvm.prefetch.p0") or ir.Function(
                builder.module, hint, "llvm.prefetch.p0"
            )
            ahead = ir.Constant(i64, PREFETCH_BLOCKS * BLOCK_WORDS * bits // 8)
            blocks = []
            for k in range(size):
                index = builder.add(lane, ir.Constant(i64, k))
                base = builder.load(builder.gep(lanes.data, [index]))
                length = builder.load(builder.gep(lanes.data, [builder.add(index, stride)]))
                start = builder.load(builder.gep(starts, [index]))
                here = builder.add(base, start)
                whole = builder.icmp_unsigned("<=", builder.add(start, block_bytes), length)
                address = builder.select(whole, here, nowhere)
                blocks.append(builder.inttoptr(address, vector.as_pointer()))
                # A prefetch never faults, wherever the lane's message ends.
                later = builder.inttoptr(builder.add(here, ahead), i8p)
                flags = [ir.Constant(i32, flag) for flag in (0, 3, 1)]
                builder.call(prefetch, [later, *flags])
            # M is C-contiguous: word (i, l) lies at i * nlanes + l.
            nlanes = builder.extract_value(rows.shape, 1)
            for part in range(BLOCK_WORDS // size):
                loaded = [
                    builder.load(builder.gep(block, [ir.Constant(i64, part)]), align=1)
                    for block in blocks
                ]
                words = _butterfly(builder, loaded, size)
                if swap:
                    name = f"llvm.bswap.v{size}i{bits}"
                    bswap = builder.module.globals.get(name) or ir.Function(
                        builder.module, ir.FunctionType(vector, [vector]), name
                    )
                    words = [builder.call(bswap, [word]) for word in words]
                for j, word in enumerate(words):
                    row = builder.mul(ir.Constant(i64, part * size + j), nlanes)
                    target = builder.gep(rows.data, [builder.add(row, lane)])
                    address = builder.bitcast(target, vector.as_pointer())
                    builder.store(word, address, align=bits // 8)
            return context.get_dummy_value()

        return types.void(M, meta, T, first), codegen

    typer.__name__ = "transposed_block_swapped" if swap else "transposed_block"
    return intrinsic(typer)


_transposed = _transpose_intrinsic(swap=False)
_transposed_swapped = _transpose_intrinsic(swap=True)


@jit
def transposed_groups(M: Any, meta: Any, T: Any, width: Any, swap: Any) -> Any:
    """Decode the next whole blocks of lanes 0..width-1 (see :func:`_transpose_intrinsic`) into
    M, one group of lanes per vector, byte-swapping each word if ``swap``; return how many lanes
    it decoded (the whole groups within ``width``)."""
    size = VECTOR_BITS // (8 * M.itemsize)
    first = 0
    while first + size <= width:
        if swap:
            _transposed_swapped(M, meta, T, first)
        else:
            _transposed(M, meta, T, first)
        first += size
    return first


@jit
def no_groups(M: Any, meta: Any, T: Any, width: Any, swap: Any) -> Any:
    """The scalar build's stand-in for :func:`transposed_groups`: it decodes no lane (the plain
    decode does them all)."""
    return 0
