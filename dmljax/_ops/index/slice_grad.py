"""SliceGrad (DML_SLICE_GRAD_OPERATOR_DESC): Slice1's adjoint, zeros where the window does not read.

The window rules are `slice1`'s (`dmljax._ops.index.slice1.check_window_rules`), with the
input gradient's shape as Slice1's output sizes. The body is one `lax.rev` of the
negative-stride dimensions and pads: zeros between the copied elements (`_spread`)
and around the window: never a scatter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.limits import INT32_MAX
from dmljax._ops.common.indices import as_data, check_rank
from dmljax._ops.common.static_args import static_ints
from dmljax._ops.index.slice1 import check_window_rules

__all__ = ["slice_grad", "slice_grad_validated"]


def slice_grad(
    input_gradient: jax.typing.ArrayLike,
    output_shape: Sequence[int],
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
) -> jax.Array:
    """Scatter a slice's gradient back into a zero tensor: DML_SLICE_GRAD_OPERATOR_DESC.

    The adjoint of `slice1` with the same window: ``output`` has shape ``output_shape``
    (Slice1's input shape), ``output[b + strides * c] = input_gradient[c]`` with ``b`` as in
    `slice1`, and every element the window does not read is 0. A window reads each
    element at most once, so nothing is summed.

    Args:
      input_gradient: ``InputGradientTensor``: Slice1's output gradient, 1 to 8 dimensions,
        any `DataType`; its shape is Slice1's output sizes.
      output_shape: ``OutputGradientTensor.Sizes``: Slice1's input shape, static ints >= 1.
      offsets: ``InputWindowOffsets`` (as `slice1`'s ``offsets``).
      sizes: ``InputWindowSizes`` (as `slice1`'s ``sizes``).
      strides: ``InputWindowStrides`` (as `slice1`'s ``strides``; nonzero, may be negative).

    Returns:
      Array of ``output_shape`` and ``input_gradient``'s type.

    Raises:
      ValidationError: an argument is traced or of the wrong length, a window leaves
        ``output_shape``, a stride is 0, or ``input_gradient``'s shape is no valid Slice1
        output size for the window.
      TypeError: ``input_gradient`` has an unsupported type.

    Examples:
      >>> slice_grad(jnp.array([[1.0, 2.0]]), [2, 5], [1, 0], [1, 4], [1, -2])
      Array([[0., 0., 0., 0., 0.],
             [0., 2., 0., 1., 0.]], dtype=float32)
    """
    op = "slice_grad"
    grad = as_data(op, "input_gradient", input_gradient)
    check_rank(op, "input_gradient", grad.shape)
    context = f"input_gradient shape {grad.shape}"
    shape = static_ints(op, "output_shape", output_shape, grad.ndim, context, minimum=1)
    context = f"output_shape {shape}"
    offsets = static_ints(op, "offsets", offsets, grad.ndim, context)
    sizes = static_ints(op, "sizes", sizes, grad.ndim, context)
    strides = static_ints(op, "strides", strides, grad.ndim, context, -INT32_MAX - 1, INT32_MAX)

    def error(param: str, rule: str, value: Any, extra: str) -> Exception:
        return fail(op, param, rule, value, extra)

    names = {"offsets": "offsets", "sizes": "sizes", "strides": "strides", "output_sizes": "input_gradient.shape"}
    check_window_rules(shape, offsets, sizes, strides, grad.shape, error, names, "output_shape")
    return slice_grad_validated(grad, shape, offsets, sizes, strides)


def slice_grad_validated(
    input_gradient: jax.Array,
    output_shape: tuple[int, ...],
    offsets: tuple[int, ...],
    sizes: tuple[int, ...],
    strides: tuple[int, ...],
) -> jax.Array:
    """`slice_grad` on a validated window (Python ints): no checks."""
    config = []
    for dim, offset, size, stride, out in zip(output_shape, offsets, sizes, strides, input_gradient.shape, strict=True):
        first = offset if stride > 0 else offset + size - 1
        last = first + stride * (out - 1)
        low, high = min(first, last), max(first, last)
        config.append((low, dim - 1 - high, 0))
    reversed_dims = tuple(d for d, stride in enumerate(strides) if stride < 0)
    grad = lax.rev(input_gradient, reversed_dims) if reversed_dims else input_gradient
    for axis, stride in enumerate(strides):
        grad = _spread(grad, axis, abs(stride))
    return lax.pad(grad, np.zeros((), grad.dtype), config)


def _spread(x: jax.Array, axis: int, step: int) -> jax.Array:
    """``step - 1`` zeros between neighbours along ``axis``: `lax.pad`'s interior padding.

    Written as a pad of a new axis and a reshape, which `dmljax.onnx.export` lowers
    (jax2onnx refuses interior padding).
    """
    if step == 1:
        return x
    n = x.shape[axis]
    wide = lax.expand_dims(x, (axis + 1,))
    config = [(0, 0, 0)] * wide.ndim
    config[axis + 1] = (0, step - 1, 0)
    wide = lax.pad(wide, np.zeros((), x.dtype), config)
    merged = wide.reshape(x.shape[:axis] + (n * step,) + x.shape[axis + 1 :])
    return lax.slice_in_dim(merged, 0, (n - 1) * step + 1, axis=axis)
