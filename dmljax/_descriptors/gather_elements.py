"""DML_GATHER_ELEMENTS_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_gather_elements_operator_desc
Semantics: `dmljax.gather_elements` (ONNX GatherElements), the inverse of Scatter.
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import (
    FL2_1_DATA_TYPES,
    FL3_0_INDEX_TYPES,
    FL4_1_DATA_TYPES,
    SupportRow,
)
from dmljax._descriptors.validate import Check, check_indexing, check_sizes_except_axis_members, same
from dmljax._ops.index.gather import gather_elements_validated

__all__ = ["GATHER_ELEMENTS_SUPPORT", "GatherElementsOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class GatherElementsOperatorDesc:
    """DML_GATHER_ELEMENTS_OPERATOR_DESC: ``output[p] = input[p with p[axis] := indices[p]]``.

    Semantics from `dmljax.gather_elements`, the inverse of `ScatterOperatorDesc`.

    Attributes:
      input_tensor: the tensor to read from.
      indices_tensor: positions along ``axis``; input's sizes except along ``axis``.
      output_tensor: indices' sizes, input's data type.
      axis: the axis to gather along, in ``[0, DimensionCount)``.
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "axis", int_member(type(self).__name__, "axis", self.axis))


# The struct's "tensor support" tables: introduced in DML_FEATURE_LEVEL_2_1; the rows equal
# DML_SCATTER_OPERATOR_DESC's from 2.1 on. Negative signed indices from 3.0.
GATHER_ELEMENTS_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, MAX_DIMENSIONS), FL4_1_DATA_TYPES, FL3_0_INDEX_TYPES),
)


def _validate(check: Check, row: SupportRow, desc: GatherElementsOperatorDesc) -> None:
    tensors = check_indexing(check, row, desc)
    check_sizes_except_axis_members(check, tensors, desc.axis)
    same(check, tensors, "output_tensor", "indices_tensor", "sizes")


def _apply(desc: GatherElementsOperatorDesc, data: jax.Array, indices: jax.Array) -> tuple[jax.Array]:
    return (gather_elements_validated(data, indices, desc.axis),)


GATHER_ELEMENTS = register(
    Operator(GatherElementsOperatorDesc, GATHER_ELEMENTS_SUPPORT, _validate, ("input_tensor", "indices_tensor"), _apply)
)
