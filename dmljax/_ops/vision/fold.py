"""Unfold and Fold (DML_UNFOLD, DML_FOLD; torch's ``unfold``/``fold``, ONNX Col2Im).

`unfold` copies every sliding window of ``(N, C, *spatial)`` into a column: ``(N, C *
prod(window), blocks)``, the channel slowest, then the window offset (row-major), as
torch's ``im2col``. Zero padding reads 0.

`fold` is its adjoint: each column value is added at the element it came from. Where
windows overlap the sums follow the loop onnxruntime's Col2Im, ONNX's reference and
torch's ``col2im`` share: a zero output, then for each window offset in row-major order
(outer), every block (inner), ``out += value``. For one output element the blocks of one
offset never meet, so the order is that of the offsets: `fold` adds one strided plane per
offset into the output, in that order, each element once per plane (no scatter, no
reassociation: the same bits on every platform and device count).

`unfold`'s reverse-mode derivative is `fold` exactly (``jax.custom_vjp``; forward mode is
not available for `unfold`); `fold`'s is `unfold` (pads and slices: exact). Design note:
docs/design/pooling-and-folds.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._core.markers import mark, traced
from dmljax._ops.common.indices import as_data, type_fail
from dmljax._ops.vision.windows import WindowSpec, check_windows

__all__ = ["fold", "fold_spec", "fold_validated", "unfold", "unfold_spec", "unfold_validated"]

Ints = int | Sequence[int] | None


def unfold_spec(
    op: str, shape: tuple[int, ...], window: object, strides: object, dilations: object, start: object, end: object
) -> WindowSpec:
    """Check `unfold`'s arguments for an input of ``shape``; the spec."""
    context = f"x shape {shape}"
    if not 3 <= len(shape) <= MAX_DIMENSIONS:
        raise fail(op, "x.ndim", f"be 3 to {MAX_DIMENSIONS} (N, C, then spatial dimensions)", len(shape), context)
    return check_windows(op, shape[2:], window, strides, dilations, start, end, context)


def fold_spec(
    op: str,
    cols_shape: tuple[int, ...],
    output_spatial_shape: object,
    window: object,
    strides: object,
    dilations: object,
    start: object,
    end: object,
) -> WindowSpec:
    """Check `fold`'s arguments for columns of ``cols_shape``; the spec (over the output's spatial sizes)."""
    context = f"cols shape {cols_shape}"
    if len(cols_shape) != 3:
        raise fail(op, "cols.ndim", "be 3 (N, C * prod(window), blocks)", len(cols_shape), context)
    if isinstance(output_spatial_shape, jax.core.Tracer):
        raise fail(op, "output_spatial_shape", "be static ints (not traced)", output_spatial_shape)
    try:
        spatial: tuple = tuple(output_spatial_shape)  # type: ignore[arg-type]
    except TypeError:
        raise fail(op, "output_spatial_shape", "be static ints", output_spatial_shape) from None
    if not all(hasattr(n, "__index__") and not isinstance(n, bool) and int(n) >= 1 for n in spatial):
        raise fail(op, "output_spatial_shape", "hold ints >= 1", output_spatial_shape, context)
    spec = check_windows(op, tuple(int(n) for n in spatial), window, strides, dilations, start, end, context)
    if cols_shape[1] % spec.window_size:
        rule = f"be a multiple of prod(window) = {spec.window_size}"
        raise fail(op, "cols.shape[1]", rule, cols_shape[1], context)
    if cols_shape[2] != math.prod(spec.blocks):
        rule = f"be the number of blocks {math.prod(spec.blocks)} ({' x '.join(map(str, spec.blocks))})"
        raise fail(op, "cols.shape[2]", rule, cols_shape[2], context)
    return spec


def unfold(
    x: jax.typing.ArrayLike,
    window: int | Sequence[int],
    strides: Ints = None,
    dilations: Ints = None,
    start_padding: Ints = None,
    end_padding: Ints = None,
) -> jax.Array:
    """Every sliding window of ``x`` as a column: DML_UNFOLD, torch's ``unfold`` (im2col).

    ``x`` is ``(N, C, D1, ...)`` (1 to 6 spatial dimensions); the result is ``(N, C *
    prod(window), L)`` with ``L = prod(Bi)``, ``Bi = (Di + start_i + end_i - dilation_i *
    (window_i - 1) - 1) // stride_i + 1``. Row ``c * prod(window) + k`` of column ``b``
    holds the element that window offset ``k`` (row-major) of block ``b`` (row-major)
    reads in channel ``c``; padding reads 0.

    Reverse mode is `fold` with the same arguments, bit for bit (``jax.custom_vjp``);
    ``jax.jvp`` is not available for this function.

    Args:
      x: array of 3 to 8 dimensions, any type.
      window: the window size, an int or one per spatial dimension.
      strides, dilations, start_padding, end_padding: an int or one per spatial
        dimension (defaults 1, 1, 0, 0).

    Returns:
      Array ``(N, C * prod(window), L)`` of ``x``'s type.

    Raises:
      ValidationError: a rank or argument breaks its rule, or a dilated window is larger
        than the padded input.
      TypeError: ``x`` has an unsupported type.

    Examples:
      >>> unfold(jnp.arange(1.0, 6.0).reshape(1, 1, 5), 2, strides=2, end_padding=1)
      Array([[[1., 3., 5.],
              [2., 4., 0.]]], dtype=float32)
    """
    op = "unfold"
    x = as_data(op, "x", x)
    spec = unfold_spec(op, x.shape, window, strides, dilations, start_padding, end_padding)
    return unfold_validated(x, spec)


def fold(
    cols: jax.typing.ArrayLike,
    output_spatial_shape: Sequence[int],
    window: int | Sequence[int],
    strides: Ints = None,
    dilations: Ints = None,
    start_padding: Ints = None,
    end_padding: Ints = None,
) -> jax.Array:
    """Sum sliding-window columns into an image: DML_FOLD, torch's ``fold``, ONNX Col2Im.

    The adjoint of `unfold`: ``cols`` ``(N, C * prod(window), L)`` gives ``(N, C,
    *output_spatial_shape)``; every column value is added at the element its window
    offset reads (values that fall in the padding are dropped). Overlapping windows are
    summed in the loop order of onnxruntime's Col2Im, ONNX's reference and torch (window
    offsets outer, blocks inner, from a zero output), bit for bit, on every platform.

    Args:
      cols: array ``(N, C * prod(window), L)``, a number type (not bool).
      output_spatial_shape: the output's spatial sizes, static ints >= 1.
      window, strides, dilations, start_padding, end_padding: as in `unfold`; ``L``
        must be the number of blocks they give over ``output_spatial_shape``.

    Returns:
      Array ``(N, C, *output_spatial_shape)`` of ``cols``' type.

    Raises:
      ValidationError: a rank, size or argument breaks its rule.
      TypeError: ``cols`` is bool or of an unsupported type.

    Examples:
      >>> cols = jnp.array([[[1.0, 10.0], [2.0, 20.0]]])  # window 2, stride 1, over 3
      >>> fold(cols, (3,), 2)
      Array([[[ 1., 12., 20.]]], dtype=float32)
    """
    op = "fold"
    cols = as_data(op, "cols", cols)
    if cols.dtype == jnp.bool_:
        raise type_fail(op, "cols.dtype", "be a number type (sums)", cols.dtype)
    spec = fold_spec(op, cols.shape, output_spatial_shape, window, strides, dilations, start_padding, end_padding)
    return fold_validated(cols, spec)


def _params(spec: WindowSpec) -> dict:
    return dict(
        window=spec.window,
        strides=spec.strides,
        dilations=spec.dilations,
        start_padding=spec.start_padding,
        end_padding=spec.end_padding,
    )


def unfold_validated(x: jax.Array, spec: WindowSpec) -> jax.Array:
    """`unfold` on validated arguments: no checks."""
    out = _unfold_jit(x, spec)
    return mark(out, x, op="unfold", **_params(spec)) if traced(out, x) else out


def fold_validated(cols: jax.Array, spec: WindowSpec) -> jax.Array:
    """`fold` on validated arguments: no checks."""
    out = _fold_jit(cols, spec)
    return mark(out, cols, op="fold", spatial=spec.spatial, **_params(spec)) if traced(out, cols) else out


def _padded_shape(spec: WindowSpec) -> tuple[int, ...]:
    return tuple(n + a + b for n, a, b in zip(spec.spatial, spec.start_padding, spec.end_padding, strict=True))


def _unfold_forward(x: jax.Array, spec: WindowSpec) -> jax.Array:
    config = [(0, 0, 0)] * 2 + [(a, b, 0) for a, b in zip(spec.start_padding, spec.end_padding, strict=True)]
    padded = lax.pad(x, jnp.zeros((), x.dtype), config)
    views = []
    for offset in spec.offsets():
        start = (0, 0) + tuple(j * d for j, d in zip(offset, spec.dilations, strict=True))
        limit = x.shape[:2] + tuple(
            s + (b - 1) * st + 1 for s, b, st in zip(start[2:], spec.blocks, spec.strides, strict=True)
        )
        views.append(lax.slice(padded, start, limit, (1, 1) + spec.strides))
    stacked = jnp.stack(views, axis=2)  # (N, C, K, *blocks)
    n, c = x.shape[:2]
    return stacked.reshape(n, c * spec.window_size, math.prod(spec.blocks))


def _fold_forward(cols: jax.Array, spec: WindowSpec) -> jax.Array:
    n = cols.shape[0]
    c = cols.shape[1] // spec.window_size
    planes = cols.reshape((n, c, spec.window_size) + spec.blocks)
    padded_shape = _padded_shape(spec)
    zero = jnp.zeros((), cols.dtype)
    acc = jnp.zeros((n, c) + padded_shape, cols.dtype)
    for k, offset in enumerate(spec.offsets()):
        config = [(0, 0, 0)] * 2
        for j, d, s, b, p in zip(offset, spec.dilations, spec.strides, spec.blocks, padded_shape, strict=True):
            low = j * d
            config.append((low, p - low - (b - 1) * s - 1, s - 1))
        acc = acc + lax.pad(planes[:, :, k], zero, config)  # offsets outer: one plane at a time, in order
    start = (0, 0) + spec.start_padding
    return lax.slice(acc, start, tuple(a + m for a, m in zip(start, (n, c) + spec.spatial, strict=True)))


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _unfold(x: jax.Array, spec: WindowSpec) -> jax.Array:
    return _unfold_forward(x, spec)


def _unfold_fwd(x: jax.Array, spec: WindowSpec) -> tuple[jax.Array, None]:
    return _unfold_forward(x, spec), None


def _unfold_bwd(spec: WindowSpec, _: None, g: jax.Array) -> tuple[jax.Array]:
    return (_fold_forward(g, spec),)


_unfold.defvjp(_unfold_fwd, _unfold_bwd)
_unfold_jit = jax.jit(_unfold, static_argnums=1)
_fold_jit = jax.jit(_fold_forward, static_argnums=1)
