"""The export-only primitives: one per exported dmljax operator, so it reaches ONNX as one node.

The exporter (`dmljax.onnx._rewrite`) replaces each operator's marker
(`dmljax._core.markers`) by the operator's primitive here, bound to the operator's inputs
only, so the implementation that computed the marked value becomes dead code. These
primitives live only in the exporter's own jaxpr: they have an abstract evaluation and
no implementation, MLIR lowering or batching rule, so no compiler, cache or transform
ever sees one.

Parameters are the marker's: ``axis`` (normalised to ``[0, r)``), ``mode`` (the resolved
index mode: ``"clip"``, ``"fill"`` or ``"promise_in_bounds"``), ``reduction``, the slice
window, or the `dmljax.TensorDesc`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.extend.core
import numpy as np

__all__ = ["EXPORT_PRIMITIVES"]


def _shaped(shape: tuple[Any, ...], dtype: Any) -> jax.core.ShapedArray:
    return jax.core.ShapedArray(tuple(shape), dtype)


def _primitive(name: str, abstract_eval: Any) -> jax.extend.core.Primitive:
    prim = jax.extend.core.Primitive(f"dmljax_{name}")
    prim.def_abstract_eval(abstract_eval)
    return prim


def _pooled(shape: tuple[int, ...], p: dict[str, Any]) -> tuple[int, ...]:
    """Max pooling's output shape: ONNX's formula with dilations."""
    windows = zip(
        shape[2:], p["window"], p["strides"], p["dilations"], p["start_padding"], p["end_padding"], strict=True
    )
    return tuple(shape[:2]) + tuple((n + a + b - d * (k - 1) - 1) // s + 1 for n, k, s, d, a, b in windows)


# Marker op name -> its export-only primitive (operands: the marker's operands after the first).
EXPORT_PRIMITIVES: dict[str, jax.extend.core.Primitive] = {
    "gather": _primitive(
        "gather",
        lambda data, indices, *, axis, mode: _shaped(
            data.shape[:axis] + indices.shape + data.shape[axis + 1 :], data.dtype
        ),
    ),
    "gather_elements": _primitive(
        "gather_elements", lambda data, indices, *, axis, mode: _shaped(indices.shape, data.dtype)
    ),
    "scatter": _primitive(
        "scatter", lambda input, indices, updates, *, axis, mode, reduction: _shaped(input.shape, input.dtype)
    ),
    "gather_nd": _primitive(
        "gather_nd",
        lambda data, indices, *, batch_dims, mode: _shaped(
            indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1] :], data.dtype
        ),
    ),
    "scatter_nd": _primitive(
        "scatter_nd", lambda input, indices, updates, *, mode, reduction: _shaped(input.shape, input.dtype)
    ),
    "cumulative_sum": _primitive("cumulative_sum", lambda x, **p: _shaped(x.shape, x.dtype)),
    "top_k_values": _primitive(
        "top_k_values",
        lambda x, *, k, axis, largest: _shaped(x.shape[:axis] + (k,) + x.shape[axis + 1 :], x.dtype),
    ),
    "top_k_indices": _primitive(
        "top_k_indices",
        lambda x, *, k, axis, largest: _shaped(x.shape[:axis] + (k,) + x.shape[axis + 1 :], np.int32),
    ),
    "arg_reduce": _primitive(
        "arg_reduce",
        lambda x, *, axes, keepdims, last, largest: _shaped(
            tuple(1 if d in axes else n for d, n in enumerate(x.shape) if keepdims or d not in axes), np.int32
        ),
    ),
    "one_hot": _primitive(
        "one_hot",
        lambda indices, values, *, depth, axis: _shaped(
            indices.shape[:axis] + (depth,) + indices.shape[axis:], values.dtype
        ),
    ),
    "resample": _primitive(
        "resample",
        lambda x, *, scales, **p: _shaped(
            tuple(int(np.floor(np.float32(n) * np.float32(s))) for n, s in zip(x.shape, scales, strict=True)), x.dtype
        ),
    ),
    "max_pool_values": _primitive("max_pool_values", lambda x, **p: _shaped(_pooled(x.shape, p), x.dtype)),
    "max_pool_indices": _primitive("max_pool_indices", lambda x, **p: _shaped(_pooled(x.shape, p), np.uint32)),
    "fold": _primitive(
        "fold",
        lambda cols, *, spatial, window, **p: _shaped(
            cols.shape[:1] + (cols.shape[1] // int(np.prod(window)),) + spatial, cols.dtype
        ),
    ),
    "slice1": _primitive("slice1", lambda x, **window: _shaped(window["output_sizes"], x.dtype)),
    "read_tensor": _primitive("read_tensor", lambda buffer, *, desc: _shaped(desc.sizes, np.dtype(desc.dtype.dtype))),
    "write_tensor": _primitive("write_tensor", lambda buffer, value, *, desc: _shaped(buffer.shape, buffer.dtype)),
}
