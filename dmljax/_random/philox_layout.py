"""The layouts of the Philox stream: which blocks compute which output elements.

Output element ``n`` in row-major order is value ``n % v`` of block ``counter + n // v``
(`dmljax._random.philox`: the block function; ``v = 4`` words, or a distribution's values
per block).

On XLA CPU (`lax.platform_dependent`) a variadic `lax.reduce` computes all four words of a
block in one loop iteration (`_planes`; as four outputs XLA would recompute the block
for each), and `interleave` puts the four word planes in place as two uint64 word pairs
(``w0 | w1 << 32``, ``w2 | w3 << 32``) selected and bitcast back to uint32.
The output is generated in its own shape, row by row
(`rows`, `tile`): a row that starts inside a block computes one block more and
`_shifted_interleave` picks each value from its lane's two blocks. Distributions compute
their values per block inside the reduce (``per_block``): faster than JAX's ``philox4x32``
bits on XLA CPU (more so with 512-bit vectors, `vector_width`), at twice the output's peak
memory.

Off the CPU every element computes its own block (`_per_element`, peak memory 1x), and a
whole output on one device is one flat row, reshaped (`_flat`): on a GPU the CPU layout
ran several times slower than JAX.

Every counter comes from `lax.broadcasted_iota`, so a sharded output stays shard-local.
Alternatives and measurements: docs/design/philox-layout.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters import batching, mlir
from jaxlib.mlir.dialects import stablehlo

from dmljax._core.config import config
from dmljax._core.platform import one_device_shape
from dmljax._random.philox import Words, add_128, rounds

__all__ = ["PerBlock", "interleave", "rows", "stream", "tile", "values_per_block"]


def _linear_iota(shape: Sequence[int], strides: Sequence[int] | None = None) -> jax.Array:
    """uint32 ``sum(i_d * strides[d])`` for every index ``i`` of ``shape`` (row-major strides by default)."""
    shape = tuple(shape)
    strides = _symbolic_row_major_strides(shape) if strides is None else strides
    index = lax.full(shape, np.uint32(0), jnp.uint32)
    for axis, stride in enumerate(strides):
        axis_iota = lax.broadcasted_iota(jnp.uint32, shape, axis)
        index = (
            index + axis_iota * _uint32(stride) if not (isinstance(stride, int) and stride == 1) else index + axis_iota
        )
    return index


def _symbolic_row_major_strides(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """Row-major strides in elements; sizes may be `jax.export` symbolic dimensions."""
    strides = [1]
    for size in shape[:0:-1]:
        strides.insert(0, strides[0] * size)
    return tuple(strides)


def _uint32(value: Any) -> Any:
    """A uint32 constant: a NumPy scalar for an int, an array for a symbolic dimension expression."""
    return np.uint32(value) if isinstance(value, int | np.integer) else jnp.asarray(value, jnp.uint32)


def _planes(counter: Words, key: Words, blocks: jax.Array, per_block: PerBlock | None = None) -> Words:
    """The values of the blocks ``counter + blocks`` (uint32 offsets), all of a block's values from one reduce loop.

    ``per_block`` (default: the four words) runs inside the reduce's input, so its values
    are computed once per block and materialised, never recomputed by a consumer that
    selects among them (a select evaluates every candidate: Box-Muller 16 times over).
    The pad half of the reduce holds each dtype's identity: 0 under ``|`` for unsigned
    words, -inf under ``max`` for floats (exact, the sign of zero kept).
    """
    values = rounds(add_128(counter, blocks), *key)
    if per_block is not None:
        values = per_block(values)
    pads = tuple(np.array(-np.inf if jnp.issubdtype(x.dtype, jnp.floating) else 0, x.dtype) for x in values)
    axis = blocks.ndim
    widths = [(0, 0, 0)] * axis + [(0, 1, 0)]
    padded = tuple(lax.pad(x[..., None], pad, widths) for x, pad in zip(values, pads, strict=True))
    return tuple(lax.reduce(padded, pads, _combine_pairs, (axis,)))


def _combine_pairs(a: Words, b: Words) -> Words:
    """The reduce body of `_planes`: ``|`` for unsigned words, ``max`` for floats (one side is the pad)."""
    pairs = zip(a, b, strict=True)
    return tuple(x | y if jnp.issubdtype(x.dtype, jnp.unsignedinteger) else lax.max(x, y) for x, y in pairs)


def _pairs_abstract_eval(*planes: jax.core.ShapedArray) -> jax.core.ShapedArray:
    *lead, m = planes[0].shape
    return planes[0].update(shape=(*lead, m * len(planes)), weak_type=False)


def _pairs_lowering(ctx: mlir.LoweringRuleContext, *planes: mlir.ir.Value) -> list[mlir.ir.Value]:
    """Word pairs ``lo | hi << 32`` as uint64, a select among the pairs, one bitcast back to uint32 words."""
    shape = tuple(cast(jax.core.ShapedArray, ctx.avals_in[0]).shape)
    u32, u64 = planes[0].type.element_type, mlir.ir.IntegerType.get_unsigned(64)
    wide, pairs = mlir.ir.RankedTensorType.get(shape, u64), len(planes) // 2
    grid = mlir.ir.RankedTensorType.get((*shape, pairs), u64)

    def splat(kind: mlir.ir.RankedTensorType, element: Any, value: int) -> mlir.ir.Value:
        return stablehlo.constant(mlir.ir.DenseElementsAttr.get_splat(kind, mlir.ir.IntegerAttr.get(element, value)))

    dims = list(range(len(shape)))
    words = [
        stablehlo.broadcast_in_dim(
            grid,
            stablehlo.or_(
                stablehlo.convert(wide, lo), stablehlo.shift_left(stablehlo.convert(wide, hi), splat(wide, u64, 32))
            ),
            dims,
        )
        for lo, hi in zip(planes[0::2], planes[1::2], strict=True)
    ]
    out = words[-1]
    if pairs > 1:
        lanes = mlir.ir.RankedTensorType.get((*shape, pairs), u32)
        lane = stablehlo.iota(lanes, len(shape))
        for j in range(pairs - 2, -1, -1):
            where = stablehlo.compare(lane, splat(lanes, u32, j), stablehlo.ComparisonDirectionAttr.get("EQ"))
            out = stablehlo.select(where, words[j], out)
    split = stablehlo.bitcast_convert(mlir.ir.RankedTensorType.get((*shape, pairs, 2), u32), out)
    return [stablehlo.reshape(mlir.ir.RankedTensorType.get((*shape[:-1], shape[-1] * len(planes)), u32), split)]


def _pairs_batch(args: Sequence[jax.Array], dims: Sequence[int | None]) -> tuple[jax.Array, int]:
    """vmap: the batch axis of every plane moved (or broadcast) to the front, as a leading axis of the planes."""
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    moved = [
        jnp.broadcast_to(x, (size, *x.shape)) if d is None else jnp.moveaxis(x, d, 0)
        for x, d in zip(args, dims, strict=True)
    ]
    return _pairs_p.bind(*moved), 0


# Interleave an even number of uint32 planes through uint64 word pairs: a primitive of its own (see `interleave`).
_pairs_p = jax.extend.core.Primitive("dmljax_philox_interleave_pairs")
_pairs_p.def_abstract_eval(_pairs_abstract_eval)
_pairs_p.def_impl(lambda *planes: jax.jit(_pairs_p.bind)(*planes))
mlir.register_lowering(_pairs_p, _pairs_lowering)
batching.primitive_batchers[_pairs_p] = _pairs_batch


def interleave(planes: Words) -> jax.Array:
    """Merge k planes of shape (..., m) into (..., m * k): element j of the last axis from plane j % k.

    An even number of static-shaped uint32 planes goes through uint64 word pairs
    (``p[2i] | p[2i+1] << 32``, bitcast back): XLA CPU's loop then writes two words per
    lane instead of one (docs/design/philox-layout.md). Other planes take a select on ``j % k``.
    """
    k = len(planes)
    static = all(isinstance(d, int) for d in planes[0].shape)
    if config.philox_pair_interleave and k % 2 == 0 and static and all(p.dtype == jnp.uint32 for p in planes):
        return _pairs_p.bind(*planes)
    *lead, m = planes[0].shape
    k = len(planes)
    full = (*lead, m, k)
    lane = lax.broadcasted_iota(jnp.uint32, full, len(full) - 1)
    out = lax.broadcast_in_dim(planes[-1], full, tuple(range(len(full) - 1)))
    for j in range(k - 2, -1, -1):
        out = jnp.where(lane == j, lax.broadcast_in_dim(planes[j], full, tuple(range(len(full) - 1))), out)
    return out.reshape(*lead, m * k)


PerBlock = Callable[[Words], Words]


def values_per_block(per_block: PerBlock) -> int:
    """How many values ``per_block`` makes of one block's four words."""
    return len(jax.eval_shape(per_block, (jax.ShapeDtypeStruct((), jnp.uint32),) * 4))


def _words(words: Words) -> Words:
    return words


def rows(
    counter: Words, key: Words, first: jax.Array, length: int, per_block: PerBlock = _words, *, aligned: bool
) -> jax.Array:
    """Rows of stream values: ``out[..., c]`` is value ``first[...] + c`` of the stream.

    ``per_block`` maps the four words of a block to its ``v`` values in stream order
    (the words themselves by default, ``v = 4``), so value ``n`` is value ``n % v`` of
    block ``counter + n // v``. On XLA CPU each row computes the ``ceil(length / v)``
    blocks it starts in (one more when it starts inside a block), never another row's;
    elsewhere each element computes its block (module docstring).

    Args:
      counter, key: the state's counter words and key words.
      first: uint32 array of the rows' shape: the stream index of each row's first value.
      length: values per row.
      per_block: four word arrays -> ``v`` value arrays.
      aligned: a static promise that every ``first`` is a multiple of ``v`` (rows start
        at a block); otherwise each row selects its values with a shift of ``first % v``.

    Returns:
      Array of shape ``first.shape + (length,)``.
    """
    blocks = functools.partial(_rows_of_blocks, length=length, per_block=per_block, aligned=aligned)
    elements = functools.partial(_per_element, length=length, per_block=per_block)
    return lax.platform_dependent(counter, key, first, cpu=blocks, default=elements)


def _rows_of_blocks(
    counter: Words, key: Words, first: jax.Array, length: int, per_block: PerBlock, aligned: bool
) -> jax.Array:
    """`rows` on XLA CPU: each row's blocks computed once (in a reduce) and interleaved."""
    lead = first.shape
    v = values_per_block(per_block)
    if not aligned and isinstance(length, int) and length < config.philox_short_row:
        return _per_element(counter, key, first, length, per_block)
    m = (length + v - 1) // v + (0 if aligned else 1)
    grid = (*lead, m)
    start = lax.broadcast_in_dim(first // np.uint32(v), grid, tuple(range(len(lead))))
    values = _planes(counter, key, start + lax.broadcasted_iota(jnp.uint32, grid, len(lead)), per_block)
    out = interleave(values) if aligned else _shifted_interleave(values, lax.rem(first, np.uint32(v)))
    return out if out.shape[-1] == length else out[..., :length]


def _per_element(counter: Words, key: Words, first: jax.Array, length: int, per_block: PerBlock) -> jax.Array:
    """Each element computes its own block and keeps its value (short unaligned rows: no block grid)."""
    shape = (*first.shape, length)
    n = lax.broadcast_in_dim(first, shape, tuple(range(first.ndim))) + lax.broadcasted_iota(
        jnp.uint32, shape, first.ndim
    )
    v = values_per_block(per_block)
    values = per_block(rounds(add_128(counter, n // np.uint32(v)), *key))
    lane = lax.rem(n, np.uint32(v))
    out = values[-1]
    for j in range(v - 2, -1, -1):
        out = jnp.where(lane == j, values[j], out)
    return out


def _shifted_interleave(values: Words, shift: jax.Array) -> jax.Array:
    """Interleave rows that start ``shift`` values into a block: ``out[..., v*j + l]`` is ``s + l`` past block ``j``.

    ``values`` are ``v`` planes of shape ``(..., m + 1)``; ``shift`` (``s`` in [0, v), of the
    rows' shape) says where each row starts. Value ``t = s + l`` past block ``j``'s start is
    value ``t`` of block ``j`` if ``t < v``, else value ``t - v`` of block ``j + 1``: each
    output element picks among ``2 v`` candidates (its lane's two blocks), where a shift of
    the planes followed by `interleave` picked among ``v * v`` and ran slower
    (docs/design/philox-layout.md).
    Returns shape ``(..., m * v)``.
    """
    v = len(values)
    *lead, blocks = values[0].shape
    full = (*lead, blocks - 1, v)
    keep = tuple(range(len(full) - 1))
    lo = [lax.broadcast_in_dim(x[..., :-1], full, keep) for x in values]
    hi = [lax.broadcast_in_dim(x[..., 1:], full, keep) for x in values]
    t = lax.broadcast_in_dim(shift, full, tuple(range(len(lead)))) + lax.broadcasted_iota(
        jnp.uint32, full, len(lead) + 1
    )
    carry = t >= np.uint32(v)
    lane = jnp.where(carry, t - np.uint32(v), t)
    out = jnp.where(carry, hi[-1], lo[-1])
    for j in range(v - 2, -1, -1):
        out = jnp.where(lane == j, jnp.where(carry, hi[j], lo[j]), out)
    return out.reshape(*lead, (blocks - 1) * v)


def tile(
    counter: Words,
    key: Words,
    shape: Sequence[int],
    tile_shape: Sequence[int],
    offsets: Sequence[int | jax.Array],
    per_block: PerBlock = _words,
) -> jax.Array:
    """The tile of ``tile_shape`` at ``offsets`` (ints or uint32 scalars) of the stream values of ``shape``.

    The stream index of element ``i`` of the tile is ``sum((offsets[d] + i[d]) * stride[d])``
    over the row-major strides of ``shape``: each axis has its own counter, so a device
    that holds one tile of a sharded output computes that tile and nothing else.
    """
    shape, tile_shape = tuple(shape), tuple(tile_shape)
    strides = _symbolic_row_major_strides(shape)
    first = _linear_iota(tile_shape[:-1], strides[:-1])
    for offset, stride in zip(offsets, strides, strict=True):
        if not isinstance(offset, int) or offset:
            first = first + jnp.asarray(offset, jnp.uint32) * _uint32(stride)
    v = values_per_block(per_block)
    static_last = isinstance(offsets[-1], int)
    one_row = math.prod(tile_shape[:-1]) == 1 and all(isinstance(o, int) and not o for o in offsets[:-1])
    rows_aligned = one_row or shape[-1] % v == 0
    aligned = rows_aligned and (bool(offsets[-1] % v == 0) if static_last else tile_shape[-1] % v == 0)
    return rows(counter, key, first, tile_shape[-1], per_block, aligned=aligned)


def stream(counter: Words, key: Words, shape: Sequence[int], per_block: PerBlock = _words) -> jax.Array:
    """Array of ``shape``: element n (row-major) is value n % v of block ``counter + n // v``.

    ``per_block`` as in `rows` (default: the words, so element n is word n % 4). Rows
    that start on a block boundary compute their blocks and interleave them; rows that
    start inside one shift their values (`rows`; measured as fast as regrouping rows into
    whole blocks, and unlike that elementwise in the rows). Everything is elementwise in
    the output's leading axes, so a sharding of those stays shard-local.
    """
    shape = tuple(shape)
    whole = functools.partial(tile, shape=shape, tile_shape=shape, offsets=(0,) * len(shape), per_block=per_block)
    if (
        config.philox_flat_rows and len(shape) > 1 and one_device_shape(shape)
    ):  # off the CPU: one flat run of elements (`_flat`)
        flat = functools.partial(_flat, shape=shape, per_block=per_block)
        return lax.platform_dependent(counter, key, cpu=whole, default=flat)
    return whole(counter, key)


def _flat(counter: Words, key: Words, shape: tuple[int, ...], per_block: PerBlock) -> jax.Array:
    """The whole stream of ``shape`` as one row of ``prod(shape)`` elements, each computing its block, reshaped.

    Rows whose length is no multiple of 4 do not vectorise on a GPU (docs/design/philox-layout.md).
    """
    zero = jnp.zeros((), jnp.uint32)
    return _per_element(counter, key, zero, math.prod(shape), per_block).reshape(shape)
