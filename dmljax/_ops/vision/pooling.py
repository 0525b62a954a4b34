"""MaxPooling2 with its indices (DML_MAX_POOLING2, ONNX MaxPool's ``Indices``) and MaxUnpooling.

`max_pool_with_indices` visits each window's offsets in row-major order (the loop order of
onnxruntime's and torch's kernels) and keeps a candidate only when it is strictly greater
than the best so far: the first of equal values wins and its bits are returned (``-0.0``
and ``0.0`` tie). Values are compared as integer keys made from their bits (XLA CPU may
flush subnormals in float comparisons): NaN is above every number, so the first NaN of a
window wins (torch's rule; onnxruntime's kernel skips NaN). Padding never wins.

Its reverse-mode derivative (``jax.custom_vjp``) adds each output's cotangent at its
index, in output row-major order, by the ordered add (`dmljax._ops.ordered.ordered_add`):
the same bits on every platform and device count, where XLA's scatter-add of overlapping
windows gives no order. Forward mode (``jax.jvp``) is not available.

`max_unpool` writes ``x``'s elements at flat offsets into the whole output; where several
land on one element the last in row-major order wins (a scatter-max of their positions,
then one gather: exact whatever order XLA's scatter uses). Design note:
docs/design/pooling-and-folds.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._core.markers import mark, traced
from dmljax._core.typing import IndexArray
from dmljax._ops.common.checked import checkify_in_bounds
from dmljax._ops.common.index_checks import call_checked, marked_mode, prepare_indices
from dmljax._ops.common.indices import (
    IndexMode,
    as_data,
    as_indices,
    check_rank,
    normalize,
    resolve_mode,
    type_fail,
)
from dmljax._ops.common.positions import flat_dtype
from dmljax._ops.ordered.ordered_add import ordered_add
from dmljax._ops.vision.windows import WindowSpec, check_windows

__all__ = ["max_pool_validated", "max_pool_with_indices", "max_unpool", "max_unpool_validated", "pool_spec"]

_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
# The types ONNX MaxPool takes (opset 12; 16-bit floats exported through float32): the marker's.
_ONNX_MAX_POOL_TYPES = frozenset(np.dtype(t) for t in ("float32", "float16", "bfloat16", "float64", "int8", "uint8"))


def pool_spec(
    op: str,
    shape: tuple[int, ...],
    window: object,
    strides: object = None,
    start_padding: object = None,
    end_padding: object = None,
    dilations: object = None,
) -> WindowSpec:
    """Check max pooling's arguments for an input of ``shape`` (N, C, spatial...); the spec."""
    context = f"x shape {shape}"
    if not 3 <= len(shape) <= MAX_DIMENSIONS:
        raise fail(op, "x.ndim", f"be 3 to {MAX_DIMENSIONS} (N, C, then spatial dimensions)", len(shape), context)
    args = (window, strides, dilations, start_padding, end_padding)
    return check_windows(op, shape[2:], *args, context, every_window_reads=True)


def max_pool_with_indices(
    x: jax.typing.ArrayLike,
    window: int | Sequence[int],
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
) -> tuple[jax.Array, jax.Array]:
    """The maximum of each sliding window and its flat index: DML_MAX_POOLING2, ONNX MaxPool.

    ``x`` is ``(N, C, D1, ...)``; the output has ``(N, C, B1, ...)`` with ``Bi = (Di +
    start_i + end_i - dilation_i * (window_i - 1) - 1) // stride_i + 1`` (ONNX's formula).
    Window offsets are visited in row-major order and a value replaces the best only if it
    is greater: the first of equal values wins and keeps its bits (``-0.0`` before ``0.0``
    returns ``-0.0``); NaN is above every number (the first NaN wins, as in torch);
    padding is never chosen. Indices are flat positions into the whole of ``x``
    (``[0, N*C*D1*...)``, row-major: ONNX's ``storage_order=0``).

    Reverse mode adds each output's cotangent at its index in output row-major order (the
    ordered add: the same bits everywhere); ``jax.jvp`` is not available.

    Args:
      x: array of 3 to 8 dimensions, real (float, int or bool).
      window: the window size, an int or one per spatial dimension.
      strides, start_padding, end_padding, dilations: an int or one per spatial
        dimension (defaults 1, 0, 0, 1).

    Returns:
      ``(values, indices)``: values of ``x``'s type, indices uint32 (uint64 for inputs of
      2^32 - 1 elements or more, with ``jax_enable_x64``), both of the output shape.

    Raises:
      ValidationError: ``x`` has fewer than 3 dimensions, an argument breaks its rule, a
        dilated window is larger than the padded input, or a window covers only padding.
      TypeError: ``x`` is complex or of an unsupported type.

    Examples:
      >>> x = jnp.array([[[3.0, 3.0, -0.0, 0.0, 2.0, 1.0]]])
      >>> values, indices = max_pool_with_indices(x, 2, strides=2)  # ties: the first wins
      >>> values, indices
      (Array([[[ 3., -0.,  2.]]], dtype=float32), Array([[[0, 2, 4]]], dtype=uint32))
      >>> max_pool_with_indices(x, 3, start_padding=1, end_padding=1, dilations=2)[1]
      Array([[[1, 0, 1, 4]]], dtype=uint32)
    """
    op = "max_pool_with_indices"
    x = as_data(op, "x", x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise type_fail(op, "x.dtype", "be real (complex numbers have no order)", x.dtype, f"x shape {x.shape}")
    spec = pool_spec(op, x.shape, window, strides, start_padding, end_padding, dilations)
    flat_dtype(op, x.shape)
    return max_pool_validated(x, spec)


def max_pool_validated(x: jax.Array, spec: WindowSpec) -> tuple[jax.Array, jax.Array]:
    """`max_pool_with_indices` on validated arguments: no checks."""
    values, indices = _pool_jit(x, spec)
    if not traced(values, x) or np.dtype(x.dtype) not in _ONNX_MAX_POOL_TYPES:  # else: the export keeps the loop
        return values, indices
    params = dict(window=spec.window, strides=spec.strides, dilations=spec.dilations)
    pads = dict(start_padding=spec.start_padding, end_padding=spec.end_padding)
    values = mark(values, x, op="max_pool_values", **params, **pads)
    indices = mark(indices, x, op="max_pool_indices", **params, **pads)
    return values, indices


def _keys(x: jax.Array) -> jax.Array:
    """Integer keys in the pooling order, from the bits: ``-0.0`` ties ``0.0``, NaN above all."""
    if x.dtype == np.bool_:
        return x.astype(np.int32)
    if not jnp.issubdtype(x.dtype, jnp.floating):  # 8/16-bit integers widened: the same order
        return x.astype(np.int32) if x.dtype.itemsize < 4 else x
    signed = _SIGNED[x.dtype.itemsize]
    bits = lax.bitcast_convert_type(x, signed)
    top = int(np.iinfo(signed).max)  # type: ignore[type-var]
    magnitude = bits & jnp.asarray(top, signed)
    infinity = lax.bitcast_convert_type(jnp.asarray(np.inf, x.dtype), signed)
    key = jnp.where(bits < 0, -magnitude, magnitude)
    return jnp.where(magnitude > infinity, jnp.asarray(top, signed), key)


def _valid(spec: WindowSpec, offset: tuple[int, ...], rank: int) -> np.ndarray | None:
    """Which window positions read an input element (not padding) at ``offset``; None: all."""
    mask = np.ones((1, 1) + spec.blocks, bool)
    for i, (j, n) in enumerate(zip(offset, spec.spatial, strict=True)):
        position = np.arange(spec.blocks[i]) * spec.strides[i] + j * spec.dilations[i] - spec.start_padding[i]
        shape = [1] * rank
        shape[2 + i] = spec.blocks[i]
        mask = mask & ((position >= 0) & (position < n)).reshape(shape)
    return None if mask.all() else mask


def _window_view(padded: jax.Array, spec: WindowSpec, offset: tuple[int, ...]) -> jax.Array:
    """The element each window position reads at ``offset``: a strided slice of the padded input."""
    start = (0, 0) + tuple(j * d for j, d in zip(offset, spec.dilations, strict=True))
    limit = padded.shape[:2] + tuple(
        s + (b - 1) * st + 1 for s, b, st in zip(start[2:], spec.blocks, spec.strides, strict=True)
    )
    return lax.slice(padded, start, limit, (1, 1) + spec.strides)


def _argmax(x: jax.Array, spec: WindowSpec) -> jax.Array:
    """The flat index of each window's first maximum (row-major offsets, strict comparison)."""
    keys = _keys(x)
    config = [(0, 0, 0)] * 2 + [(a, b, 0) for a, b in zip(spec.start_padding, spec.end_padding, strict=True)]
    padded = lax.pad(keys, jnp.zeros((), keys.dtype), config)
    offsets = spec.offsets()
    best = _window_view(padded, spec, offsets[0])
    best_k = jnp.zeros(best.shape, np.int32)
    first = _valid(spec, offsets[0], x.ndim)
    seen = None if first is None else jnp.asarray(first)  # None: every position has seen an element
    for k, offset in enumerate(offsets[1:], start=1):
        candidate = _window_view(padded, spec, offset)
        valid = _valid(spec, offset, x.ndim)
        better = candidate > best
        if seen is not None:
            better = better | ~seen
        if valid is not None:
            better = better & jnp.asarray(valid)
        seen = None if seen is None or valid is None else seen | jnp.asarray(valid)
        best = jnp.where(better, candidate, best)
        best_k = jnp.where(better, np.int32(k), best_k)
    return _flat_index(best_k, spec, x.shape)


def _flat_index(best_k: jax.Array, spec: WindowSpec, shape: tuple[int, ...]) -> jax.Array:
    """Flat positions into ``x`` from each window's winning offset number."""
    dtype = flat_dtype("max_pool_with_indices", shape)
    out_shape = best_k.shape
    flat = lax.broadcasted_iota(dtype, out_shape, 0) * np.asarray(shape[1], dtype)
    flat = flat + lax.broadcasted_iota(dtype, out_shape, 1)
    for i in range(len(spec.spatial)):
        inner = math.prod(spec.window[i + 1 :])
        j = (best_k // np.int32(inner)) % np.int32(spec.window[i])
        block = lax.broadcasted_iota(np.int32, out_shape, 2 + i)
        position = block * np.int32(spec.strides[i]) + j * np.int32(spec.dilations[i]) - np.int32(spec.start_padding[i])
        flat = flat * np.asarray(spec.spatial[i], dtype) + position.astype(dtype)
    return flat


def _take(x: jax.Array, indices: jax.Array) -> jax.Array:
    return jnp.take(x.reshape(-1), indices, mode="clip")


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _pool(x: jax.Array, spec: WindowSpec) -> tuple[jax.Array, jax.Array]:
    indices = _argmax(x, spec)
    return _take(x, indices), indices


def _pool_fwd(x: jax.Array, spec: WindowSpec) -> tuple[tuple[jax.Array, jax.Array], tuple[jax.Array, jax.Array]]:
    indices = _argmax(x, spec)
    return (_take(x, indices), indices), (indices, jnp.zeros((0,), x.dtype))


def _pool_bwd(spec: WindowSpec, residuals: tuple[jax.Array, jax.Array], cts: tuple) -> tuple[jax.Array]:
    indices, like = residuals
    g = cts[0]
    flat = jnp.zeros(math.prod(spec.spatial) * indices.shape[0] * indices.shape[1], like.dtype)
    out = ordered_add(flat, indices.reshape(-1), g.reshape(-1).astype(like.dtype))
    return (out.reshape(indices.shape[:2] + spec.spatial),)


_pool.defvjp(_pool_fwd, _pool_bwd)
_pool_jit = jax.jit(_pool, static_argnums=1)


def max_unpool(
    x: jax.typing.ArrayLike,
    indices: IndexArray,
    output_shape: Sequence[int],
    *,
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """Write ``x``'s elements at flat offsets into a zero output: DML_MAX_UNPOOLING, ONNX MaxUnpool.

    ``output.reshape(-1)[indices[p]] = x[p]`` for every position ``p`` of ``x``; the other
    elements are 0. The offsets index the whole output (``output_shape`` in full, row-major;
    DirectML's page and onnxruntime's kernel), also when it is larger than the pooled
    input's source. Where several offsets are equal, the last ``p`` in row-major order wins
    (onnxruntime's loop), exactly, on every platform. Signed indices may count from the
    end (``-1`` is the last element), as in `dmljax.IndexMode`. Out-of-range indices:
    concrete ones raise `IndexError`; traced ones are dropped by default, or follow ``mode``.

    The gradient in ``x`` is the output's cotangent read at each winning offset (0 for the
    elements that lost); every element is read at most once.

    Args:
      x: array of 1 to 8 dimensions, any type.
      indices: integer array of ``x``'s shape (int32, int64, uint32 or uint64), as
        `max_pool_with_indices` returns them.
      output_shape: the output's shape, static ints, of ``x``'s rank.
      mode: None (check concrete indices, else drop), or a `dmljax.IndexMode` or its string.

    Returns:
      Array of ``output_shape`` and ``x``'s type.

    Raises:
      ValidationError: ``output_shape`` is not static ints of ``x``'s rank, or ``indices``
        has another shape than ``x``.
      TypeError: ``x`` or ``indices`` has an unsupported type.
      IndexError: concrete indices hold a value out of range (``mode`` None or "checked").

    Examples:
      >>> x = jnp.array([[[5.0, 6.0, 7.0]]])
      >>> max_unpool(x, np.array([[[1, 2, 1]]]), (1, 1, 4))  # 1 twice: the later wins
      Array([[[0., 7., 6., 0.]]], dtype=float32)
    """
    op = "max_unpool"
    x = as_data(op, "x", x)
    check_rank(op, "x", x.shape)
    shape = _check_output_shape(op, output_shape, x.shape)
    policy = resolve_mode(op, mode, IndexMode.FILL)
    indices = as_indices(op, indices)
    if tuple(indices.shape) != x.shape:
        raise fail(op, "indices.shape", f"be x's shape {x.shape}", tuple(indices.shape))
    base = jnp.zeros((math.prod(shape),), x.dtype)
    given = indices
    indices, due = prepare_indices(op, indices, base, 0, policy)
    checked = policy.checkify and isinstance(indices, jax.core.Tracer)
    out = call_checked(op, _unpool_impl, (base, indices, x), due, axis=0, mode=policy.mode, checked=checked)
    out = out.reshape(shape)
    if not traced(out, x, indices):
        return out
    return mark(out, x, indices, op=op, output_shape=shape, mode=marked_mode(policy, given, base.shape[0]))


def max_unpool_validated(x: jax.Array, indices: jax.Array, output_shape: tuple[int, ...]) -> jax.Array:
    """`max_unpool`'s trace (traced indices: dropped when out of range) on validated arguments."""
    base = jnp.zeros((math.prod(output_shape),), x.dtype)
    out = _unpool_impl(base, indices, x, axis=0, mode=IndexMode.FILL, checked=False).reshape(output_shape)
    return mark(out, x, indices, op="max_unpool", output_shape=output_shape, mode=IndexMode.FILL.value)


def _check_output_shape(op: str, output_shape: object, x_shape: tuple[int, ...]) -> tuple[int, ...]:
    if isinstance(output_shape, jax.core.Tracer):
        raise fail(op, "output_shape", "be static ints (not traced)", output_shape)
    try:
        shape: tuple = tuple(output_shape)  # type: ignore[arg-type]
    except TypeError:
        raise fail(op, "output_shape", f"be {len(x_shape)} static ints", output_shape) from None
    if len(shape) != len(x_shape) or not all(hasattr(n, "__index__") and not isinstance(n, bool) for n in shape):
        raise fail(op, "output_shape", f"be {len(x_shape)} static ints (x's rank)", output_shape, f"x shape {x_shape}")
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise fail(op, "output_shape", "hold sizes >= 0", shape)
    flat_dtype(op, shape)
    return shape


@functools.partial(jax.jit, static_argnames=("axis", "mode", "checked"))
def _unpool_impl(base: jax.Array, indices: jax.Array, x: jax.Array, *, axis: int, mode: IndexMode, checked: bool):
    size = base.shape[0]
    if checked:
        checkify_in_bounds("max_unpool", indices, size, axis)
    if size == 0 or x.size == 0:
        return base
    position = normalize(indices.reshape(-1), size, mode)
    if mode is IndexMode.CLIP:
        position = jnp.minimum(position, np.asarray(size - 1, position.dtype))
    order = flat_dtype("max_unpool", x.shape)
    rank = lax.iota(order, x.size) + np.asarray(1, order)  # 0: no element lands there
    winner = jnp.zeros((size,), order).at[position].max(rank, mode="drop")
    source = jnp.where(winner > 0, winner - np.asarray(1, order), np.asarray(x.size, order))
    return jnp.take(x.reshape(-1), source, mode="fill", fill_value=0)
