"""Kernel intrinsics of the fill: ``prefetch_read(array, index)``, ``prefetch_write``, ``opaque``.

The prefetches lower to LLVM's ``llvm.prefetch`` (``prefetcht0`` or ``prefetchw`` on x86), a hint
that never faults, so an index just past the end of the array is harmless.  ``opaque(x)`` returns
``x`` through an empty inline assembly statement: no instruction, but LLVM can no longer rewrite the
expression that made ``x`` together with the ones that use it.  With ``NUMBA_DISABLE_JIT=1`` they
are plain functions (the prefetches do nothing, ``opaque`` returns its argument).  Importing this
module imports numba.
"""

from __future__ import annotations

from typing import Any

from twocats.simd import _jit

__all__ = ["opaque", "prefetch_read", "prefetch_write"]


def _prefetch_intrinsic(write: bool) -> Any:
    """Build a kernel intrinsic ``f(array, index)`` that prefetches the line holding array[index].

    It lowers to LLVM's ``llvm.prefetch`` (``prefetcht0`` or ``prefetchw`` on x86), a hint that
    never faults, so an index just past the end of the array is harmless.
    """
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    def typer(typingctx: Any, array: Any, index: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            address = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
            i32 = ir.IntType(32)
            hint = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
            name = "llvm.prefetch.p0"
            function = builder.module.globals.get(name) or ir.Function(builder.module, hint, name)
            # Arguments: read (0) or write (1), locality 3 (keep in all cache levels), data cache.
            flags = (int(write), 3, 1)
            builder.call(function, [address, *(ir.Constant(i32, flag) for flag in flags)])
            return context.get_dummy_value()

        return types.void(array, index), codegen

    typer.__name__ = "prefetch_write" if write else "prefetch_read"
    return intrinsic(typer)


def _opaque_intrinsic() -> Any:
    """Build the kernel intrinsic ``opaque(x)``: ``x`` unchanged, hidden from LLVM's rewrites.

    An empty assembly statement whose output is tied to its input register ("=r,0") costs no
    instruction.  The fill's multiply chain needs it: LLVM otherwise merges the xors of successive
    products, ``(p >> 32) ^ (q >> 32)`` into ``(p ^ q) >> 32``, which puts one more instruction
    on the chain's critical path at every step.
    """
    from llvmlite import ir
    from numba.core.extending import intrinsic

    def typer(typingctx: Any, value: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            kind = ir.FunctionType(args[0].type, [args[0].type])
            return builder.call(ir.InlineAsm(kind, "", "=r,0"), [args[0]])

        return value(value), codegen

    typer.__name__ = "opaque"
    return intrinsic(typer)


def _identity(value: Any) -> Any:
    """Plain-Python stand-in for ``opaque`` (NUMBA_DISABLE_JIT runs)."""
    return value


def _no_prefetch(array: object, index: object) -> None:
    """Plain-Python stand-in for the prefetch intrinsics (NUMBA_DISABLE_JIT runs)."""
    del array, index


if _jit.config.DISABLE_JIT:
    prefetch_read: Any = _no_prefetch
    prefetch_write: Any = _no_prefetch
    opaque: Any = _identity
else:
    opaque = _opaque_intrinsic()
    prefetch_read = _prefetch_intrinsic(write=False)
    prefetch_write = _prefetch_intrinsic(write=True)
