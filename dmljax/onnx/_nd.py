"""ONNX lowerings of gather_nd and scatter_nd: GatherND and ScatterND, index modes included.

Both nodes take INT64 index tuples whose ``j``-th entry lies in ``[-s_j, s_j)`` (opset 13),
so every mode works per column with constant vectors of the axes' sizes:

* ``promise_in_bounds``: the plain node (indices cast to INT64).
* ``clip``: ``Min(Max(indices, -s), s - 1)`` per column, then the node.
* ``fill`` (GatherND): tuples with any invalid index read tuple 0 and are zeroed with ``Where``.
* ``fill`` (ScatterND, "drop"): each indexed axis gets one padding slot (``Concat``); negative
  indices are wrapped and invalid tuples sent to the padding corner; ``ScatterND`` writes
  and a ``Slice`` removes the padding, so dropped updates touch nothing.

ScatterND's ``reduction`` (add/mul from opset 16, max/min from 18) is its attribute.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_ir as ir

from dmljax.onnx._emit import INT64_MAX, Emitter
from dmljax.onnx._indexing import _cast, _zero_where_invalid, scatter_attrs, scatter_carrier, slot_padded

__all__ = ["lower_gather_nd", "lower_scatter_nd"]

_I64, _BOOL = np.dtype(np.int64), np.dtype(bool)


def _sizes(em: Emitter, data: ir.Value, shape: tuple[Any, ...], start: int, count: int) -> ir.Value:
    """An INT64 vector of ``shape[start : start + count]``: a constant, or read from ``data``'s
    ``Shape`` where a size is symbolic (``num_segments=nodes.shape[0]``)."""
    sizes = shape[start : start + count]
    if all(isinstance(n, int | np.integer) for n in sizes):
        return em.i64(list(sizes), "sizes")
    full = em.op("Shape", data, dtype=_I64, shape=(len(shape),))
    bounds = em.i64([start], "start"), em.i64([start + count], "end"), em.i64([0], "axis")
    return em.op("Slice", full, *bounds, dtype=_I64, shape=(count,))


def _tuples(em: Emitter, var: Any, sizes: ir.Value, mode: str) -> tuple[ir.Value, ir.Value | None]:
    """INT64 index tuples ready for the node, and per tuple whether it is valid (fill only).

    ``sizes``: the indexed axes' sizes (`_sizes`)."""
    dtype, shape = np.dtype(var.aval.dtype), tuple(var.aval.shape)
    k = shape[-1]
    index = em.input(var, "indices")
    if dtype == np.dtype(np.uint64):  # beyond INT64: capped (still out of range, as every size is below)
        index = em.op("Min", index, em.const(INT64_MAX, "cap", dtype), dtype=dtype, shape=shape)
    if dtype != _I64:
        index = _cast(em, index, _I64, shape)
    if mode == "clip":
        static = sizes.const_value.numpy() if sizes.const_value is not None else None  # constants where known
        if dtype.kind != "i":
            low = em.i64([0] * k, "low")
        elif static is not None:
            low = em.i64(-static, "low")
        else:
            low = em.op("Neg", sizes, dtype=_I64, shape=(k,))
        index = em.op("Max", index, low, dtype=_I64, shape=shape)
        if static is not None:
            high = em.i64(static - 1, "high")
        else:
            high = em.op("Sub", sizes, em.i64(1, "one"), dtype=_I64, shape=(k,))
        return em.op("Min", index, high, dtype=_I64, shape=shape), None
    if mode != "fill":
        return index, None
    zero = em.i64(0, "zero")
    negative = em.op("Less", index, zero, dtype=_BOOL, shape=shape)
    wrapped = em.op("Add", index, sizes, dtype=_I64, shape=shape)
    index = em.op("Where", negative, wrapped, index, dtype=_I64, shape=shape)
    inside = em.op(
        "And",
        em.op("GreaterOrEqual", index, zero, dtype=_BOOL, shape=shape),
        em.op("Less", index, sizes, dtype=_BOOL, shape=shape),
        dtype=_BOOL,
        shape=shape,
    )
    valid = None
    for j in range(k):  # all over the tuple, one column at a time (no opset-dependent reduce)
        column = em.op("Gather", inside, em.i64(j, "column"), dtype=_BOOL, shape=shape[:-1], axis=len(shape) - 1)
        valid = column if valid is None else em.op("And", valid, column, dtype=_BOOL, shape=shape[:-1])
    return index, valid


def lower_gather_nd(ctx: Any, eqn: Any) -> None:
    """dmljax_gather_nd -> ONNX GatherND (opset 13, ``batch_dims``)."""
    em, (data_var, index_var), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    b, mode, data_shape = eqn.params["batch_dims"], eqn.params["mode"], tuple(data_var.aval.shape)
    k, index_shape = index_var.aval.shape[-1], tuple(index_var.aval.shape)
    data = em.input(data_var, "data")
    index, valid = _tuples(em, index_var, _sizes(em, data, data_shape, b, k), mode)
    if valid is not None:
        mask = em.op(
            "Unsqueeze", valid, em.i64([len(index_shape) - 1], "axes"), dtype=_BOOL, shape=index_shape[:-1] + (1,)
        )
        index = em.op("Where", mask, index, em.i64(0, "zero"), dtype=_I64, shape=index_shape)
    shape = tuple(out.aval.shape)
    result = em.op("GatherND", data, index, dtype=out.aval.dtype, shape=shape, batch_dims=b)
    if valid is not None:
        new_axes = tuple(range(len(index_shape) - 1, len(shape)))
        result = _zero_where_invalid(em, valid, result, new_axes, out.aval)
    em.output(out, result)


def lower_scatter_nd(ctx: Any, eqn: Any) -> None:
    """dmljax_scatter_nd -> ONNX ScatterND (opset 13; ``reduction`` from 16/18)."""
    em, (input_var, index_var, updates_var), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    shape, dtype, mode = tuple(out.aval.shape), np.dtype(out.aval.dtype), eqn.params["mode"]
    k, index_shape = index_var.aval.shape[-1], tuple(index_var.aval.shape)
    reduction = eqn.params["reduction"]
    data, updates = em.input(input_var, "input"), em.input(updates_var, "updates")
    carrier = scatter_carrier(dtype, reduction)  # the reduction kernels onnxruntime lacks
    attrs = scatter_attrs(carrier, reduction)
    if carrier != dtype:
        data = _cast(em, data, carrier, shape)
        updates = _cast(em, updates, carrier, tuple(updates_var.aval.shape))
    sizes = _sizes(em, data, shape, 0, k)
    index, valid = _tuples(em, index_var, sizes, mode)
    if valid is None:
        result = em.op("ScatterND", data, index, updates, dtype=carrier, shape=shape, **attrs)
        em.output(out, result if carrier == dtype else _cast(em, result, dtype, shape))
        return
    mask = em.op("Unsqueeze", valid, em.i64([len(index_shape) - 1], "axes"), dtype=_BOOL, shape=index_shape[:-1] + (1,))
    index = em.op("Where", mask, index, sizes, dtype=_I64, shape=index_shape)  # the padding corner
    padded_shape = tuple(n + 1 for n in shape[:k]) + shape[k:]
    padded = slot_padded(em, data, shape, tuple(range(k)), carrier)
    written = em.op("ScatterND", padded, index, updates, dtype=carrier, shape=padded_shape, **attrs)
    starts, axes = em.i64([0] * k, "starts"), em.i64(list(range(k)), "axes")
    result = em.op("Slice", written, starts, sizes, axes, dtype=carrier, shape=shape)
    em.output(out, result if carrier == dtype else _cast(em, result, dtype, shape))
