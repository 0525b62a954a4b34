"""One JAX primitive per exported dmljax operator, so it reaches ONNX as one node.

During an export, dmljax's public functions bind these primitives instead of running their
implementation (`dmljax.onnx._calls`). Every rule of a primitive delegates to the public
function it stands for, so JAX's semantics stay untouched wherever a primitive is
evaluated, compiled or batched: ``impl`` and the MLIR lowering call it; the batching rule
rebinds the primitive (one more leading dimension for the elementwise operators and slice
windows; a gather from the merged tables when tables and indices are both batched) and
only for strided buffers maps the public function with `jax.vmap`. Only the abstract
evaluation is computed here, from the parameters, so that nothing is traced twice.

Parameters are static and hashable: ``axis`` (normalised to ``[0, r)``), ``mode`` (the
resolved index mode: ``"clip"``, ``"fill"`` or ``"promise_in_bounds"``), the slice window,
or the `dmljax.TensorDesc`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters import batching, mlir

import dmljax

__all__ = [
    "GATHER_ELEMENTS_P",
    "GATHER_P",
    "ORIGINALS",
    "READ_TENSOR_P",
    "SCATTER_P",
    "SLICE1_P",
    "WRITE_TENSOR_P",
]

# The public functions as they are before any export patches them (dmljax.onnx is
# imported outside an export).
ORIGINALS: dict[str, Callable[..., Any]] = {
    name: getattr(dmljax, name)
    for name in (
        "gather",
        "gather_elements",
        "scatter",
        "scatter_elements",
        "slice1",
        "read_tensor",
        "write_tensor",
        "random_generator",
        "philox4x32_10",
        "uniform",
        "normal",
        "bernoulli",
        "dropout",
        "randint",
    )
}

GATHER_P = jax.extend.core.Primitive("dmljax_gather")
GATHER_ELEMENTS_P = jax.extend.core.Primitive("dmljax_gather_elements")
SCATTER_P = jax.extend.core.Primitive("dmljax_scatter")
SLICE1_P = jax.extend.core.Primitive("dmljax_slice1")
READ_TENSOR_P = jax.extend.core.Primitive("dmljax_read_tensor")
WRITE_TENSOR_P = jax.extend.core.Primitive("dmljax_write_tensor")


def _gather(data, indices, *, axis, mode):
    return ORIGINALS["gather"](data, indices, axis, mode=mode)


def _gather_elements(data, indices, *, axis, mode):
    return ORIGINALS["gather_elements"](data, indices, axis, mode=mode)


def _scatter(input, indices, updates, *, axis, mode):
    return ORIGINALS["scatter"](input, indices, updates, axis, mode=mode)


def _slice1(input, *, offsets, sizes, strides, output_sizes):
    return ORIGINALS["slice1"](input, offsets, sizes, strides, output_sizes)


def _read_tensor(buffer, *, desc):
    return ORIGINALS["read_tensor"](buffer, desc)


def _write_tensor(buffer, value, *, desc):
    return ORIGINALS["write_tensor"](buffer, desc, value)


def _shaped(shape: tuple[int, ...], dtype: Any) -> jax.core.ShapedArray:
    return jax.core.ShapedArray(tuple(shape), dtype)


def _front(x: jax.Array, dim: int | None, size: int) -> jax.Array:
    """``x`` with its batch dimension first (broadcast when it has none)."""
    if dim is None:
        return lax.broadcast(x, (size,))
    if dim == 0:
        return x
    perm = (dim,) + tuple(d for d in range(x.ndim) if d != dim)
    return lax.transpose(x, perm)


def _vmap_rule(impl: Callable[..., Any], args, dims, **params):
    """Fallback batching: map the public function (its own ops, not the ONNX node)."""
    with jax.disable_jit():  # traced under jax2onnx's patches: keep them out of jit caches
        return jax.vmap(functools.partial(impl, **params), in_axes=tuple(dims))(*args), 0


def _batch_size(args, dims) -> int:
    return next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)


def _elements_rule(prim, impl, args, dims, *, axis, mode):
    """gather_elements and scatter act per element: a batch is one more leading dimension."""
    size = _batch_size(args, dims)
    fronted = [_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    return prim.bind(*fronted, axis=axis + 1, mode=mode), 0


def _gather_rule(args, dims, *, axis, mode):
    (data, indices), (data_dim, index_dim) = args, dims
    if index_dim is None:
        return GATHER_P.bind(_front(data, data_dim, 0), indices, axis=axis + 1, mode=mode), 0
    if data_dim is None:  # the batch of indices lands where the axis was
        return GATHER_P.bind(data, _front(indices, index_dim, 0), axis=axis, mode=mode), axis
    return _merged_gather(_front(data, data_dim, 0), _front(indices, index_dim, 0), axis, mode)


def _merged_gather(data, indices, axis, mode):
    """A batch of tables and a batch of indices: one gather from the tables merged along ``axis``.

    The mode is applied first, in `jax.numpy` (clip, wrap negatives; invalid fill indices
    go past the merged axis), then each batch's indices are offset by ``b * size``.
    """
    n, size = data.shape[0], data.shape[axis + 1]
    signed = jnp.issubdtype(indices.dtype, jnp.signedinteger)
    if n * size >= np.iinfo(indices.dtype).max:
        return _vmap_rule(_gather, (data, indices), (0, 0), axis=axis, mode=mode)
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
    return GATHER_P.bind(merged, index, axis=axis, mode="fill" if mode == "fill" else "promise_in_bounds"), axis


def _slice1_rule(args, dims, *, offsets, sizes, strides, output_sizes):
    (x,), (dim,) = args, dims
    x = _front(x, dim, 0)
    n = x.shape[0]
    window = dict(offsets=(0,) + offsets, sizes=(n,) + sizes, strides=(1,) + strides, output_sizes=(n,) + output_sizes)
    return SLICE1_P.bind(x, **window), 0


def _define(prim, impl, abstract_eval, rule=None) -> None:
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    mlir.register_lowering(prim, mlir.lower_fun(impl, multiple_results=False))
    batching.primitive_batchers[prim] = rule or functools.partial(_vmap_rule, impl)


_define(
    GATHER_P,
    _gather,
    lambda data, indices, *, axis, mode: _shaped(
        data.shape[:axis] + indices.shape + data.shape[axis + 1 :], data.dtype
    ),
    _gather_rule,
)
_define(
    GATHER_ELEMENTS_P,
    _gather_elements,
    lambda data, indices, *, axis, mode: _shaped(indices.shape, data.dtype),
    functools.partial(_elements_rule, GATHER_ELEMENTS_P, _gather_elements),
)
_define(
    SCATTER_P,
    _scatter,
    lambda input, indices, updates, *, axis, mode: _shaped(input.shape, input.dtype),
    functools.partial(_elements_rule, SCATTER_P, _scatter),
)
_define(SLICE1_P, _slice1, lambda x, **window: _shaped(window["output_sizes"], x.dtype), _slice1_rule)
_define(READ_TENSOR_P, _read_tensor, lambda buffer, *, desc: _shaped(desc.sizes, np.dtype(desc.dtype.dtype)))
_define(WRITE_TENSOR_P, _write_tensor, lambda buffer, value, *, desc: _shaped(buffer.shape, buffer.dtype))
