"""One-hot encoding (DML_ONE_HOT_OPERATOR_DESC, ONNX OneHot).

The public function validates ``depth``, ``values`` and the axis and narrows 64-bit host
indices exactly (`dmljax._ops.common.index_checks.narrow_on_host`); `_one_hot_impl` maps the
indices to positions with `dmljax._ops.common.indices.normalize` (negative ones from the end,
out-of-range ones to positions ``>= depth``, which match no element) and selects the
on or off value where a position equals the new axis' iota.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.dtypes import as_data_type, x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, UINT32_MAX
from dmljax._core.markers import mark, traced
from dmljax._ops.common.index_checks import narrow_on_host
from dmljax._ops.common.indices import IndexMode, as_data, as_indices, check_axis, normalize, type_fail

__all__ = ["one_hot", "one_hot_validated"]


def one_hot(
    indices: jax.typing.ArrayLike,
    depth: int,
    *,
    values: jax.typing.ArrayLike | tuple[Any, Any] = (0, 1),
    axis: int = -1,
    dtype: Any = None,
) -> jax.Array:
    """One-hot encode ``indices`` along a new axis of ``depth`` elements: DML_ONE_HOT, ONNX OneHot.

    ``output[..., j, ...] = on if j == indices[...] else off``, the new axis at ``axis``
    (ONNX's layout: the output has one more dimension than ``indices``; DirectML's
    IndicesTensor holds that axis with size 1). ``values = (off, on)``: DirectML's
    ValuesTensor element 0 and 1, ONNX's ``values`` input. A negative index of a signed
    type counts from the end (``-1`` is ``depth - 1``; DirectML from feature level 3.0,
    ONNX). An index outside ``[-depth, depth)`` marks nothing: its whole sequence is
    ``off`` (both pages). Every index type is exact at its full width.

    Args:
      indices: int32, int64, uint32 or uint64 array of 0 to 7 dimensions.
      depth: a static int >= 1, the size of the new axis.
      values: ``(off, on)``: two elements of any `DataType`. An array keeps its type;
        Python numbers take int32, float32 or complex64 whether or not ``jax_enable_x64``
        is on (the default ``(0, 1)`` gives int32).
      axis: where the new axis goes, in ``[-(r + 1), r + 1)`` for ``indices`` of rank ``r``.
      dtype: the output's `DataType`, as ``jax.nn.one_hot``'s ``dtype`` (``values`` are
        converted to it; integer values must fit); None: ``values``' type.

    Returns:
      Array of ``indices.shape`` with ``depth`` inserted at ``axis``, ``values``' type.

    Raises:
      ValidationError: ``depth``, ``axis`` or the output's rank breaks its rule, or
        ``values`` does not hold exactly two elements, or does not fit ``dtype``.
      TypeError: ``indices``, ``values`` or ``dtype`` is an unsupported type (64-bit
        ``dtype`` with ``jax_enable_x64`` off).

    Examples:
      >>> one_hot(jnp.array([0, 3, 2]), 4)
      Array([[1, 0, 0, 0],
             [0, 0, 0, 1],
             [0, 0, 1, 0]], dtype=int32)
      >>> one_hot(jnp.array([-3, 100, 3]), 4, values=jnp.array([4.0, 2.0]))
      Array([[4., 2., 4., 4.],
             [4., 4., 4., 4.],
             [4., 4., 4., 2.]], dtype=float32)
      >>> one_hot(jnp.array([0, 2, 1, 0]), 3, axis=0)[:, 0]
      Array([1, 0, 0], dtype=int32)
      >>> one_hot(jnp.array([1]), 3, dtype=jnp.float32)
      Array([[0., 1., 0.]], dtype=float32)
    """
    op = "one_hot"
    indices = as_indices(op, indices)
    context = f"indices shape {indices.shape}"
    if indices.ndim + 1 > MAX_DIMENSIONS:
        raise fail(
            op, "indices.ndim", f"be at most {MAX_DIMENSIONS - 1} (the output gains an axis)", indices.ndim, context
        )
    axis = check_axis(op, axis, indices.ndim + 1, context)
    depth = _check_depth(op, depth, context)
    values = _values(op, values, dtype, context)
    if isinstance(indices, np.ndarray):
        if indices.dtype.itemsize == 8 and not x64_enabled():
            indices = narrow_on_host(indices, depth, IndexMode.FILL)
        indices = jnp.asarray(indices)
    values = values.reshape(2)
    out = _one_hot_impl(indices, values, depth=depth, axis=axis)
    return mark(out, indices, values, op="one_hot", depth=depth, axis=axis) if traced(out, indices, values) else out


def one_hot_validated(indices: jax.Array, values: jax.Array, depth: int, axis: int) -> jax.Array:
    """`one_hot`'s trace of arguments the descriptor layer validated (``values`` of shape (2,)): no checks."""
    out = _one_hot_impl(indices, values, depth=depth, axis=axis)
    return mark(out, indices, values, op="one_hot", depth=depth, axis=axis)


# Python numbers take the type JAX gives them with x64 off, so results do not depend on x64.
_PYTHON_NUMBER_TYPES = {
    np.dtype("int64"): np.int32,
    np.dtype("float64"): np.float32,
    np.dtype("complex128"): np.complex64,
}


def _values(op: str, values: Any, dtype: Any, context: str) -> jax.Array:
    """``(off, on)`` as a JAX array of two elements, of ``dtype`` if given."""
    if not hasattr(values, "dtype"):  # Python numbers (a tuple or list)
        values = np.asarray(values)
        values = values.astype(_PYTHON_NUMBER_TYPES.get(values.dtype, values.dtype))
    values = as_data(op, "values", values)
    if values.size != 2:
        raise fail(op, "values", "hold exactly two elements (off, on)", values.shape, context)
    if dtype is None:
        return values
    data_type = as_data_type(dtype, op, "dtype")
    if data_type.is_64bit and not x64_enabled():
        raise type_fail(op, "dtype", "be 32-bit or narrower unless jax_enable_x64 is on", data_type, context)
    target = data_type.dtype
    if target.kind in "iub" and not isinstance(values, jax.core.Tracer) and values.dtype != target:
        host = np.asarray(values)
        if not np.array_equal(host.astype(target).astype(host.dtype), host):
            raise fail(op, "values", f"fit dtype {target} (off, on)", host.tolist(), context)
    return values.astype(target)


def _check_depth(op: str, depth: Any, context: str) -> int:
    """``depth`` static, integral, in ``[1, 2^32 - 1]`` (DirectML sizes are UINT32, at least 1)."""
    if isinstance(depth, jax.core.Tracer):
        raise fail(op, "depth", "be a static int (not traced)", depth, f"{context}; mark it static")
    if isinstance(depth, bool) or not hasattr(depth, "__index__"):
        raise fail(op, "depth", "be an integer", depth, context)
    if not 1 <= int(depth) <= UINT32_MAX:
        raise fail(op, "depth", f"be in [1, {UINT32_MAX}]", int(depth), context)
    return int(depth)


@functools.partial(jax.jit, static_argnames=("depth", "axis"))
def _one_hot_impl(indices: jax.Array, values: jax.Array, *, depth: int, axis: int) -> jax.Array:
    """``on`` where the normalised position equals the new axis' iota, else ``off``."""
    position = jnp.expand_dims(normalize(indices, depth, IndexMode.FILL), axis)
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    hit = position == lax.broadcasted_iota(position.dtype, shape, axis)
    return jnp.where(hit, values[1], values[0])
