"""ONNX lowerings of gather, gather_elements and scatter, index modes included.

ONNX's Gather, GatherElements and ScatterElements (opset 13+) take int32/int64 indices in
``[-s, s)`` and call anything else an error. dmljax's resolved modes map onto them exactly:

* ``promise_in_bounds``: the plain node (unsigned indices cast to INT64 first).
* ``clip``: ``Clip(indices, -s, s - 1)`` first; ONNX's own negative wrapping then matches
  dmljax (below ``-s`` reads or writes element 0, at or above ``s`` element ``s - 1``).
* ``fill`` (gathers): invalid indices are replaced by 0 and the result is zeroed there with
  ``Where``.
* ``fill`` (scatter, "drop"): the input gets one padding slot along the axis (a ``Concat``),
  negative indices are wrapped and invalid ones sent to the slot, ``ScatterElements``
  writes, and a ``Slice`` removes the slot, so dropped updates touch nothing.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
import onnx_ir as ir

from dmljax._core.errors import fail
from dmljax.onnx._emit import Emitter

__all__ = [
    "REDUCTION_OPSET",
    "lower_gather",
    "lower_gather_elements",
    "lower_scatter",
    "scatter_attrs",
    "scatter_carrier",
    "slot_padded",
]

_BOOL = np.dtype(bool)
_I64 = np.dtype(np.int64)
# Types whose Where (gathers' fill) onnxruntime's CPU provider lacks or mistypes (a float16
# zero initializer becomes FLOAT): the Where runs in a wider type that holds every value
# exactly, with a Cast on either side.
_CARRIER: dict[np.dtype, np.dtype] = {
    np.dtype(np.float16): np.dtype(np.float32),
    np.dtype(jnp.bfloat16): np.dtype(np.float32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.uint32): np.dtype(np.int64),
    np.dtype(np.uint64): np.dtype(np.int64),  # a wrapping Cast there and back is exact (Where only moves values)
}
_HALF = (np.dtype(np.float16), np.dtype(jnp.bfloat16))
# bool max/min, which onnxruntime's CPU scatters lack, as the add/mul it has (its bool sum and
# product saturate: or, and).
_BOOL_REDUCTION = {"max": "add", "min": "mul"}


def scatter_carrier(dtype: np.dtype, reduction: str) -> np.dtype:
    """The type a scatter node runs in: float32 for bfloat16 (onnxruntime's CPU provider has
    few bfloat16 kernels) and for float16 max/min (it has no float16 max/min scatter); the
    data's own type otherwise. Exact: a scatter, a max and a min only select values.

    float16/bfloat16 add/mul never reach a node (`dmljax.onnx._sequential`): a float32 sum
    rounds once where the loop rounds after every update.
    """
    if dtype in _HALF and reduction in ("add", "mul"):
        rule = "be computed in float16/bfloat16 after every update (ONNX export: see dmljax.onnx._sequential)"
        raise fail("dmljax.onnx.export", "reduction", rule, reduction)
    if dtype == np.dtype(jnp.bfloat16) or (dtype in _HALF and reduction in ("max", "min")):
        return np.dtype(np.float32)
    return dtype


def scatter_attrs(dtype: np.dtype, reduction: str) -> dict[str, Any]:
    """A scatter node's ``reduction`` attribute (none when "none"), bool max/min as add/mul."""
    if dtype == _BOOL:
        reduction = _BOOL_REDUCTION.get(reduction, reduction)
    return {"reduction": reduction} if reduction != "none" else {}


def slot_padded(
    em: Emitter, data: ir.Value, shape: tuple[int, ...], axes: tuple[int, ...], dtype: np.dtype
) -> ir.Value:
    """``data`` with one more slot at the end of each of ``axes`` (a Concat of its own first
    slice: Pad lacks int16/uint16 kernels in onnxruntime); the slot's values are never read."""
    current = list(shape)
    for axis in axes:
        slot_shape = tuple(current[:axis]) + (1,) + tuple(current[axis + 1 :])
        if current[axis] == 0:
            slot = em.const(np.zeros(slot_shape, dtype), "slot", dtype)
        else:
            starts, ends, at = em.i64([0], "starts"), em.i64([1], "ends"), em.i64([axis], "axes")
            slot = em.op("Slice", data, starts, ends, at, dtype=dtype, shape=slot_shape)
        current[axis] += 1
        data = em.op("Concat", data, slot, dtype=dtype, shape=tuple(current), axis=axis)
    return data


def _work_dtype(dtype: np.dtype) -> np.dtype:
    """The index type the ONNX nodes get: int32 stays, everything else becomes INT64."""
    return dtype if dtype == np.dtype(np.int32) else _I64


def _as_signed(em: Emitter, index: ir.Value, dtype: np.dtype, shape: tuple[int, ...], size: int) -> ir.Value:
    """Indices as int32/INT64; uint64 values beyond INT64 are first capped at ``size`` (still invalid)."""
    work = _work_dtype(dtype)
    if dtype == work:
        return index
    if dtype == np.dtype(np.uint64):
        index = em.op("Min", index, em.const(size, "axis_size", dtype), dtype=dtype, shape=shape)
    return em.op("Cast", index, dtype=work, shape=shape, to=int(ir.DataType.from_numpy(work)))


def _valid(em: Emitter, index: ir.Value, work: np.dtype, shape: tuple[int, ...], low: int, size: int) -> ir.Value:
    """``low <= index < size`` as a BOOL tensor."""
    above = em.op("GreaterOrEqual", index, em.const(low, "low", work), dtype=_BOOL, shape=shape)
    below = em.op("Less", index, em.const(size, "size", work), dtype=_BOOL, shape=shape)
    return em.op("And", above, below, dtype=_BOOL, shape=shape)


def _indices(em: Emitter, eqn: Any, size: int) -> tuple[ir.Value, ir.Value | None]:
    """Indices safe for the node, and the validity mask when the mode is fill."""
    var = eqn.invars[1]
    dtype, shape = np.dtype(var.aval.dtype), tuple(var.aval.shape)
    work = _work_dtype(dtype)
    index = _as_signed(em, em.input(var, "indices"), dtype, shape, size)
    mode, low = eqn.params["mode"], (-size if dtype.kind == "i" else 0)
    if mode == "clip":
        bounds = em.const(-size, "min", work), em.const(size - 1, "max", work)
        return em.op("Clip", index, *bounds, dtype=work, shape=shape), None
    if mode == "fill":
        valid = _valid(em, index, work, shape, low, size)
        return em.op("Where", valid, index, em.const(0, "zero", work), dtype=work, shape=shape), valid
    return index, None


def _cast(em: Emitter, value: ir.Value, dtype: np.dtype, shape: tuple[int, ...]) -> ir.Value:
    return em.op("Cast", value, dtype=dtype, shape=shape, to=int(ir.DataType.from_numpy(dtype)))


def _zero_where_invalid(
    em: Emitter, valid: ir.Value, value: ir.Value, new_axes: tuple[int, ...], aval: Any
) -> ir.Value:
    """``value`` with zeros (False) where ``valid``, unsqueezed at ``new_axes`` to broadcast, is False."""
    dtype, shape = np.dtype(aval.dtype), tuple(aval.shape)
    if new_axes:
        mask_shape = tuple(1 if d in new_axes else n for d, n in enumerate(shape))
        valid = em.op("Unsqueeze", valid, em.i64(new_axes, "axes"), dtype=_BOOL, shape=mask_shape)
    if dtype == _BOOL:  # onnxruntime's CPU Where has no bool kernel
        return em.op("And", valid, value, dtype=dtype, shape=shape)
    carrier = _CARRIER.get(dtype, dtype)
    if carrier != dtype:
        value = _cast(em, value, carrier, shape)
    zero = em.const(np.zeros((), carrier), "zero", carrier)
    result = em.op("Where", valid, value, zero, dtype=carrier, shape=shape)
    return result if carrier == dtype else _cast(em, result, dtype, shape)


def lower_gather(ctx: Any, eqn: Any) -> None:
    """dmljax_gather -> ONNX Gather (opset 13)."""
    em, (data_var, index_var), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    axis, data_shape = eqn.params["axis"], tuple(data_var.aval.shape)
    index, valid = _indices(em, eqn, data_shape[axis])
    result = em.op(
        "Gather", em.input(data_var, "data"), index, dtype=out.aval.dtype, shape=tuple(out.aval.shape), axis=axis
    )
    if valid is not None:
        q = len(index_var.aval.shape)
        new_axes = tuple(range(axis)) + tuple(range(axis + q, len(data_shape) - 1 + q))
        result = _zero_where_invalid(em, valid, result, new_axes, out.aval)
    em.output(out, result)


def lower_gather_elements(ctx: Any, eqn: Any) -> None:
    """dmljax_gather_elements -> ONNX GatherElements (opset 13)."""
    em, data_var, out = Emitter(ctx), eqn.invars[0], eqn.outvars[0]
    axis = eqn.params["axis"]
    index, valid = _indices(em, eqn, data_var.aval.shape[axis])
    shape = tuple(out.aval.shape)
    result = em.op("GatherElements", em.input(data_var, "data"), index, dtype=out.aval.dtype, shape=shape, axis=axis)
    if valid is not None:
        result = _zero_where_invalid(em, valid, result, (), out.aval)
    em.output(out, result)


# The opset from which ScatterElements has each reduction (https://onnx.ai/onnx/operators/onnx__ScatterElements.html).
REDUCTION_OPSET = {"none": 13, "add": 16, "mul": 16, "max": 18, "min": 18}


def lower_scatter(ctx: Any, eqn: Any) -> None:
    """dmljax_scatter -> ONNX ScatterElements (opset 13; with ``reduction``, 16 for add/mul, 18 for max/min)."""
    em, (input_var, _, updates_var), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    axis, shape, dtype = eqn.params["axis"], tuple(out.aval.shape), np.dtype(out.aval.dtype)
    reduction = eqn.params.get("reduction", "none")
    data, updates = em.input(input_var, "input"), em.input(updates_var, "updates")
    carrier = scatter_carrier(dtype, reduction)
    if carrier != dtype:
        data = _cast(em, data, carrier, shape)
        updates = _cast(em, updates, carrier, tuple(updates_var.aval.shape))
    attrs = {"axis": axis} | scatter_attrs(carrier, reduction)
    if eqn.params["mode"] != "fill":
        index, _ = _indices(em, eqn, shape[axis])
        result = em.op("ScatterElements", data, index, updates, dtype=carrier, shape=shape, **attrs)
    else:
        result = _scatter_dropping(em, eqn, data, updates, carrier, attrs)
    em.output(out, result if carrier == dtype else _cast(em, result, dtype, shape))


def _scatter_dropping(
    em: Emitter, eqn: Any, data: ir.Value, updates: ir.Value, dtype: np.dtype, attrs: dict[str, Any]
) -> ir.Value:
    """ScatterElements that drops invalid indices: into one slot past the axis, sliced off after."""
    index_var, out = eqn.invars[1], eqn.outvars[0]
    axis, shape = eqn.params["axis"], tuple(out.aval.shape)
    size, index_shape = shape[axis], tuple(index_var.aval.shape)
    index_dtype = np.dtype(index_var.aval.dtype)
    work = _work_dtype(index_dtype)
    index = _as_signed(em, em.input(index_var, "indices"), index_dtype, index_shape, size)
    if index_dtype.kind == "i":
        negative = em.op("Less", index, em.const(0, "zero", work), dtype=_BOOL, shape=index_shape)
        wrapped = em.op("Add", index, em.const(size, "size", work), dtype=work, shape=index_shape)
        index = em.op("Where", negative, wrapped, index, dtype=work, shape=index_shape)
    valid = _valid(em, index, work, index_shape, 0, size)
    index = em.op("Where", valid, index, em.const(size, "slot", work), dtype=work, shape=index_shape)
    padded_shape = shape[:axis] + (size + 1,) + shape[axis + 1 :]
    padded = slot_padded(em, data, shape, (axis,), dtype)
    written = em.op("ScatterElements", padded, index, updates, dtype=dtype, shape=padded_shape, **attrs)
    starts, ends, axes = em.i64([0], "starts"), em.i64([size], "ends"), em.i64([axis], "axes")
    return em.op("Slice", written, starts, ends, axes, dtype=dtype, shape=shape)
