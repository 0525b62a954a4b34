"""DML_ONE_HOT_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_one_hot_operator_desc
Semantics: `dmljax.one_hot`.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.axis_direction import MemberRow, check_member_row
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL1_0_DATA_TYPES, FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES
from dmljax._descriptors.validate import Check, check_axis, check_output, same
from dmljax._ops.movement.one_hot import one_hot_validated

__all__ = ["ONE_HOT_SUPPORT", "OneHotOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class OneHotOperatorDesc:
    """DML_ONE_HOT_OPERATOR_DESC: ``OnValue`` at each sequence's index along ``axis``, ``OffValue`` elsewhere.

    Semantics from `dmljax.one_hot`: negative indices count from the end (signed types),
    out-of-range ones leave their sequence all ``OffValue``.

    Attributes:
      indices_tensor: output's sizes with 1 along ``axis``: the index of each sequence.
      values_tensor: at least two elements: element 0 is ``OffValue``, element 1 along the
        fastest-changing dimension of size > 1 is ``OnValue``.
      output_tensor: values' data type; any size along ``axis``.
      axis: in ``[0, DimensionCount)``.
    """

    indices_tensor: TensorDesc
    values_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "axis", int_member(type(self).__name__, "axis", self.axis))


def _one_hot_row(level: FeatureLevel, dims: tuple[int, int], index: tuple, data: tuple) -> MemberRow:
    return MemberRow(level, dims, (("indices_tensor", index), ("values_tensor", data), ("output_tensor", data)))


# ONE_HOT: introduced in DML_FEATURE_LEVEL_2_0 (4 dimensions, floats, UINT32 indices);
# 2.1 adds the integer data types; 3.0: 1 to 8 dimensions and the four index types.
ONE_HOT_SUPPORT = (
    _one_hot_row(FeatureLevel.FL_2_0, (4, 4), (DataType.UINT32,), FL1_0_DATA_TYPES),
    _one_hot_row(FeatureLevel.FL_2_1, (4, 4), (DataType.UINT32,), FL2_1_DATA_TYPES),
    _one_hot_row(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL3_0_INDEX_TYPES, FL2_1_DATA_TYPES),
)


def _validate_one_hot(check: Check, row: MemberRow, desc: OneHotOperatorDesc) -> None:
    tensors = check_member_row(check, row, desc)
    same(check, tensors, "output_tensor", "values_tensor", "dtype")
    sizes = desc.output_tensor.sizes
    check_axis(check, desc.axis, len(sizes))
    expected = sizes[: desc.axis] + (1,) + sizes[desc.axis + 1 :]
    if desc.indices_tensor.sizes != expected:
        rule = f"equal output_tensor.sizes with 1 along axis ({expected})"
        raise check.error("indices_tensor.sizes", rule, desc.indices_tensor.sizes)
    if desc.values_tensor.element_count < 2:
        raise check.error("values_tensor.sizes", "hold at least two elements", desc.values_tensor.sizes)
    check_output(check, "output_tensor", desc.output_tensor)


def _apply_one_hot(desc: OneHotOperatorDesc, indices: jax.Array, values: jax.Array) -> tuple[jax.Array]:
    depth = desc.output_tensor.sizes[desc.axis]
    off_on = values.reshape(-1)[:2]  # element 1 along the fastest-changing dimension of size > 1
    return (one_hot_validated(jnp.squeeze(indices, desc.axis), off_on, depth, desc.axis),)


ONE_HOT = register(
    Operator(
        OneHotOperatorDesc, ONE_HOT_SUPPORT, _validate_one_hot, ("indices_tensor", "values_tensor"), _apply_one_hot
    )
)
