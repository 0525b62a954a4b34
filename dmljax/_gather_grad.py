"""Tangents of gather and gather_elements, written so that their transposes run fast on XLA CPU.

JAX transposes a `lax.gather` into a `lax.scatter_add` of the same dimension numbers. XLA CPU
runs a scatter as a serial loop over indices, each copying one window: a gather along a
trailing axis scatters one element per index (13-30x its forward pass), and gather_elements'
batching dimensions become a two-column index array (take_along_axis: 2-5x its forward pass).

`linear_in_data` wraps a gather in `jax.custom_jvp`: the primal is the gather itself (the
forward pass is unchanged), the tangent is the same linear map in ``data`` written another
way, so that reverse mode, which transposes the tangent, gets a faster scatter-add:

* `rows_tangent` (gather along an axis with little data after it): the axis is moved to the
  front (`jnp.moveaxis`: the other axes stay separate, so a sharded one stays sharded), whole
  rows are gathered, and the result is moved back; its transpose scatter-adds whole
  contiguous rows along the leading axis between two transposes. On XLA CPU only (other
  platforms get JAX's transpose), on any number of devices: it adds no collective.
* `flat_tangent` (gather_elements on one CPU device, see `dmljax._formulation`): one 1-D
  gather at flat positions; its transpose is one 1-D scatter-add with a one-column index.
  Elsewhere (GPU, several devices) the tangent is the gather itself: JAX's transpose, with
  batching dimensions, which the partitioner keeps local.

Both are exact (the same additions as JAX's scatter-add, in index order), linear, and made
of standard primitives, so `jax.jvp`, `jax.vjp`, `jax.grad`, `jax.vmap` and higher orders
all work. Forward-mode tangents pay for the rearrangement (the transposes or the flat
indices). Out-of-range indices: `IndexMode.FILL` tangents are zero where the read is filled
(gradients dropped); other modes clamp, so gradients go to the clamped position.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from dmljax._formulation import clamped, concrete, flat_positions
from dmljax._indices import IndexMode, gather_in_mode

__all__ = ["ROWS_MAX_INNER", "flat_tangent", "linear_in_data", "rows_tangent", "use_rows"]

# `rows_tangent` is used when fewer than this many elements follow the gathered axis: measured
# on float32 (., 1024, inner) at 16 MiB, moving the axis to the front made the backward pass
# 5.6x faster for inner 1, equal for 4, and 1.3-2x slower for 16-64 (the windows are long
# enough for XLA's scatter loop, and the transposes cost two extra passes).
ROWS_MAX_INNER = 4


def linear_in_data(primal: Callable, tangent: Callable) -> Callable:
    """``primal(data, index)`` whose derivative in ``data`` is ``tangent(data_dot, index)``.

    ``tangent`` must be the same linear map in ``data`` as ``primal``; ``index`` (integer)
    gets no derivative.
    """

    @jax.custom_jvp
    def fun(data: jax.Array, index: jax.Array) -> jax.Array:
        return primal(data, index)

    @fun.defjvp
    def fun_jvp(primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
        data, index = primals
        return fun(data, index), tangent(tangents[0], index)

    return fun


def use_rows(shape: tuple, axis: int) -> bool:
    """Whether `rows_tangent` beats JAX's own transpose for a gather along ``axis``."""
    inner = shape[axis + 1 :]
    return axis > 0 and concrete(inner) and math.prod(inner) < ROWS_MAX_INNER


def _take_leading(operand: jax.Array, index: jax.Array, mode: IndexMode) -> jax.Array:
    """``operand[index]`` along axis 0 (1-D ``index``), zero for out-of-range `FILL` reads."""
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, operand.ndim)), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    inner = mode if mode is IndexMode.FILL else IndexMode.PROMISE_IN_BOUNDS  # other modes: clamped already
    return gather_in_mode(operand, index[:, None], dnums, (1, *operand.shape[1:]), inner)


def rows_tangent(data_dot: jax.Array, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """ONNX Gather's tangent: move ``axis`` to the front, gather rows, move the result back."""
    rows = clamped(index.reshape(-1), data_dot.shape[axis], mode)
    out = _take_leading(jnp.moveaxis(data_dot, axis, 0), rows, mode)
    out = out.reshape(index.shape + out.shape[1:])
    return jnp.moveaxis(out, tuple(range(index.ndim)), tuple(range(axis, axis + index.ndim)))


def flat_tangent(data_dot: jax.Array, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """GatherElements' tangent on one CPU device: one gather from the flattened ``data_dot``."""
    lin = flat_positions(index, data_dot.shape, axis, mode)
    return _take_leading(data_dot.reshape(-1), lin.reshape(-1), mode).reshape(index.shape)
