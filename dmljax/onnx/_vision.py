"""ONNX lowerings of the vision operators: `dmljax.resample` as one Resize node,
`dmljax.max_pool_with_indices` as one MaxPool node (values and ``Indices``,
``storage_order=0``; 16-bit floats pooled in float32, exact), `dmljax.fold` as one Col2Im
node (onnxruntime's Col2Im adds in the same loop order: window offsets outer, blocks inner).
onnxruntime's MaxPool skips NaN where dmljax's (and torch's) returns the first NaN of a
window: a window holding NaN differs in the exported model.

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


def _max_pool(ctx: Any, eqn: Any, pick: int) -> None:
    em, out, params = Emitter(ctx), eqn.outvars[0], eqn.params
    x_var = eqn.invars[0]
    dtype, in_shape, shape = np.dtype(x_var.aval.dtype), tuple(x_var.aval.shape), tuple(out.aval.shape)
    x = em.input(x_var, "x")
    carrier = _F32 if dtype.kind == "f" and dtype.itemsize < 4 else dtype
    if carrier != dtype:  # exact: float32 holds every 16-bit float and keeps their order
        x = em.op("Cast", x, dtype=carrier, shape=in_shape, to=int(_onnx_type(carrier)))
    values, indices = em.ctx.builder.MaxPool(
        x,
        _outputs=[em.ctx.fresh_name("max_pool_values"), em.ctx.fresh_name("max_pool_indices")],
        kernel_shape=list(params["window"]),
        storage_order=0,
        **_window_attrs(params),
    )
    for value, kind in ((values, carrier), (indices, np.dtype(np.int64))):
        value.type = ir.TensorType(ir.DataType.from_numpy(kind))
        _stamp_type_and_shape(value, shape)
        _ensure_value_metadata(em.ctx, value)
    if pick == 0:
        result = (
            values if carrier == dtype else em.op("Cast", values, dtype=dtype, shape=shape, to=int(_onnx_type(dtype)))
        )
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
