"""DML_RESAMPLE(1,2) and DML_RESAMPLE_GRAD(1): the structs, their support tables, their rules.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_resample1_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_resample_operator_desc
https://learn.microsoft.com/en-us/windows/ai/directml/api/ns-directml-dml_resample2_operator_desc
https://learn.microsoft.com/en-us/windows/ai/directml/api/ns-directml-dml_resample3_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_resample_grad_operator_desc
https://learn.microsoft.com/en-us/windows/ai/directml/api/ns-directml-dml_resample_grad1_operator_desc
Semantics: `dmljax.resample` and `dmljax.resample_grad`. The output sizes are the
OutputTensor's (the pages: scales need not be exactly ``OutputSize / InputSize``; a larger
output reads the clamped edge). DML_RESAMPLE is RESAMPLE1 with offsets (0.5, -0.5);
RESAMPLE2/GRAD1 add ``rounding_direction`` (nearest neighbour: DECREASING floors,
INCREASING ceils; RESAMPLE1's rule is ``floor(c + 0.5)``), RESAMPLE3 ``antialiased``.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any

import jax
import numpy as np

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.errors import fail
from dmljax._descriptors.axis_direction import AxisDirection, direction_member, flag_member
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import SupportRow
from dmljax._descriptors.validate import Check, check_output, check_row, same, tensors_of
from dmljax._ops.vision.resample import ResampleSpec, resample_grad_validated, resample_validated

__all__ = [
    "RESAMPLE1_SUPPORT",
    "RESAMPLE2_SUPPORT",
    "RESAMPLE3_SUPPORT",
    "RESAMPLE_GRAD1_SUPPORT",
    "RESAMPLE_GRAD_SUPPORT",
    "RESAMPLE_SUPPORT",
    "InterpolationMode",
    "Resample1OperatorDesc",
    "Resample2OperatorDesc",
    "Resample3OperatorDesc",
    "ResampleGrad1OperatorDesc",
    "ResampleGradOperatorDesc",
    "ResampleOperatorDesc",
]


class InterpolationMode(enum.IntEnum):
    """DML_INTERPOLATION_MODE: ``NEAREST_NEIGHBOR`` (0) or ``LINEAR`` (1).

    Examples:
      >>> InterpolationMode(1), InterpolationMode.NEAREST_NEIGHBOR.mode
      (InterpolationMode.LINEAR, 'nearest')
    """

    NEAREST_NEIGHBOR = 0
    LINEAR = 1

    @property
    def mode(self) -> str:
        """`dmljax.resample`'s ``mode`` name."""
        return "nearest" if self is InterpolationMode.NEAREST_NEIGHBOR else "linear"

    def __repr__(self) -> str:
        return f"InterpolationMode.{self.name}"


_FLOATS = (DataType.FLOAT32, DataType.FLOAT16)
_BYTES = (*_FLOATS, DataType.INT8, DataType.UINT8)
# The pages' "Tensor support" tables (their Markdown source: github.com/MicrosoftDocs/sdk-api
# for RESAMPLE, RESAMPLE1 and RESAMPLE_GRAD, MicrosoftDocs/windows-ai-docs for RESAMPLE2/3 and
# RESAMPLE_GRAD1). RESAMPLE (2.0) and RESAMPLE1 (2.1): 4 dimensions, 1 to 4 from 5.1, INT8 and
# UINT8 from 6.2. RESAMPLE_GRAD (3.0): 4 dimensions, 1 to 4 from 5.1. RESAMPLE2 and
# RESAMPLE_GRAD1 (5.1): 1 to 4. RESAMPLE3 (6.4): 1 to 4 with INT8 and UINT8. FLOAT32 and
# FLOAT16 otherwise.
RESAMPLE_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_0, (4, 4), _FLOATS),
    SupportRow(FeatureLevel.FL_5_1, (1, 4), _FLOATS),
    SupportRow(FeatureLevel.FL_6_2, (1, 4), _BYTES),
)
RESAMPLE1_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_1, (4, 4), _FLOATS),
    SupportRow(FeatureLevel.FL_5_1, (1, 4), _FLOATS),
    SupportRow(FeatureLevel.FL_6_2, (1, 4), _BYTES),
)
RESAMPLE2_SUPPORT = (SupportRow(FeatureLevel.FL_5_1, (1, 4), _FLOATS),)
RESAMPLE3_SUPPORT = (SupportRow(FeatureLevel.FL_6_4, (1, 4), _BYTES),)
RESAMPLE_GRAD_SUPPORT = (
    SupportRow(FeatureLevel.FL_3_0, (4, 4), _FLOATS),
    SupportRow(FeatureLevel.FL_5_1, (1, 4), _FLOATS),
)
RESAMPLE_GRAD1_SUPPORT = (SupportRow(FeatureLevel.FL_5_1, (1, 4), _FLOATS),)


def _mode_member(struct: str, value: Any) -> InterpolationMode:
    if isinstance(value, str):
        name = value.upper().removeprefix("DML_INTERPOLATION_MODE_")
        name = {"NEAREST": "NEAREST_NEIGHBOR"}.get(name, name)
        if name in InterpolationMode.__members__:
            return InterpolationMode[name]
    elif not isinstance(value, bool) and hasattr(value, "__index__") and int(value) in (0, 1):
        return InterpolationMode(int(value))
    raise TypeError(str(fail(struct, "interpolation_mode", "be an InterpolationMode", value)))


def _floats_member(struct: str, member: str, values: Any) -> tuple[float, ...]:
    """A sequence of floats, rounded to float32 (DirectML's FLOAT)."""
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(str(fail(struct, member, "be a sequence of floats", values))) from None
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, int | float | np.number):
            raise TypeError(str(fail(struct, f"{member}[{i}]", "be a float", item)))
    return tuple(float(np.float32(item)) for item in items)


def _set_members(desc: Any, offsets: bool, rounding: bool) -> None:
    struct = type(desc).__name__
    set_tensors(desc)
    object.__setattr__(desc, "interpolation_mode", _mode_member(struct, desc.interpolation_mode))
    object.__setattr__(desc, "scales", _floats_member(struct, "scales", desc.scales))
    if offsets:
        for member in ("input_pixel_offsets", "output_pixel_offsets"):
            object.__setattr__(desc, member, _floats_member(struct, member, getattr(desc, member)))
    if rounding:
        object.__setattr__(desc, "rounding_direction", direction_member(struct, desc.rounding_direction))


@dataclasses.dataclass(frozen=True)
class ResampleOperatorDesc:
    """DML_RESAMPLE_OPERATOR_DESC: RESAMPLE1 with pixel offsets (0.5, -0.5) on every axis.

    Attributes:
      input_tensor: FLOAT32 or FLOAT16, 4 dimensions (1 to 4 from 5.1; INT8 and UINT8 from
        6.2, nearest neighbour only in dmljax).
      output_tensor: the input's type and dimension count; any sizes.
      interpolation_mode: `InterpolationMode`.
      scales: a float > 0 per dimension (DirectML's ``ScaleCount`` is its length).
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    interpolation_mode: InterpolationMode
    scales: tuple[float, ...]

    def __post_init__(self) -> None:
        _set_members(self, offsets=False, rounding=False)


@dataclasses.dataclass(frozen=True)
class Resample1OperatorDesc:
    """DML_RESAMPLE1_OPERATOR_DESC: ``output = (input + input_pixel_offset) * scale + output_pixel_offset``.

    Attributes:
      input_tensor: FLOAT32 or FLOAT16, 4 dimensions.
      output_tensor: the input's type and dimension count; any sizes.
      interpolation_mode: `InterpolationMode` (nearest: ``floor(c + 0.5)``).
      scales: a float > 0 per dimension (``DimensionCount`` is the length).
      input_pixel_offsets: a float per dimension.
      output_pixel_offsets: a float per dimension.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    interpolation_mode: InterpolationMode
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]

    def __post_init__(self) -> None:
        _set_members(self, offsets=True, rounding=False)


@dataclasses.dataclass(frozen=True)
class Resample2OperatorDesc:
    """DML_RESAMPLE2_OPERATOR_DESC: RESAMPLE1 with a rounding direction for nearest neighbour.

    Attributes:
      input_tensor: FLOAT32 or FLOAT16, 1 to 4 dimensions.
      output_tensor: the input's type and dimension count; any sizes.
      interpolation_mode: `InterpolationMode`.
      rounding_direction: `AxisDirection`: DECREASING floors, INCREASING ceils the coordinate.
      scales, input_pixel_offsets, output_pixel_offsets: as in `Resample1OperatorDesc`.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    interpolation_mode: InterpolationMode
    rounding_direction: AxisDirection
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]

    def __post_init__(self) -> None:
        _set_members(self, offsets=True, rounding=True)


@dataclasses.dataclass(frozen=True)
class Resample3OperatorDesc:
    """DML_RESAMPLE3_OPERATOR_DESC: RESAMPLE2 with ``Antialiased`` (`dmljax.resample`'s ``antialiased``).

    Attributes:
      input_tensor, output_tensor, interpolation_mode, rounding_direction, scales,
      input_pixel_offsets, output_pixel_offsets: as in `Resample2OperatorDesc`.
      antialiased: a bool (or 0 / 1): linear downsampling averages a triangle ``1 / scale``
        elements wide.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    interpolation_mode: InterpolationMode
    rounding_direction: AxisDirection
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]
    antialiased: bool

    def __post_init__(self) -> None:
        _set_members(self, offsets=True, rounding=True)
        object.__setattr__(self, "antialiased", flag_member(type(self).__name__, "antialiased", self.antialiased))


@dataclasses.dataclass(frozen=True)
class ResampleGradOperatorDesc:
    """DML_RESAMPLE_GRAD_OPERATOR_DESC: RESAMPLE1's gradient (`dmljax.resample_grad`).

    Attributes:
      input_gradient_tensor: the gradient of RESAMPLE1's output (its sizes), 4 dimensions.
      output_gradient_tensor: the gradient of its input (its sizes), the same type.
      interpolation_mode, scales, input_pixel_offsets, output_pixel_offsets: RESAMPLE1's.
    """

    input_gradient_tensor: TensorDesc
    output_gradient_tensor: TensorDesc
    interpolation_mode: InterpolationMode
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]

    def __post_init__(self) -> None:
        _set_members(self, offsets=True, rounding=False)


@dataclasses.dataclass(frozen=True)
class ResampleGrad1OperatorDesc:
    """DML_RESAMPLE_GRAD1_OPERATOR_DESC: RESAMPLE2's gradient, 1 to 4 dimensions.

    Attributes:
      input_gradient_tensor, output_gradient_tensor: as in `ResampleGradOperatorDesc`.
      interpolation_mode, rounding_direction, scales, input_pixel_offsets,
      output_pixel_offsets: RESAMPLE2's.
    """

    input_gradient_tensor: TensorDesc
    output_gradient_tensor: TensorDesc
    interpolation_mode: InterpolationMode
    rounding_direction: AxisDirection
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]

    def __post_init__(self) -> None:
        _set_members(self, offsets=True, rounding=True)


def _offsets(desc: Any) -> tuple[tuple[float, ...], tuple[float, ...]]:
    n = len(desc.scales)
    if not hasattr(desc, "input_pixel_offsets"):
        return (0.5,) * n, (-0.5,) * n
    return desc.input_pixel_offsets, desc.output_pixel_offsets


def _spec(desc: Any, input_shape: tuple[int, ...], output_shape: tuple[int, ...]) -> ResampleSpec:
    mode = desc.interpolation_mode.mode
    direction = getattr(desc, "rounding_direction", None)
    rounding = None if direction is None or mode != "nearest" else direction.name.lower()
    antialiased = bool(getattr(desc, "antialiased", False)) and mode == "linear"
    return ResampleSpec(input_shape, output_shape, mode, rounding, desc.scales, *_offsets(desc), antialiased)


def _validate(check: Check, row: SupportRow, desc: Any) -> None:
    tensors = tensors_of(desc)
    source, result = list(tensors)
    check_row(check, row, tensors)
    same(check, tensors, result, source, "dtype")
    same(check, tensors, result, source, "dimension_count")
    count = tensors[source].dimension_count
    members = (
        "scales",
        *(("input_pixel_offsets", "output_pixel_offsets") if hasattr(desc, "input_pixel_offsets") else ()),
    )
    for member in members:
        values = getattr(desc, member)
        if len(values) != count:
            raise check.error(member, f"have one value per dimension ({count})", values)
        for i, value in enumerate(values):
            if not math.isfinite(value):
                raise check.error(f"{member}[{i}]", "be finite", value)
    for i, scale in enumerate(desc.scales):
        if not scale > 0:
            raise check.error(f"scales[{i}]", "be > 0", scale)
    if desc.interpolation_mode is InterpolationMode.LINEAR and tensors[source].dtype not in _FLOATS:
        rule = "be FLOAT32 or FLOAT16 for LINEAR in dmljax (the page does not say how an integer average rounds)"
        raise check.error(f"{source}.dtype", rule, tensors[source].dtype)
    check_output(check, result, tensors[result])


def _apply(desc: Any, x: jax.Array) -> tuple[jax.Array]:
    return (resample_validated(x, _spec(desc, desc.input_tensor.sizes, desc.output_tensor.sizes)),)


def _apply_grad(desc: Any, gradient: jax.Array) -> tuple[jax.Array]:
    spec = _spec(desc, desc.output_gradient_tensor.sizes, desc.input_gradient_tensor.sizes)
    return (resample_grad_validated(gradient, spec),)


_FORWARD: tuple[tuple[type, tuple[SupportRow, ...]], ...] = (
    (ResampleOperatorDesc, RESAMPLE_SUPPORT),
    (Resample1OperatorDesc, RESAMPLE1_SUPPORT),
    (Resample2OperatorDesc, RESAMPLE2_SUPPORT),
    (Resample3OperatorDesc, RESAMPLE3_SUPPORT),
)
_BACKWARD: tuple[tuple[type, tuple[SupportRow, ...]], ...] = (
    (ResampleGradOperatorDesc, RESAMPLE_GRAD_SUPPORT),
    (ResampleGrad1OperatorDesc, RESAMPLE_GRAD1_SUPPORT),
)
for _desc, _table in _FORWARD:
    register(Operator(_desc, _table, _validate, ("input_tensor",), _apply))
for _desc, _table in _BACKWARD:
    register(Operator(_desc, _table, _validate, ("input_gradient_tensor",), _apply_grad))
