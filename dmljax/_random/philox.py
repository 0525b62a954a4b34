"""Philox 4x32-10 in `lax` ops: the block function and 128-bit counters.

The stream of DML_RANDOM_GENERATOR
(https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_random_generator_operator_desc):
output element ``n`` in row-major order is word ``n % 4`` of ``philox4x32_10(counter + n // 4, key)``.
Which blocks compute which output elements (the layouts): `dmljax._random.philox_layout`.
"""

from __future__ import annotations

import functools
import math
from typing import cast

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters import ad, batching, mlir
from jaxlib.mlir.dialects import stablehlo

from dmljax._core import jax_compat
from dmljax._core.errors import fail
from dmljax._core.markers import mark

__all__ = ["Words", "add_128", "mulhi", "num_blocks", "philox4x32_10", "rounds"]

# Random123 philox.h: PHILOX_M4x32_0 and PHILOX_M4x32_1, the round multipliers.
PHILOX_M4X32_0 = np.uint32(0xD2511F53)
PHILOX_M4X32_1 = np.uint32(0xCD9E8D57)
# Random123 philox.h: PHILOX_W32_0 and PHILOX_W32_1, the Weyl key bumps (golden ratio, sqrt(3) - 1).
PHILOX_W32_0 = np.uint32(0x9E3779B9)
PHILOX_W32_1 = np.uint32(0xBB67AE85)
# Random123 philox.h: philox4x32 defaults to 10 rounds (philox4x32_R(10, ...)).
PHILOX_ROUNDS = 10

Words = tuple[jax.Array, ...]


def _mulhi_abstract_eval(x: jax.core.ShapedArray, *, m: int) -> jax.core.ShapedArray:
    del m
    return x.update(weak_type=False)


def _mulhi_lowering(ctx: mlir.LoweringRuleContext, x: mlir.ir.Value, *, m: int) -> list[mlir.ir.Value]:
    """``convert(convert(x, u64) * m >> 32, u32)`` in StableHLO: the widening multiply, with no u64 JAX value."""
    aval = cast(jax.core.ShapedArray, ctx.avals_in[0])
    u64 = mlir.ir.IntegerType.get_unsigned(64)
    if not all(isinstance(d, int) for d in aval.shape):  # `jax.export` symbolic sizes: a broadcast scalar
        wide_aval = aval.update(dtype=np.dtype(np.uint64), weak_type=False)
        wide = mlir.aval_to_ir_type(ctx.module_context, wide_aval)

        def splat(value: int) -> mlir.ir.Value:
            scalar = mlir.ir_constant(np.uint64(value))
            return jax_compat.mlir_broadcast_in_dim(ctx, scalar, wide_aval, broadcast_dimensions=[])
    else:
        wide = mlir.ir.RankedTensorType.get(aval.shape, u64)

        def splat(value: int) -> mlir.ir.Value:
            return stablehlo.constant(mlir.ir.DenseElementsAttr.get_splat(wide, mlir.ir.IntegerAttr.get(u64, value)))

    product = stablehlo.multiply(stablehlo.convert(wide, x), splat(m))
    return [stablehlo.convert(x.type, stablehlo.shift_right_logical(product, splat(32)))]


# The high half of ``m * x`` for a constant uint32 ``m``: a primitive of its own (see `mulhi`).
_mulhi_p = jax.extend.core.Primitive("dmljax_philox_mulhi")
_mulhi_p.def_abstract_eval(_mulhi_abstract_eval)
_mulhi_p.def_impl(lambda x, *, m: jax.jit(functools.partial(_mulhi_p.bind, m=m))(x))
mlir.register_lowering(_mulhi_p, _mulhi_lowering)
batching.defvectorized(_mulhi_p)
ad.defjvp(_mulhi_p, None)


def mulhi(m: np.uint32, x: jax.Array) -> jax.Array:
    """High 32 bits of ``m * x`` (uint32 ``x``): one widening uint64 multiply, emitted straight as StableHLO.

    Not `lax.mulhi`: its ``chlo.mulhi`` fails to compile when the program is partitioned
    over more than one device (``tests/test_philox.py`` fails once it compiles). The
    primitive lowers to the ops of JAX's own mulhi fallback (convert, multiply, shift,
    convert), which XLA vectorises and the partitioner treats as elementwise; uint64 exists
    only inside the lowering, whatever the x64 setting. Alternatives:
    docs/design/philox-layout.md.
    """
    return _mulhi_p.bind(x, m=int(m))


def rounds(x: Words, k0: jax.Array, k1: jax.Array) -> Words:
    """Ten Philox rounds on four word arrays; the key is bumped before rounds 2 to 10."""
    x0, x1, x2, x3 = x
    for r in range(PHILOX_ROUNDS):
        if r:
            k0, k1 = k0 + PHILOX_W32_0, k1 + PHILOX_W32_1
        hi0, lo0 = mulhi(PHILOX_M4X32_0, x0), lax.mul(PHILOX_M4X32_0, x0)
        hi1, lo1 = mulhi(PHILOX_M4X32_1, x2), lax.mul(PHILOX_M4X32_1, x2)
        x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
    return x0, x1, x2, x3


def add_128(counter: Words, offset: jax.Array) -> Words:
    """Add a uint32 ``offset`` to a 128-bit counter of four words (word 0 least significant).

    The carry runs through all four words and the sum wraps modulo 2^128. Only word 0
    depends on the offset element by element: the upper three words are the counter's
    own or, where word 0 wrapped, those of ``counter + 2^32``, computed once: a select per
    element instead of a carry chain through three words (the word planes' loop 5-10%
    faster on XLA CPU; docs/design/philox-layout.md).

    Examples:
      >>> ones = jnp.uint32(0xFFFFFFFF)
      >>> [int(w) for w in add_128((ones, ones, ones, ones), jnp.uint32(2))]
      [1, 0, 0, 0]
      >>> [int(w) for w in add_128((ones, jnp.uint32(7), ones, ones), jnp.uint32(1))]
      [0, 8, 4294967295, 4294967295]
    """
    offset = jnp.asarray(offset, jnp.uint32)
    s0 = counter[0] + offset
    wrapped = s0 < offset
    bumped, carry = [], jnp.bool_(True)  # counter + 2^32: a carry of one into word 1
    for word in counter[1:]:
        s = word + carry.astype(jnp.uint32)
        carry = carry & (s == 0)
        bumped.append(s)
    upper = (jnp.where(wrapped, b, w) for b, w in zip(bumped, counter[1:], strict=True))
    return (s0, *upper)


def philox4x32_10(counter: jax.typing.ArrayLike, key: jax.typing.ArrayLike) -> jax.Array:
    """The Philox 4x32-10 block function (Salmon et al., SC'11; Random123), vectorised.

    Args:
      counter: uint32[..., 4], the 128-bit counter of each block, word 0 least significant.
      key: uint32[..., 2], the 64-bit key (k0, k1). Leading dimensions broadcast.

    Returns:
      uint32[..., 4]: the four output words of each block.

    Raises:
      TypeError: ``counter`` or ``key`` is not uint32.
      dmljax.ValidationError: the last dimension of ``counter`` is not 4 or of ``key`` not 2,
        or their leading (batch) dimensions do not broadcast together.

    Examples:
      >>> out = philox4x32_10(np.zeros(4, np.uint32), np.zeros(2, np.uint32))
      >>> [hex(int(w)) for w in out]
      ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    """
    counter, key = jnp.asarray(counter), jnp.asarray(key)
    for name, value, words in (("counter", counter, 4), ("key", key, 2)):
        if value.dtype != jnp.uint32:
            got = f"{name}.dtype={value.dtype} ({name} shape {value.shape})"
            raise TypeError(f"philox4x32_10: {name} must be uint32; got {got}.")
        if value.ndim < 1 or value.shape[-1] != words:
            raise fail("philox4x32_10", f"{name}.shape", f"end in {words}", value.shape)
    try:
        jnp.broadcast_shapes(counter.shape[:-1], key.shape[:-1])  # symbolic sizes too (jax.export)
    except ValueError:
        rule = f"have batch dimensions that broadcast with counter's {counter.shape[:-1]}"
        raise fail("philox4x32_10", "key.shape", rule, key.shape, f"counter shape {counter.shape}") from None
    return mark(_philox4x32_10(counter, key), counter, key, op="philox4x32_10")


@jax.jit
def _philox4x32_10(counter: jax.Array, key: jax.Array) -> jax.Array:
    shape = jnp.broadcast_shapes(counter.shape[:-1], key.shape[:-1])
    x = tuple(jnp.broadcast_to(counter[..., i], shape) for i in range(4))
    k = tuple(jnp.broadcast_to(key[..., i], shape) for i in range(2))
    return jnp.stack(rounds(x, *k), axis=-1)


def num_blocks(n_elements: int) -> int:
    """Blocks consumed by ``n_elements`` words: ``ceil(n / 4)``."""
    return math.ceil(n_elements / 4)
