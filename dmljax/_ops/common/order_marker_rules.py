"""`jax.vmap` rules of the markers of cumulative_sum/product, top_k, argmax/argmin, one_hot, nonzero.

As in `dmljax._ops.common.marker_rules`: a batched operator is marked as one bigger operator of
the same kind (the batch a new leading dimension: ``axis + 1``), so an ONNX export of
``jax.vmap(f)`` keeps one node. one_hot with batched ``values`` (a pair per batch element)
has no single node: its marker is dropped and the implementation exports. nonzero_coordinates
keeps its marker so that an export still refuses it by name.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import lax

from dmljax._core.markers import BATCHERS, MARK_P

__all__: list[str] = []


def _front(x: Any, dim: int | None, size: int) -> Any:
    return lax.broadcast(x, (size,)) if dim is None else jnp.moveaxis(x, dim, 0)


def _fronted(args: tuple, dims: tuple) -> list[Any]:
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
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
