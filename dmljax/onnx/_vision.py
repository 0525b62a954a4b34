"""ONNX lowerings of the vision operators: `dmljax.resample` as one Resize node,
`dmljax.max_pool_with_indices` as one MaxPool node (values and ``Indices``,
``storage_order=0``; 16-bit floats pooled in float32, exact), `dmljax.fold` as one Col2Im
node (onnxruntime's Col2Im adds in the same loop order: window offsets outer, blocks inner).
onnxruntime's MaxPool skips a NaN after a window's first element where dmljax's (and
torch's) returns the first NaN of the window: the export adds a float64 score, max-pooled,
that finds each window's first NaN, and Where picks its position; the values are the input
elements at the chosen positions (Gather), bit for bit.

The marker (`dmljax._ops.vision.resample`) is set only where Resize expresses the call:
offsets (0.5, -0.5) on every axis (``half_pixel``) or (0, 0) (``asymmetric``), sizes
``floor(size * scale)``; RESAMPLE1's nearest rule is ``round_prefer_ceil``, RESAMPLE2's
DECREASING ``floor`` and INCREASING ``ceil``. 16-bit floats are resized in float32 (Cast,
Resize, Cast), as `dmljax.resample` computes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_ir as ir
from jax2onnx.plugins._ir_shapes import _ensure_value_metadata, _stamp_type_and_shape

from dmljax.onnx._emit import Emitter

__all__ = ["lower_fold", "lower_max_pool_indices", "lower_max_pool_values", "lower_resample", "resample_shape"]

_F32 = np.dtype(np.float32)


def resample_shape(shape: tuple[int, ...], scales: tuple[float, ...]) -> tuple[int, ...]:
    """Resize's output sizes: ``floor(size * scale)``, the product in float32."""
    return tuple(int(np.floor(np.float32(n) * np.float32(s))) for n, s in zip(shape, scales, strict=True))


def lower_resample(ctx: Any, eqn: Any) -> None:
    """dmljax_resample -> Resize(x, roi=[], scales) with the marker's modes."""
    em, out = Emitter(ctx), eqn.outvars[0]
    params = eqn.params
    dtype, shape = np.dtype(out.aval.dtype), tuple(out.aval.shape)
    in_shape = tuple(eqn.invars[0].aval.shape)
    x = em.input(eqn.invars[0], "x")
    carrier = _F32 if dtype.kind == "f" and dtype.itemsize < 4 else dtype
    if carrier != dtype:
        x = em.op("Cast", x, dtype=carrier, shape=in_shape, to=int(_onnx_type(carrier)))
    roi = em.const(np.zeros(0, np.float32), "roi")
    scales = em.const(np.asarray(params["scales"], np.float32), "scales")
    attrs = {"mode": params["mode"], "coordinate_transformation_mode": params["coordinate_mode"]}
    if params["mode"] == "nearest":
        attrs["nearest_mode"] = params["nearest_mode"]
    y = em.op("Resize", x, roi, scales, dtype=carrier, shape=shape, **attrs)
    if carrier != dtype:
        y = em.op("Cast", y, dtype=dtype, shape=shape, to=int(_onnx_type(dtype)))
    em.output(out, y)


def _onnx_type(dtype: np.dtype) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(dtype)


def _window_attrs(params: dict[str, Any]) -> dict[str, Any]:
    return dict(
        strides=list(params["strides"]),
        pads=list(params["start_padding"]) + list(params["end_padding"]),
        dilations=list(params["dilations"]),
    )


def _max_pool_node(
    em: Emitter, x: ir.Value, dtype: np.dtype, shape: tuple[int, ...], params: Any
) -> tuple[ir.Value, ir.Value]:
    """One MaxPool node: its values and Indices (flat positions into the whole input)."""
    values, indices = em.ctx.builder.MaxPool(
        x,
        _outputs=[em.ctx.fresh_name("max_pool_values"), em.ctx.fresh_name("max_pool_indices")],
        kernel_shape=list(params["window"]),
        storage_order=0,
        **_window_attrs(params),
    )
    for value, kind in ((values, dtype), (indices, np.dtype(np.int64))):
        value.type = ir.TensorType(ir.DataType.from_numpy(kind))
        _stamp_type_and_shape(value, shape)
        _ensure_value_metadata(em.ctx, value)
    return values, indices


def _f64_scalar(em: Emitter, value: int, hint: str) -> ir.Value:
    """A float64 scalar, cast from an INT64 initializer (the builder narrows float64 initializers)."""
    return em.op("Cast", em.i64(value, hint), dtype=np.float64, shape=(), to=int(_onnx_type(np.dtype(np.float64))))


def _first_nans(
    em: Emitter, x: ir.Value, in_shape: tuple[int, ...], shape: tuple[int, ...], params: Any
) -> tuple[ir.Value, ir.Value]:
    """Where a window holds NaN: the position of its first NaN, and a bool mask of those windows.

    A float64 score, ``size - position`` at a NaN and -1 elsewhere, is max-pooled: a window's
    highest score is its first NaN (row-major window order is increasing flat position), and
    a positive maximum marks a window with NaN. Exact for positions up to 2**53.
    """
    f64, size = np.dtype(np.float64), int(np.prod(in_shape))
    bounds = em.i64(size, "start"), em.i64(0, "limit"), em.i64(-1, "delta")
    positions = em.op("Range", *bounds, dtype=np.int64, shape=(size,))
    descending = em.op("Cast", positions, dtype=f64, shape=(size,), to=int(_onnx_type(f64)))
    descending = em.op("Reshape", descending, em.i64(list(in_shape), "shape"), dtype=f64, shape=in_shape)
    is_nan = em.op("IsNaN", x, dtype=np.bool_, shape=in_shape)
    minus_one, zero = (_f64_scalar(em, value, name) for value, name in ((-1, "not_nan"), (0, "zero")))
    score = em.op("Where", is_nan, descending, minus_one, dtype=f64, shape=in_shape)
    best, nan_indices = _max_pool_node(em, score, f64, shape, params)
    has_nan = em.op("Greater", best, zero, dtype=np.bool_, shape=shape)
    return nan_indices, has_nan


def _max_pool(ctx: Any, eqn: Any, pick: int) -> None:
    em, out, params = Emitter(ctx), eqn.outvars[0], eqn.params
    x_var = eqn.invars[0]
    dtype, in_shape, shape = np.dtype(x_var.aval.dtype), tuple(x_var.aval.shape), tuple(out.aval.shape)
    x = em.input(x_var, "x")
    carrier = _F32 if dtype.kind == "f" and dtype.itemsize < 4 else dtype
    pooled = x
    if carrier != dtype:  # exact: float32 holds every 16-bit float and keeps their order
        pooled = em.op("Cast", x, dtype=carrier, shape=in_shape, to=int(_onnx_type(carrier)))
    _, indices = _max_pool_node(em, pooled, carrier, shape, params)
    if dtype.kind == "f":  # MaxPool skips a NaN after a window's first element: the first NaN wins
        nan_indices, has_nan = _first_nans(em, pooled, in_shape, shape, params)
        indices = em.op("Where", has_nan, nan_indices, indices, dtype=np.int64, shape=shape)
    if pick == 0:  # the input element at the index, bit for bit (a NaN's payload too)
        flat = em.op("Reshape", x, em.i64([-1], "flat"), dtype=dtype, shape=(int(np.prod(in_shape)),))
        result = em.op("Gather", flat, indices, dtype=dtype, shape=shape, axis=0)
    else:
        out_dtype = np.dtype(out.aval.dtype)
        result = em.op("Cast", indices, dtype=out_dtype, shape=shape, to=int(_onnx_type(out_dtype)))
    em.output(out, result)


def lower_max_pool_values(ctx: Any, eqn: Any) -> None:
    """dmljax_max_pool_values -> MaxPool's first output."""
    _max_pool(ctx, eqn, 0)


def lower_max_pool_indices(ctx: Any, eqn: Any) -> None:
    """dmljax_max_pool_indices -> MaxPool's Indices, cast to the unsigned positions."""
    _max_pool(ctx, eqn, 1)


def lower_fold(ctx: Any, eqn: Any) -> None:
    """dmljax_fold -> Col2Im(cols, image_shape, block_shape)."""
    em, out, params = Emitter(ctx), eqn.outvars[0], eqn.params
    cols = em.input(eqn.invars[0], "cols")
    image = em.i64(list(params["spatial"]), "image_shape")
    block = em.i64(list(params["window"]), "block_shape")
    y = em.op(
        "Col2Im",
        cols,
        image,
        block,
        dtype=np.dtype(out.aval.dtype),
        shape=tuple(out.aval.shape),
        **_window_attrs(params),
    )
    em.output(out, y)
