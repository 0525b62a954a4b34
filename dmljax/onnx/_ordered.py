"""ONNX lowerings of cumulative_sum, top_k, argmax/argmin and one_hot.

* ``cumulative_sum`` -> ``CumSum`` (``exclusive``, ``reverse``): onnxruntime's CPU kernel adds
  in sequence, as dmljax does (equal bits, checked in tests/test_onnx_export_newops.py).
  Types without an onnxruntime kernel are refused by `dmljax.onnx._rewrite.check_marker`.
* ``top_k`` -> ``TopK`` (``sorted=1``): onnxruntime's order is dmljax's (ties by the lower
  index, ``-0.0`` equal to ``+0.0``, NaN above every number). The values and the indices
  are marked apart, so each becomes one ``TopK`` node's output.
* ``argmax``/``argmin`` -> ``TopK`` with ``k=1``, not ``ArgMax``/``ArgMin``: onnxruntime's
  ArgMax skips a NaN after the first element; TopK ranks NaN as dmljax does. The reduced
  axes are moved last and flattened (``Transpose``, ``Reshape``); the last index on ties is
  the first of the reversed axis (``Slice`` with step -1).
* ``one_hot`` -> ``Equal`` of the normalised indices and a constant iota, then ``Where``
  (ONNX's OneHot has few onnxruntime kernels: int64 indices, float outputs).

Types onnxruntime's TopK/Where lack run in a wider type that holds every value and
keeps the order exactly (``_CARRIER``), with a ``Cast`` on either side; uint64 runs as
INT64 keys with the top bit flipped (``BitwiseXor``, opset 18; refused below).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx_ir as ir
from jax2onnx.plugins._ir_shapes import _ensure_value_metadata, _stamp_type_and_shape

from dmljax.onnx._emit import INT64_MIN, Emitter
from dmljax.onnx._indexing import _CARRIER, _cast

__all__ = ["lower_arg_reduce", "lower_cumulative_sum", "lower_one_hot", "lower_top_k_indices", "lower_top_k_values"]

_I64, _U64, _BOOL = np.dtype(np.int64), np.dtype(np.uint64), np.dtype(bool)
# onnxruntime's TopK has no uint16/uint32 kernels; bool has no order kernel either.
_ORDER_CARRIER: dict[np.dtype, np.dtype] = {
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.uint32): np.dtype(np.int64),
    np.dtype(bool): np.dtype(np.uint8),
    **{k: v for k, v in _CARRIER.items() if k.itemsize < 8 and k.kind in "fV"},  # bfloat16 -> float32
}


def lower_cumulative_sum(ctx: Any, eqn: Any) -> None:
    """dmljax_cumulative_sum -> CumSum."""
    em, (x_var,), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    p = eqn.params
    axis = em.i64(p["axis"], "axis")
    value = em.op(
        "CumSum",
        em.input(x_var, "x"),
        axis,
        dtype=out.aval.dtype,
        shape=tuple(out.aval.shape),
        exclusive=int(p["exclusive"]),
        reverse=int(p["reverse"]),
    )
    em.output(out, value)


def _flip_top_bit(em: Emitter, x: ir.Value, shape: tuple) -> ir.Value:
    """uint64 with its top bit flipped (BitwiseXor, opset 18): ``u - 2^63`` modulo ``2^64``."""
    return em.op("BitwiseXor", x, em.const(np.uint64(1 << 63), "top_bit", _U64), dtype=_U64, shape=shape)


def _top_k(em: Emitter, x: ir.Value, dtype: np.dtype, shape: tuple, k: int, axis: int, largest: bool):
    """One TopK node (values in ``x``'s carrier type, INT64 indices).

    uint64, which no wider type holds, is ordered as INT64 keys: the top bit flipped, then a
    wrapping Cast (``u - 2^63``, the same order), and mapped back the same way after.
    """
    carrier = _ORDER_CARRIER.get(dtype, dtype)
    if dtype == _U64:
        x, carrier = _flip_top_bit(em, x, shape), _I64
    if carrier != dtype:
        x = _cast(em, x, carrier, shape)
    out_shape = shape[:axis] + (k,) + shape[axis + 1 :]
    values, indices = em.ctx.builder.TopK(
        x,
        em.i64([k], "k"),
        _outputs=[em.ctx.fresh_name("top_k_values"), em.ctx.fresh_name("top_k_indices")],
        axis=axis,
        largest=int(largest),
        sorted=1,
    )
    for value, kind in ((values, carrier), (indices, _I64)):
        value.type = ir.TensorType(ir.DataType.from_numpy(np.dtype(kind)))
        _stamp_type_and_shape(value, out_shape)
        _ensure_value_metadata(em.ctx, value)
    if carrier != dtype:
        values = _cast(em, values, dtype, out_shape)
    if dtype == _U64:
        values = _flip_top_bit(em, values, out_shape)
    return values, indices


def _top_k_eqn(ctx: Any, eqn: Any, pick: int) -> None:
    em, (x_var,), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    dtype, shape, p = np.dtype(x_var.aval.dtype), tuple(x_var.aval.shape), eqn.params
    values, indices = _top_k(em, em.input(x_var, "x"), dtype, shape, p["k"], p["axis"], p["largest"])
    result = values if pick == 0 else _cast(em, indices, np.dtype(out.aval.dtype), tuple(out.aval.shape))
    em.output(out, result)


def lower_top_k_values(ctx: Any, eqn: Any) -> None:
    """dmljax_top_k_values -> TopK's values."""
    _top_k_eqn(ctx, eqn, 0)


def lower_top_k_indices(ctx: Any, eqn: Any) -> None:
    """dmljax_top_k_indices -> TopK's indices, as int32."""
    _top_k_eqn(ctx, eqn, 1)


def lower_arg_reduce(ctx: Any, eqn: Any) -> None:
    """dmljax_arg_reduce -> Transpose, Reshape, (reversing Slice,) TopK with k=1, Reshape."""
    em, (x_var,), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    dtype, shape, p = np.dtype(x_var.aval.dtype), tuple(x_var.aval.shape), eqn.params
    axes = p["axes"]
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    size = math.prod(shape[a] for a in axes)
    flat_shape = tuple(shape[d] for d in kept) + (size,)
    x = em.input(x_var, "x")
    order = kept + axes
    if order != tuple(range(len(shape))):
        x = em.op("Transpose", x, dtype=dtype, shape=tuple(shape[d] for d in order), perm=list(order))
    x = em.op("Reshape", x, em.i64(flat_shape, "flat"), dtype=dtype, shape=flat_shape)
    last = len(flat_shape) - 1
    if p["last"]:
        bounds = em.i64([-1], "start"), em.i64([INT64_MIN], "end"), em.i64([last], "axis"), em.i64([-1], "step")
        x = em.op("Slice", x, *bounds, dtype=dtype, shape=flat_shape)
    _, index = _top_k(em, x, dtype, flat_shape, 1, last, p["largest"])
    if p["last"]:
        index = em.op("Sub", em.i64(size - 1, "last"), index, dtype=_I64, shape=flat_shape[:-1] + (1,))
    out_shape = tuple(out.aval.shape)
    index = em.op("Reshape", index, em.i64(out_shape, "out_shape"), dtype=_I64, shape=out_shape)
    em.output(out, _cast(em, index, np.dtype(out.aval.dtype), out_shape))


def lower_one_hot(ctx: Any, eqn: Any) -> None:
    """dmljax_one_hot -> Equal(normalised indices, iota) and Where(on, off)."""
    em, (index_var, values_var), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    depth, axis = eqn.params["depth"], eqn.params["axis"]
    dtype, shape = np.dtype(out.aval.dtype), tuple(out.aval.shape)
    index_dtype, index_shape = np.dtype(index_var.aval.dtype), tuple(index_var.aval.shape)
    index = em.input(index_var, "indices")
    if index_dtype == np.dtype(np.uint64):  # beyond INT64: cap at depth (still out of range)
        index = em.op("Min", index, em.const(depth, "cap", index_dtype), dtype=index_dtype, shape=index_shape)
    if index_dtype != _I64:
        index = _cast(em, index, _I64, index_shape)
    if index_dtype.kind == "i":
        negative = em.op("Less", index, em.i64(0, "zero"), dtype=_BOOL, shape=index_shape)
        wrapped = em.op("Add", index, em.i64(depth, "depth"), dtype=_I64, shape=index_shape)
        index = em.op("Where", negative, wrapped, index, dtype=_I64, shape=index_shape)
    expanded = index_shape[:axis] + (1,) + index_shape[axis:]
    index = em.op("Unsqueeze", index, em.i64([axis], "axis"), dtype=_I64, shape=expanded)
    iota = np.arange(depth, dtype=np.int64).reshape((depth,) + (1,) * (len(shape) - axis - 1))
    hit = em.op("Equal", index, em.i64(iota, "iota"), dtype=_BOOL, shape=shape)
    carrier = _ORDER_CARRIER.get(dtype, _CARRIER.get(dtype, dtype))
    values = em.input(values_var, "values")
    if carrier != dtype:
        values = _cast(em, values, carrier, (2,))
    on = em.op("Gather", values, em.i64(1, "on"), dtype=carrier, shape=(), axis=0)
    off = em.op("Gather", values, em.i64(0, "off"), dtype=carrier, shape=(), axis=0)
    result = em.op("Where", hit, on, off, dtype=carrier, shape=shape)
    em.output(out, result if carrier == dtype else _cast(em, result, dtype, shape))
