"""Elementwise lax gathers and scatters as dmljax's GatherElements/ScatterElements primitives.

The gradients of `dmljax.gather_elements` and `dmljax.scatter` are JAX's transposes and
JVPs of their implementations: ``lax.gather``/``lax.scatter*`` along one axis with every
other axis a batching dimension, which jax2onnx (0.17) cannot lower ("scatter pattern not
supported"). That pattern is exactly ONNX's GatherElements/ScatterElements, so `rewrite`
binds the export-only primitives (`dmljax.onnx._primitives`) in its place, with lax's
index semantics made explicit first (a negative index is out of range, not counted from
the end): ``CLIP`` clamps to ``[0, s)``, ``FILL_OR_DROP`` sends invalid indices past the
axis (scatter) or selects lax's fill value (gather); ``PROMISE_IN_BOUNDS`` does what XLA
does with an index out of range (a gather clamps, a scatter drops the update).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax.onnx._indexing import REDUCTION_OPSET
from dmljax.onnx._primitives import EXPORT_PRIMITIVES

__all__ = ["elementwise_gather", "elementwise_scatter", "is_elementwise_scatter", "refuse_low_opset"]

# lax scatter primitive -> ScatterElements reduction.
_REDUCTIONS = {
    "scatter": "none",
    "scatter-add": "add",
    "scatter-mul": "mul",
    "scatter-min": "min",
    "scatter-max": "max",
}


def _axis(rank: int, window: tuple, inserted: tuple, to_operand: tuple, batching: tuple, index_batching: tuple) -> Any:
    """The axis of an elementwise pattern (one indexed axis, every other one batched in place), or None."""
    if window or len(inserted) != 1 or tuple(to_operand) != tuple(inserted):
        return None
    others = tuple(d for d in range(rank) if d != inserted[0])
    # a Python int: ONNX attributes take no NumPy integers (jax.vmap's dimension numbers hold them)
    return int(inserted[0]) if tuple(batching) == others and tuple(index_batching) == others else None


def _lax_index(index: Any, size: int, mode: Any, clamp: bool) -> tuple[Any, Any]:
    """Indices for a node that counts negatives from the end, and the validity mask where invalid ones drop.

    ``clamp``: what XLA does with an out-of-range index under ``PROMISE_IN_BOUNDS`` (a
    gather clamps, a scatter skips the update), so the model computes what ``jax.jit`` does.
    """
    if mode == lax.GatherScatterMode.CLIP or (mode == lax.GatherScatterMode.PROMISE_IN_BOUNDS and clamp):
        return jnp.clip(index, 0, size - 1), None
    valid = (index < size) if jnp.issubdtype(index.dtype, jnp.unsignedinteger) else (index >= 0) & (index < size)
    return index, valid


def _fill(dtype: np.dtype, fill_value: Any) -> Any:
    """lax.gather's fill value: the one given, else NaN, the lowest signed or highest unsigned value, True."""
    if fill_value is not None:
        return np.asarray(fill_value, dtype)
    if jnp.issubdtype(dtype, jnp.inexact):
        return np.asarray(np.nan, dtype)
    if dtype == np.dtype(bool):
        return np.asarray(True)
    info = jnp.iinfo(dtype)
    return np.asarray(info.min if jnp.issubdtype(dtype, jnp.signedinteger) else info.max, dtype)


def elementwise_gather(invals: list[Any], params: dict[str, Any]) -> Any:
    """A GatherElements for an elementwise ``lax.gather`` (``invals``: operand, indices), or None."""
    operand, indices = invals
    d = params["dimension_numbers"]
    axis = _axis(operand.ndim, d.offset_dims, d.collapsed_slice_dims, d.start_index_map, d.operand_batching_dims,
                 d.start_indices_batching_dims)  # fmt: skip
    if axis is None or indices.ndim != operand.ndim + 1 or any(s != 1 for s in params["slice_sizes"]):
        return None
    index, valid = _lax_index(indices[..., 0], operand.shape[axis], params["mode"], clamp=True)
    safe = index if valid is None else jnp.where(valid, index, jnp.zeros((), index.dtype))
    out = EXPORT_PRIMITIVES["gather_elements"].bind(operand, safe, axis=axis, mode="promise_in_bounds")
    return out if valid is None else jnp.where(valid, out, _fill(np.dtype(operand.dtype), params["fill_value"]))


def _scatter_axis(name: str, operand: Any, params: dict[str, Any]) -> Any:
    """The axis of an elementwise lax scatter that ScatterElements can do (any opset), or None."""
    custom = name == "scatter" and params.get("update_jaxpr") is not None  # lax.scatter_apply's function
    if name not in _REDUCTIONS or custom:
        return None
    d = params["dimension_numbers"]
    return _axis(operand.ndim, d.update_window_dims, d.inserted_window_dims, d.scatter_dims_to_operand_dims,
                 d.operand_batching_dims, d.scatter_indices_batching_dims)  # fmt: skip


def is_elementwise_scatter(name: str, invals: list[Any], params: dict[str, Any]) -> bool:
    """Whether a lax scatter (``invals``: operand, indices, updates) is ScatterElements' pattern."""
    operand, indices = invals[:2]
    return _scatter_axis(name, operand, params) is not None and indices.ndim == operand.ndim + 1


def elementwise_scatter(name: str, invals: list[Any], params: dict[str, Any], opset: int) -> Any:
    """A ScatterElements for an elementwise lax scatter (``invals``: operand, indices, updates), or None.

    None too where ``opset`` lacks the reduction: the scatter may be dead code (an
    implementation a marker replaced); `refuse_low_opset` names it if it is not.
    """
    operand, indices, updates = invals
    if not is_elementwise_scatter(name, invals, params) or opset < REDUCTION_OPSET[_REDUCTIONS[name]]:
        return None
    axis = _scatter_axis(name, operand, params)
    return _scatter(operand, indices, updates, axis, params, _REDUCTIONS[name])


def refuse_low_opset(eqns: Iterable[Any], opset: int) -> None:
    """Refuse, naming the opset, a live elementwise lax scatter whose reduction ``opset`` lacks."""
    for eqn in eqns:
        name = eqn.primitive.name
        if name not in _REDUCTIONS or _scatter_axis(name, eqn.invars[0].aval, eqn.params) is None:
            continue  # every one that remains was left for the opset (`elementwise_scatter`)
        reduction = _REDUCTIONS[name]
        since = REDUCTION_OPSET[reduction]
        rule = f"be >= {since} for a lax {name} along one axis (ScatterElements' {reduction!r}; gradients use it)"
        raise fail("dmljax.onnx.export", "opset", rule, opset)


def _scatter(operand: Any, indices: Any, updates: Any, axis: int, params: dict[str, Any], reduction: str) -> Any:
    size = operand.shape[axis]
    index, valid = _lax_index(indices[..., 0], size, params["mode"], clamp=False)
    if valid is None:
        mode = "promise_in_bounds"
    else:  # past the axis: dropped by the fill mode, where a negative index would be counted from the end
        index, mode = jnp.where(valid, index, jnp.asarray(size, index.dtype)), "fill"
    return EXPORT_PRIMITIVES["scatter"].bind(operand, index, updates, axis=axis, mode=mode, reduction=reduction)
