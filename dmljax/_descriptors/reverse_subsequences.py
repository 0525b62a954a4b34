"""DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_reverse_subsequences_desc
Semantics: `dmljax.reverse_subsequences`.
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
from dmljax._descriptors.support import FL2_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_axis, check_output, check_tensor, same, tensors_of
from dmljax._ops.movement.reverse_subsequences import reverse_subsequences_validated

__all__ = ["REVERSE_SUBSEQUENCES_SUPPORT", "ReverseSubsequencesOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class ReverseSubsequencesOperatorDesc:
    """DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC: reverse the first elements of each sequence along ``axis``.

    Semantics from `dmljax.reverse_subsequences` (lengths above the axis size act as it).

    Attributes:
      input_tensor: the tensor whose sequences are reversed.
      sequence_lengths_tensor: UINT32, input's sizes with size 1 along ``axis``.
      output_tensor: input's sizes and type.
      axis: the dimension along which sequences run, in ``[0, dimension count)``.
    """

    input_tensor: TensorDesc
    sequence_lengths_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "axis", int_member(type(self).__name__, "axis", self.axis))


# The page's "tensor support" tables: 2.1 4 dimensions, 3.0 4 to 5, 4.0 1 to 8; 32/16/8-bit
# data types; UINT32 lengths.
REVERSE_SUBSEQUENCES_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_3_0, (4, 5), FL2_1_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_4_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES, (DataType.UINT32,)),
)


def _validate(check: Check, row: SupportRow, desc: ReverseSubsequencesOperatorDesc) -> None:
    tensors = tensors_of(desc)
    counts = tuple(range(row.dims[0], row.dims[1] + 1))
    for member, tensor in tensors.items():
        types = row.index_types if member == "sequence_lengths_tensor" else row.data_types
        check_tensor(check, member, tensor, counts, types)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    same(check, tensors, "output_tensor", "input_tensor", "sizes")
    same(check, tensors, "sequence_lengths_tensor", "input_tensor", "dimension_count")
    check_axis(check, desc.axis, desc.input_tensor.dimension_count)
    sizes = desc.input_tensor.sizes
    expected = sizes[: desc.axis] + (1,) + sizes[desc.axis + 1 :]
    if desc.sequence_lengths_tensor.sizes != expected:
        rule = f"equal input_tensor.sizes with 1 along axis {desc.axis} ({expected})"
        raise check.error("sequence_lengths_tensor.sizes", rule, desc.sequence_lengths_tensor.sizes)
    check_output(check, "output_tensor", desc.output_tensor)


def _apply(desc: ReverseSubsequencesOperatorDesc, data: jax.Array, lengths: jax.Array) -> tuple[jax.Array]:
    return (reverse_subsequences_validated(data, lengths, desc.axis),)


REVERSE_SUBSEQUENCES = register(
    Operator(
        ReverseSubsequencesOperatorDesc,
        REVERSE_SUBSEQUENCES_SUPPORT,
        _validate,
        ("input_tensor", "sequence_lengths_tensor"),
        _apply,
    )
)
