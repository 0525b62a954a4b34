"""DML_CUMULATIVE_SUMMATION/PRODUCT_OPERATOR_DESC: the structs, their tables, rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_cumulative_summation_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_cumulative_product_operator_desc
Semantics: `dmljax.cumulative_sum`, `dmljax.cumulative_prod` (the tally in sequence).
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.axis_direction import (
    AxisDirection,
    MemberRow,
    check_member_row,
    direction_member,
    flag_member,
)
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.validate import Check, check_axis, check_output, same
from dmljax._ops.ordered.cumulative import cumulative_product_validated, cumulative_sum_validated

__all__ = [
    "CUMULATIVE_PRODUCT_SUPPORT",
    "CUMULATIVE_SUMMATION_SUPPORT",
    "CumulativeProductOperatorDesc",
    "CumulativeSummationOperatorDesc",
]

# Both pages list these types for InputTensor and OutputTensor.
_TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.UINT32, DataType.UINT16)


def _rows(*levels: tuple[FeatureLevel, tuple[int, int]]) -> tuple[MemberRow, ...]:
    return tuple(
        MemberRow(level, dims, (("input_tensor", _TYPES), ("output_tensor", _TYPES))) for level, dims in levels
    )


@dataclasses.dataclass(frozen=True)
class CumulativeSummationOperatorDesc:
    """DML_CUMULATIVE_SUMMATION_OPERATOR_DESC: the running sum along ``axis``, in sequence.

    Semantics from `dmljax.cumulative_sum`.

    Attributes:
      input_tensor: the tensor to sum.
      output_tensor: input's sizes and data type.
      axis: the axis to sum along, in ``[0, DimensionCount)``.
      axis_direction: `AxisDirection` INCREASING (from the first element) or DECREASING.
      has_exclusive_sum: leave each element out of its own output.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int
    axis_direction: AxisDirection = AxisDirection.INCREASING
    has_exclusive_sum: bool = False

    def __post_init__(self) -> None:
        _members(self, "has_exclusive_sum")


@dataclasses.dataclass(frozen=True)
class CumulativeProductOperatorDesc:
    """DML_CUMULATIVE_PRODUCT_OPERATOR_DESC: the running product along ``axis``, in sequence.

    Semantics from `dmljax.cumulative_prod`.

    Attributes:
      input_tensor: the tensor to multiply.
      output_tensor: input's sizes and data type.
      axis: the axis to multiply along, in ``[0, DimensionCount)``.
      axis_direction: `AxisDirection` INCREASING (from the first element) or DECREASING.
      has_exclusive_product: leave each element out of its own output.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int
    axis_direction: AxisDirection = AxisDirection.INCREASING
    has_exclusive_product: bool = False

    def __post_init__(self) -> None:
        _members(self, "has_exclusive_product")


def _members(desc: CumulativeSummationOperatorDesc | CumulativeProductOperatorDesc, flag: str) -> None:
    set_tensors(desc)
    struct = type(desc).__name__
    object.__setattr__(desc, "axis", int_member(struct, "axis", desc.axis))
    object.__setattr__(desc, "axis_direction", direction_member(struct, desc.axis_direction))
    object.__setattr__(desc, flag, flag_member(struct, flag, getattr(desc, flag)))


# CUMULATIVE_SUMMATION: introduced in DML_FEATURE_LEVEL_2_1, 4 dimensions (the page's one table).
CUMULATIVE_SUMMATION_SUPPORT = _rows((FeatureLevel.FL_2_1, (4, 4)))
# CUMULATIVE_PRODUCT: introduced in 3.1 with 4 dimensions; 1 to 8 from 4.0.
CUMULATIVE_PRODUCT_SUPPORT = _rows((FeatureLevel.FL_3_1, (4, 4)), (FeatureLevel.FL_4_0, (1, MAX_DIMENSIONS)))


def _validate(check: Check, row: MemberRow, desc: CumulativeSummationOperatorDesc) -> None:
    tensors = check_member_row(check, row, desc)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    same(check, tensors, "output_tensor", "input_tensor", "sizes")
    check_axis(check, desc.axis, desc.input_tensor.dimension_count)
    check_output(check, "output_tensor", desc.output_tensor)


def _apply_sum(desc: CumulativeSummationOperatorDesc, x: jax.Array) -> tuple[jax.Array]:
    reverse = desc.axis_direction is AxisDirection.DECREASING
    return (cumulative_sum_validated(x, desc.axis, reverse, desc.has_exclusive_sum),)


def _apply_product(desc: CumulativeProductOperatorDesc, x: jax.Array) -> tuple[jax.Array]:
    reverse = desc.axis_direction is AxisDirection.DECREASING
    return (cumulative_product_validated(x, desc.axis, reverse, desc.has_exclusive_product),)


CUMULATIVE_SUMMATION = register(
    Operator(CumulativeSummationOperatorDesc, CUMULATIVE_SUMMATION_SUPPORT, _validate, ("input_tensor",), _apply_sum)
)
CUMULATIVE_PRODUCT = register(
    Operator(CumulativeProductOperatorDesc, CUMULATIVE_PRODUCT_SUPPORT, _validate, ("input_tensor",), _apply_product)
)
