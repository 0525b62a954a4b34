"""`jax.vmap` rules of the operators' markers (`dmljax._core.markers`).

A batched operator is marked as one bigger operator of the same kind, so an ONNX export
of ``jax.vmap(f)`` still has one node. Index operators: gather_elements and scatter act per element (a
batch is one more leading dimension, ``axis + 1``); gather over a batch of tables gathers
along ``axis + 1``, over a batch of indices along ``axis`` (the batch lands there), over
both from the tables merged along ``axis`` (indices offset by ``b * size``); slice1 gets
one more window dimension; gather_nd gets one more batch dimension (``batch_dims + 1``),
scatter_nd one more index column, the batch number (ONNX's ScatterND has no batch
dimensions). The marked value stays the implementation's result, moved to
the rule's batch dimension; the extra inputs are dead code for XLA.

Order operators (cumulative_sum/product, top_k, argmax/argmin, one_hot, nonzero): the
batch is a new leading dimension (``axis + 1``). one_hot with batched ``values`` (a pair
per batch element) has no single node: its marker is dropped and the implementation
exports. nonzero_coordinates keeps its marker so that an export still refuses it by name.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.markers import BATCHERS, MARK_P

__all__: list[str] = []


def _front(x: Any, dim: int | None, size: int) -> Any:
    """``x`` with its batch dimension first (broadcast when it has none)."""
    if dim is None:
        return lax.broadcast(x, (size,))
    return jnp.moveaxis(x, dim, 0)


def _size(args: tuple, dims: tuple) -> int:
    return next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)


def _elements(args: tuple, dims: tuple, *, op: str, axis: int, **params: Any) -> tuple[Any, int]:
    size = _size(args, dims)
    fronted = [_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return MARK_P.bind(*fronted, op=op, axis=axis + 1, **params), 0


def _gather(args: tuple, dims: tuple, *, op: str, axis: int, mode: str) -> tuple[Any, int]:
    (result, data, indices), (result_dim, data_dim, index_dim) = args, dims
    if data_dim is None and index_dim is None:
        return result, result_dim
    if index_dim is None:
        fronted = _front(result, result_dim, 0), _front(data, data_dim, 0), indices
        return MARK_P.bind(*fronted, op=op, axis=axis + 1, mode=mode), 0
    placed = jnp.moveaxis(result, result_dim, axis)
    if data_dim is None:
        return MARK_P.bind(placed, data, _front(indices, index_dim, 0), op=op, axis=axis, mode=mode), axis
    merged, index, merged_mode = _merged(_front(data, data_dim, 0), _front(indices, index_dim, 0), axis, mode)
    if merged is None:
        return result, result_dim
    return MARK_P.bind(placed, merged, index, op=op, axis=axis, mode=merged_mode), axis


def _merged(data: Any, indices: Any, axis: int, mode: str) -> tuple[Any, Any, str]:
    """A batch of tables and of indices as one gather from the tables merged along ``axis``.

    The mode is applied first (clip, wrap negatives; invalid fill indices go past the
    merged axis), then each batch's indices are offset by ``b * size``.
    """
    n, size = data.shape[0], data.shape[axis + 1]
    if mode == "checked" or n * size >= np.iinfo(indices.dtype).max:
        return None, None, mode
    signed = jnp.issubdtype(indices.dtype, jnp.signedinteger)
    index = indices
    if mode == "clip":
        index = jnp.clip(index, -size if signed else 0, size - 1)
    if signed:
        index = jnp.where(index < 0, index + size, index)
    if mode == "fill":
        index = jnp.where((index >= 0) & (index < size), index, n * size)
    index = index + lax.broadcasted_iota(index.dtype, index.shape, 0) * np.asarray(size, index.dtype)
    perm = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, data.ndim))
    merged = lax.transpose(data, perm).reshape(data.shape[1 : axis + 1] + (n * size,) + data.shape[axis + 2 :])
    return merged, index, "fill" if mode == "fill" else "promise_in_bounds"


def _slice1(args: tuple, dims: tuple, *, op: str, offsets, sizes, strides, output_sizes) -> tuple[Any, int]:
    (result, x), (result_dim, x_dim) = args, dims
    x = _front(x, x_dim, result.shape[result_dim])
    n = x.shape[0]
    window = dict(offsets=(0,) + offsets, sizes=(n,) + sizes, strides=(1,) + strides, output_sizes=(n,) + output_sizes)
    return MARK_P.bind(_front(result, result_dim, 0), x, op=op, **window), 0


def _gather_nd(args: tuple, dims: tuple, *, op: str, batch_dims: int, mode: str) -> tuple[Any, int]:
    size = _size(args, dims)
    fronted = [_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return MARK_P.bind(*fronted, op=op, batch_dims=batch_dims + 1, mode=mode), 0


def _scatter_nd(args: tuple, dims: tuple, *, op: str, mode: str, reduction: str) -> tuple[Any, int]:
    size = _size(args, dims)
    result, input, tuples, updates = (_front(x, d, size) for x, d in zip(args, dims, strict=True))
    batch = lax.broadcasted_iota(tuples.dtype, tuples.shape[:-1] + (1,), 0)  # always in range: no mode applies
    tuples = lax.concatenate([batch, tuples], tuples.ndim - 1)
    return MARK_P.bind(result, input, tuples, updates, op=op, mode=mode, reduction=reduction), 0


BATCHERS.update(
    gather=_gather,
    gather_elements=_elements,
    scatter=_elements,
    slice1=_slice1,
    gather_nd=_gather_nd,
    scatter_nd=_scatter_nd,
)


# ----- the order operators ------------------------------------------------------------------


def _fronted(args: tuple, dims: tuple) -> list[Any]:
    size = _size(args, dims)
    return [_front(x, d, size) for x, d in zip(args, dims, strict=True)]


def _along_axis(args: tuple, dims: tuple, *, op: str, axis: int, **params: Any) -> tuple[Any, int]:
    return MARK_P.bind(*_fronted(args, dims), op=op, axis=axis + 1, **params), 0


def _arg_reduce(args: tuple, dims: tuple, *, op: str, axes: tuple[int, ...], **params: Any) -> tuple[Any, int]:
    return MARK_P.bind(*_fronted(args, dims), op=op, axes=tuple(a + 1 for a in axes), **params), 0


def _one_hot(args: tuple, dims: tuple, *, op: str, depth: int, axis: int) -> tuple[Any, int]:
    (result, indices, values), (result_dim, index_dim, values_dim) = args, dims
    if values_dim is not None:
        return result, result_dim
    result, indices = _fronted((result, indices), (result_dim, index_dim))
    return MARK_P.bind(result, indices, values, op=op, depth=depth, axis=axis + 1), 0


def _same(args: tuple, dims: tuple, **params: Any) -> tuple[Any, int]:
    return MARK_P.bind(*_fronted(args, dims), **params), 0


BATCHERS.update(
    cumulative_sum=_along_axis,
    cumulative_product=_along_axis,
    top_k_values=_along_axis,
    top_k_indices=_along_axis,
    arg_reduce=_arg_reduce,
    one_hot=_one_hot,
    nonzero_coordinates=_same,
)
