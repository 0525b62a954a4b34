"""DML_SCATTER_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_scatter_operator_desc
(DML_SCATTER_ELEMENTS_OPERATOR_DESC is the same struct). Semantics: `dmljax.scatter`.
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
    FL1_0_DATA_TYPES,
    FL2_1_DATA_TYPES,
    FL3_0_INDEX_TYPES,
    FL4_1_DATA_TYPES,
    SupportRow,
)
from dmljax._descriptors.validate import Check, check_indexing, check_sizes_except_axis_members, same
from dmljax._ops.index.scatter import scatter_validated

__all__ = ["SCATTER_SUPPORT", "ScatterElementsOperatorDesc", "ScatterOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class ScatterOperatorDesc:
    """DML_SCATTER_OPERATOR_DESC (alias DML_SCATTER_ELEMENTS_OPERATOR_DESC).

    ``output = input``, then ``output[p with p[axis] := indices[p]] = updates[p]`` for every
    coordinate ``p`` of ``indices``; semantics from `dmljax.scatter`.

    Attributes:
      input_tensor: the tensor copied to the output.
      indices_tensor: positions along ``axis``; input's sizes except along ``axis``.
      updates_tensor: the values written; indices' sizes, input's data type.
      output_tensor: input's sizes and data type.
      axis: the axis to scatter along, in ``[0, DimensionCount)``.

    Examples:
      >>> t = TensorDesc("float32", (5,))
      >>> i = TensorDesc("uint32", (4,))
      >>> ScatterOperatorDesc(t, i, TensorDesc("float32", (4,)), t, axis=0).axis
      0
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    updates_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "axis", int_member(type(self).__name__, "axis", self.axis))


ScatterElementsOperatorDesc = ScatterOperatorDesc

# The struct's "tensor support" tables: dimension count and data types of InputTensor,
# UpdatesTensor and OutputTensor, and the IndicesTensor types, per feature level.
SCATTER_SUPPORT = (
    SupportRow(FeatureLevel.FL_1_0, (4, 4), FL1_0_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, MAX_DIMENSIONS), FL4_1_DATA_TYPES, FL3_0_INDEX_TYPES),
)


def _validate(check: Check, row: SupportRow, desc: ScatterOperatorDesc) -> None:
    tensors = check_indexing(check, row, desc)
    check_sizes_except_axis_members(check, tensors, desc.axis)
    same(check, tensors, "updates_tensor", "indices_tensor", "sizes")
    same(check, tensors, "output_tensor", "input_tensor", "sizes")


def _apply(desc: ScatterOperatorDesc, data: jax.Array, indices: jax.Array, updates: jax.Array) -> tuple[jax.Array]:
    return (scatter_validated(data, indices, updates, desc.axis),)


SCATTER = register(
    Operator(
        ScatterOperatorDesc, SCATTER_SUPPORT, _validate, ("input_tensor", "indices_tensor", "updates_tensor"), _apply
    )
)
