"""Resample's static arguments and its per-axis plan: indices and weights, fixed at trace time.

DirectML's pages (DML_RESAMPLE1/2/3, DML_RESAMPLE_GRAD/GRAD1) map an input coordinate to
an output coordinate, ``output = (input + input_pixel_offset) * scale + output_pixel_offset``;
each output element reads the input at the inverse,
``c = (o - output_pixel_offset) / scale - input_pixel_offset``, computed here in float32,
as DirectML's ``FLOAT`` members and onnxruntime's Resize kernels compute it. Per axis:

* ``"nearest"``: index ``floor(c + 0.5)`` (RESAMPLE1, halves up), ``floor(c)``
  (RESAMPLE2 ``rounding_direction="decreasing"``) or ``ceil(c)`` (``"increasing"``),
  clamped to ``[0, size - 1]``;
* ``"linear"``: ``c`` clamped to ``[0, size - 1]``, read at ``i0 = floor(c)`` with weight
  ``1 - f`` and ``i1 = min(i0 + 1, size - 1)`` with weight ``f = c - i0``; with
  ``antialiased`` (RESAMPLE3, ONNX ``antialias``) an axis with a scale below 1 reads a
  triangle ``1 / scale`` input elements wide instead (`_antialiased`).

An axis whose plan is the identity (same size, every index its own position, no weight on
a neighbour) is not resized: it costs nothing and never multiplies by 0 (``0 * inf``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from dmljax._core.errors import fail

__all__ = ["MODES", "ROUNDING_DIRECTIONS", "AxisPlan", "check_resample_args", "output_shape", "plan_axes"]

MODES = ("nearest", "linear")  # DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR, _LINEAR
ROUNDING_DIRECTIONS = (None, "increasing", "decreasing")  # None: RESAMPLE1's floor(c + 0.5)
_F32 = np.float32


@dataclasses.dataclass(frozen=True)
class AxisPlan:
    """How one resized axis reads its input.

    Attributes:
      axis: the axis.
      indices: ``(taps, out)`` int64 input positions (1 tap for nearest, 2 for linear).
      weights: ``(taps, out)`` float32 weights, or None for nearest.
    """

    axis: int
    indices: np.ndarray
    weights: np.ndarray | None


def _floats(op: str, param: str, values: Any, rank: int, context: str) -> tuple[float, ...]:
    """A static float or one per dimension, each finite and exact in float32 after rounding."""
    if isinstance(values, jax.core.Tracer):
        raise fail(op, param, "be static floats (not traced)", values, context)
    if isinstance(values, int | float | np.floating | np.integer) and not isinstance(values, bool):
        values = (values,) * rank
    try:
        items = tuple(values)
    except TypeError:
        raise fail(op, param, "be a float or a sequence of floats", values, context) from None
    if len(items) != rank:
        raise fail(op, param, f"have one entry per dimension ({rank})", items, context)
    out = []
    for i, item in enumerate(items):
        if isinstance(item, bool) or isinstance(item, jax.core.Tracer) or not isinstance(item, int | float | np.number):
            raise fail(op, f"{param}[{i}]", "be a static Python float", item, context)
        if not math.isfinite(float(_F32(item))):
            raise fail(op, f"{param}[{i}]", "be finite in float32", item, context)
        out.append(float(_F32(item)))
    return tuple(out)


def check_resample_args(
    op: str,
    shape: tuple[int, ...],
    scales: Any,
    mode: Any,
    input_pixel_offsets: Any,
    output_pixel_offsets: Any,
    rounding_direction: Any,
    context: str,
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """Validate Resample's static arguments; return ``(scales, input offsets, output offsets)`` as float32 values.

    Raises:
      ValidationError: ``mode`` or ``rounding_direction`` is unknown, a tuple has the wrong
        length, a value is traced or not finite, or a scale is not > 0 in float32.
    """
    if mode not in MODES:
        raise fail(op, "mode", f"be one of {', '.join(map(repr, MODES))}", mode, context)
    if rounding_direction not in ROUNDING_DIRECTIONS:
        raise fail(op, "rounding_direction", "be None, 'increasing' or 'decreasing'", rounding_direction, context)
    rank = len(shape)
    scales = _floats(op, "scales", scales, rank, context)
    for i, s in enumerate(scales):
        if not s > 0:
            raise fail(op, f"scales[{i}]", "be > 0 (in float32)", s, context)
    offsets_in = _floats(op, "input_pixel_offsets", input_pixel_offsets, rank, context)
    offsets_out = _floats(op, "output_pixel_offsets", output_pixel_offsets, rank, context)
    return scales, offsets_in, offsets_out


def output_shape(op: str, shape: tuple[int, ...], scales: Sequence[float], context: str) -> tuple[int, ...]:
    """``floor(size * scale)`` per axis, the product in float32 (onnxruntime's Resize); each >= 1.

    Raises:
      ValidationError: an output size is 0.
    """
    sizes = tuple(int(np.floor(_F32(n) * _F32(s))) for n, s in zip(shape, scales, strict=True))
    for i, size in enumerate(sizes):
        if size < 1:
            raise fail(op, f"scales[{i}]", f"give an output size >= 1 (floor({shape[i]} * scale))", scales[i], context)
    return sizes


def coordinates(out_size: int, scale: float, offset_in: float, offset_out: float) -> np.ndarray:
    """``c = (o - output_pixel_offset) / scale - input_pixel_offset`` for every output position, float32."""
    o = np.arange(out_size, dtype=np.float64).astype(_F32)
    with np.errstate(over="ignore"):
        return ((o - _F32(offset_out)) / _F32(scale) - _F32(offset_in)).astype(_F32)


def _antialiased(c: np.ndarray, size: int, scale: float) -> AxisPlan:
    """ONNX Resize's ``antialias`` for linear downsampling: a triangle ``1 / scale`` wide.

    As ONNX's reference (`_linear_coeffs_antialias`): taps ``k`` in ``[start, start + n)``,
    ``start = floor(-1 / scale) + 1``, ``n = 2 - 2 start``, read at ``base + k`` (``base`` the
    element left of ``c``, the one before an integer ``c``; clamped to the input: edge
    padding) with weight ``clip(1 - |k - ratio| * scale, 0, 1)`` normalised by their sum,
    ``ratio = c - base`` in ``(0, 1]``. Float32 throughout.
    """
    s = _F32(scale)
    start = int(np.floor(_F32(-1) / s)) + 1
    taps = np.arange(start, 2 - start, dtype=np.int64)
    floor = np.floor(c)
    base = np.where(floor == c, floor - 1, floor)
    ratio = (c - base).astype(_F32)
    args = (taps[:, None].astype(_F32) - ratio[None, :]) * s
    weights = np.clip(_F32(1) - np.abs(args), _F32(0), _F32(1)).astype(_F32)
    weights = (weights / weights.sum(axis=0, dtype=_F32)).astype(_F32)
    index = np.clip(base.astype(np.int64)[None, :] + taps[:, None], 0, size - 1)
    return AxisPlan(-1, index, weights)


def _axis(
    axis: int,
    size: int,
    out_size: int,
    mode: str,
    rounding: str | None,
    scale: float,
    offsets: tuple[float, float],
    antialiased: bool = False,
) -> AxisPlan | None:
    c = coordinates(out_size, scale, *offsets)
    if mode == "nearest":
        rounded = {None: np.floor(c + _F32(0.5)), "decreasing": np.floor(c), "increasing": np.ceil(c)}[rounding]
        index = np.clip(rounded.astype(np.float64), 0, size - 1).astype(np.int64)
        if out_size == size and np.array_equal(index, np.arange(size)):
            return None
        return AxisPlan(axis, index[None], None)
    if antialiased and scale < 1:
        return dataclasses.replace(_antialiased(c, size, scale), axis=axis)
    c = np.clip(c, _F32(0), _F32(size - 1))
    low = np.floor(c).astype(np.int64)
    high = np.minimum(low + 1, size - 1)
    frac = (c - low.astype(_F32)).astype(_F32)
    if out_size == size and np.array_equal(low, np.arange(size)) and not frac.any():
        return None
    return AxisPlan(axis, np.stack([low, high]), np.stack([(_F32(1) - frac).astype(_F32), frac]))


def plan_axes(
    shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    mode: str,
    rounding: str | None,
    scales: tuple[float, ...],
    offsets_in: tuple[float, ...],
    offsets_out: tuple[float, ...],
    antialiased: bool = False,
) -> tuple[AxisPlan, ...]:
    """Every resized axis' plan, in axis order (identity axes left out)."""
    plans = []
    for axis, (n, m, s, a, b) in enumerate(zip(shape, out_shape, scales, offsets_in, offsets_out, strict=True)):
        plan = _axis(axis, n, m, mode, rounding, s, (a, b), antialiased)
        if plan is not None:
            plans.append(plan)
    return tuple(plans)
