"""Raw memory access for compiled kernels (numba intrinsics).

Unaligned loads and stores of whole words, single bytes and prefetches at an
address plus an offset. The kernels take the address of an array once
(``address``) and read through it: no array is passed to the small helpers
they call for every value, which would cost a reference count update each.
Callers check every offset against the array's bounds first.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types as nt
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def byte(typingctx, address, at):  # type: ignore[no-untyped-def]
    """The byte at ``address + at``."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        pointer = builder.inttoptr(builder.add(args[0], args[1]), ir.IntType(8).as_pointer())
        return builder.zext(builder.load(pointer), ir.IntType(64))

    return nt.int64(nt.int64, nt.int64), codegen


@intrinsic
def load64(typingctx, address, at):  # type: ignore[no-untyped-def]
    """The eight bytes at ``address + at`` (unaligned) as a little-endian int64."""
    return nt.int64(nt.int64, nt.int64), _loader(64)


@intrinsic
def load32(typingctx, address, at):  # type: ignore[no-untyped-def]
    """The four bytes at ``address + at`` (unaligned) as a little-endian int32."""
    return nt.int32(nt.int64, nt.int64), _loader(32)


def _loader(bits: int):  # type: ignore[no-untyped-def]
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        pointer = builder.inttoptr(builder.add(args[0], args[1]), ir.IntType(bits).as_pointer())
        return builder.load(pointer, align=1)

    return codegen


@intrinsic
def store64(typingctx, address, at, value):  # type: ignore[no-untyped-def]
    """Write ``value`` as eight little-endian bytes at ``address + at`` (unaligned)."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        pointer = builder.inttoptr(builder.add(args[0], args[1]), ir.IntType(64).as_pointer())
        builder.store(args[2], pointer, align=1)
        return context.get_dummy_value()

    return nt.void(nt.int64, nt.int64, nt.int64), codegen


@intrinsic
def store8(typingctx, address, at, value):  # type: ignore[no-untyped-def]
    """Write the low byte of ``value`` at ``address + at``."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        pointer = builder.inttoptr(builder.add(args[0], args[1]), ir.IntType(8).as_pointer())
        builder.store(builder.trunc(args[2], ir.IntType(8)), pointer)
        return context.get_dummy_value()

    return nt.void(nt.int64, nt.int64, nt.int64), codegen


@intrinsic
def prefetch(typingctx, address):  # type: ignore[no-untyped-def]
    """Ask for the cache line at ``address`` to be loaded, without waiting for it."""

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        builder.call(fn, [builder.inttoptr(args[0], i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return nt.void(nt.int64), codegen


@nb.njit(inline="always", cache=True, nogil=True)
def address(array):  # type: ignore[no-untyped-def]
    return np.int64(array.ctypes.data)
