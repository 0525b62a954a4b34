"""Flat positions: one unsigned position per element of an array viewed as 1-D.

The XLA CPU formulations (`use_flat` says when the flat one may be used) and the scatter reductions
(`dmljax._ops.ordered.reductions`) address elements of an array by their row-major position in its
flattened view, with ``prod(shape)`` as the out-of-range sentinel (dropped by a
``FILL_OR_DROP`` scatter). `flat_positions` builds them for one axis of normalised indices
(uint32), `flat_targets` from one coordinate per dimension in `flat_dtype` (uint32, or
uint64 with ``jax_enable_x64`` for larger arrays); `scatter_at` and `gather_at` scatter
and gather at unsigned positions without jnp's conversion to int32.

`use_flat`: XLA CPU runs an element-wise scatter or gather with batching dimensions as a
loop over an ``(N, rank)`` index array; the same operation on the flattened array at
one-column flat positions runs faster there (`dmljax._core.platform` says when and how a
formulation is chosen per platform; docs/design/per-platform-formulations.md has the figures).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import UINT32_MAX
from dmljax._core.platform import concrete_shape, one_device_shape
from dmljax._ops.common.indices import IndexMode, size_scalar

__all__ = [
    "FLAT_LIMIT",
    "batch_rows",
    "clamped",
    "flat_dtype",
    "flat_positions",
    "flat_targets",
    "gather_at",
    "scatter_at",
    "use_flat",
]

# The one bound of flat positions: an array of fewer than FLAT_LIMIT elements takes uint32
# positions, ``prod(shape)`` itself the out-of-range sentinel (`flat_dtype`, `use_flat`).
# ``prod(shape) <= UINT32_MAX`` would fit as well; the bound keeps the 2^32 - 1 element case
# on uint64 as it always was (a ValidationError with x64 off).
FLAT_LIMIT = UINT32_MAX


def use_flat(shape: tuple) -> bool:
    """Whether the flat formulation of the element-wise gathers and scatters may be used for an
    array of ``shape`` on one CPU device (see the module doc; the positions: `flat_positions`).

    Examples:
      >>> use_flat((3, 4))  # one device in this process
      True
      >>> use_flat((12,)), use_flat((2**16, 2**16))
      (False, False)
    """
    if not config.flat_formulations:
        return False
    return len(shape) >= 2 and one_device_shape(shape) and math.prod(shape) < FLAT_LIMIT


def clamped(index: jax.Array, size: int, mode: IndexMode) -> jax.Array:
    """Normalised (unsigned) indices in ``[0, size)``; `FILL` keeps out-of-range ones (dropped)."""
    if mode is IndexMode.FILL:
        return index
    return jnp.minimum(index, jnp.asarray(size - 1, index.dtype))  # size may be symbolic (jax.export)


def flat_positions(index: jax.Array, shape: tuple[int, ...], axis: int, mode: IndexMode) -> jax.Array:
    """uint32 positions in the flattened array of ``shape`` of each element of ``index``.

    ``index`` holds normalised indices along ``axis`` (any unsigned dtype); element ``p`` of
    the result is the flat position of ``p`` with ``p[axis]`` replaced by ``index[p]`` (clamped
    unless ``mode`` is `FILL`, where out-of-range indices give ``prod(shape)``, dropped by a
    `FILL_OR_DROP` gather or scatter). Needs ``prod(shape) < FLAT_LIMIT`` (`use_flat`).
    """
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    along = clamped(index, shape[axis], mode)
    lin = along.astype(jnp.uint32) * np.uint32(strides[axis])  # wrapped values: replaced below
    for d, stride in enumerate(strides):
        if d != axis:
            lin = lin + lax.broadcasted_iota(jnp.uint32, index.shape, d) * np.uint32(stride)
    if mode is IndexMode.FILL:  # keep out-of-range elements out of range (filled or dropped)
        lin = jnp.where(along < shape[axis], lin, np.uint32(math.prod(shape)))
    return lin


def flat_dtype(op: str, shape: tuple[int, ...]) -> np.dtype:
    """The unsigned type of flat positions into an array of ``shape`` (its size marks "dropped").

    A symbolic size (`jax.export`) gets uint32, as `dmljax._ops.common.indices.position_dtype`
    gives it: DirectML's tensors hold at most 2^32 - 1 elements.

    Raises:
      ValidationError: the array has 2^32 - 1 elements or more and ``jax_enable_x64`` is off.
    """
    size = math.prod(shape)
    if not concrete_shape(shape) or size < FLAT_LIMIT:
        return np.dtype(np.uint32)
    if not x64_enabled():
        rule = f"be below {FLAT_LIMIT} (2^32 - 1) unless jax_enable_x64 is on (flat positions need uint64)"
        raise fail(op, "input.size", rule, size, f"input shape {shape}")
    return np.dtype(np.uint64)


def flat_targets(coords: list[jax.Array], shape: tuple[int, ...], mode: IndexMode, dtype: np.dtype) -> jax.Array:
    """Flat positions into an array of ``shape`` from one coordinate array per dimension.

    ``coords`` are unsigned arrays of one common shape (normalised positions, `normalize`;
    ``shape`` may hold `jax.export` symbolic sizes);
    a coordinate ``>= shape[d]`` is clamped, or under `IndexMode.FILL` the position is
    ``prod(shape)`` (dropped by the scatter).

    Examples:
      >>> coords = [jnp.array([1, 0], jnp.uint32), jnp.array([2, 5], jnp.uint32)]
      >>> flat_targets(coords, (2, 3), IndexMode.FILL, np.dtype(np.uint32))
      Array([5, 6], dtype=uint32)
    """
    size = math.prod(shape)
    lin = jnp.zeros(coords[0].shape, dtype)
    valid = jnp.ones(coords[0].shape, bool)
    for d, coord in enumerate(coords):
        coord = lax.convert_element_type(coord, dtype)
        if mode is IndexMode.FILL:
            valid = valid & (coord < size_scalar(shape[d], dtype))
        coord = jnp.minimum(coord, size_scalar(shape[d] - 1, dtype))
        lin = lin + coord * size_scalar(math.prod(shape[d + 1 :]), dtype)
    if mode is IndexMode.FILL:
        lin = jnp.where(valid, lin, size_scalar(size, dtype))
    return lin


_SCATTERS = {
    "none": lax.scatter,
    "add": lax.scatter_add,
    "mul": lax.scatter_mul,
    "max": lax.scatter_max,
    "min": lax.scatter_min,
}


def scatter_at(
    x: jax.Array, positions: jax.Array, updates: jax.Array, reduction: str = "none", unique: bool = False
) -> jax.Array:
    """``x.at[positions].<reduction>(updates, mode="drop")`` along axis 0, positions kept unsigned.

    jnp's ``.at`` converts uint32 positions to int32 when ``jax_enable_x64`` is off, so a
    position of 2^31 or more would wrap (and then count from the end); `lax.scatter` takes
    them as they are. ``positions``: 1-D unsigned, ``>= x.shape[0]`` dropped; ``updates``:
    ``positions.shape + x.shape[1:]``; ``reduction``: ``"none"`` (overwrite) or one of
    `REDUCTIONS`' combiners; ``unique``: the positions are promised distinct.

    Examples:
      >>> scatter_at(jnp.zeros(3), jnp.array([2, 2, 7], jnp.uint32), jnp.array([1.0, 2.0, 4.0]), "add")
      Array([0., 0., 3.], dtype=float32)
    """
    window = tuple(range(1, x.ndim))
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=window, inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    drop = lax.GatherScatterMode.FILL_OR_DROP
    return _SCATTERS[reduction](x, positions[:, None], updates, dnums, unique_indices=unique, mode=drop)


def gather_at(x: jax.Array, positions: jax.Array) -> jax.Array:
    """``x.at[positions].get(mode="clip")`` for 1-D ``x`` and unsigned ``positions``, kept unsigned
    (see `scatter_at`).

    Examples:
      >>> gather_at(jnp.arange(3.0), jnp.array([2, 0, 9], jnp.uint32))
      Array([2., 0., 2.], dtype=float32)
    """
    dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    return lax.gather(x, positions[..., None], dnums, (1,), mode=lax.GatherScatterMode.CLIP)


def batch_rows(
    args: Sequence[Any],
    dims: Sequence[int | None],
    whole: Callable[[jax.Array, jax.Array, jax.Array], jax.Array],
    per_row: Callable[[jax.Array, jax.Array, jax.Array], jax.Array],
    fits: Callable[[Any], bool] = lambda updates: True,
) -> tuple[jax.Array, int]:
    """A batching rule for a reduction ``(flat, targets, updates) -> flat`` (1-D operands):
    the batch as one call of ``whole`` on the concatenated rows, each row's targets offset by
    its row times ``n`` (dropped ones, ``>= n``, become ``rows * n``: still dropped), so each
    row's updates reach only its own elements, in their order. Row by row (`lax.map` of
    ``per_row``) where the sizes are symbolic, the offsets would not fit the targets' type,
    or ``fits(rows * m)`` says ``whole`` cannot take that many updates.

    Examples:
      >>> add = lambda x, t, u: scatter_at(x, t, u, "add")
      >>> args = (jnp.zeros((2, 3)), jnp.array([[0, 5], [2, 2]], jnp.uint32), jnp.ones((2, 2)))
      >>> batch_rows(args, (0, 0, 0), add, add)[0]
      Array([[1., 0., 0.],
             [0., 0., 2.]], dtype=float32)
    """
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    flat, targets, updates = (
        jnp.broadcast_to(a, (size, *a.shape)) if d is None else jnp.moveaxis(a, d, 0)
        for a, d in zip(args, dims, strict=True)
    )
    n, m = flat.shape[1], targets.shape[1]
    if not (concrete_shape((size, n)) and size * n < np.iinfo(targets.dtype).max and fits(size * m)):
        return lax.map(lambda row: per_row(*row), (flat, targets, updates)), 0
    row = lax.broadcasted_iota(targets.dtype, (size, m), 0) * np.asarray(n, targets.dtype)
    offset = jnp.where(targets < np.asarray(n, targets.dtype), targets + row, np.asarray(size * n, targets.dtype))
    return whole(flat.reshape(-1), offset.reshape(-1), updates.reshape(-1)).reshape(size, n), 0
