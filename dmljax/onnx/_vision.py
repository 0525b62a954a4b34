"""ONNX lowerings of the vision operators: `dmljax.resample` as one Resize node.

The marker (`dmljax._ops.vision.resample`) is set only where Resize expresses the call:
offsets (0.5, -0.5) on every axis (``half_pixel``) or (0, 0) (``asymmetric``), sizes
``floor(size * scale)``; RESAMPLE1's nearest rule is ``round_prefer_ceil``, RESAMPLE2's
DECREASING ``floor`` and INCREASING ``ceil``. 16-bit floats are resized in float32 (Cast,
Resize, Cast), as `dmljax.resample` computes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dmljax.onnx._emit import Emitter

__all__ = ["lower_resample", "resample_shape"]

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
