"""DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_fill_value_sequence_operator_desc
Semantics: `dmljax.fill_value_sequence`. No input tensor: the compiled operator takes no buffers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import as_data_type
from dmljax._core.errors import ValidationError
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL2_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_output, check_row, tensors_of
from dmljax._ops.movement.fill_value_sequence import check_scalar, fill_value_sequence_validated

__all__ = ["FILL_VALUE_SEQUENCE_SUPPORT", "FillValueSequenceOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class FillValueSequenceOperatorDesc:
    """DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC: ``value_start``, then ``value_delta`` added per element.

    Semantics from `dmljax.fill_value_sequence` (the page's loop, in the output's type).

    Attributes:
      output_tensor: the tensor to fill, any sizes.
      value_data_type: ``ValueDataType``; must equal the output's type.
      value_start: ``ValueStart`` (``DML_SCALAR_UNION``), a Python number.
      value_delta: ``ValueDelta``, a Python number.
    """

    output_tensor: TensorDesc
    value_data_type: Any
    value_start: float | int
    value_delta: float | int

    def __post_init__(self) -> None:
        set_tensors(self)
        data_type = as_data_type(self.value_data_type, type(self).__name__, "value_data_type")
        object.__setattr__(self, "value_data_type", data_type)


# The page's "tensor support" table: introduced in 2.1, 4 dimensions, 32/16/8-bit types.
FILL_VALUE_SEQUENCE_SUPPORT = (SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES),)


def _validate(check: Check, row: SupportRow, desc: FillValueSequenceOperatorDesc) -> None:
    check_row(check, row, tensors_of(desc))
    if desc.value_data_type != desc.output_tensor.dtype:
        rule = f"equal output_tensor.dtype ({desc.output_tensor.dtype!r})"
        raise check.error("value_data_type", rule, desc.value_data_type)
    dtype = desc.output_tensor.dtype.dtype
    for member, param in (("value_start", "start"), ("value_delta", "delta")):
        try:
            check_scalar(type(desc).__name__, param, getattr(desc, member), dtype)
        except ValidationError as error:
            raise check.error(member, "fit value_data_type", getattr(desc, member), str(error)) from None
    check_output(check, "output_tensor", desc.output_tensor)


def _apply(desc: FillValueSequenceOperatorDesc) -> tuple[jax.Array]:
    dtype = desc.output_tensor.dtype.dtype
    start = check_scalar("", "start", desc.value_start, dtype)
    delta = check_scalar("", "delta", desc.value_delta, dtype)
    return (fill_value_sequence_validated(desc.output_tensor.sizes, dtype, start, delta),)


FILL_VALUE_SEQUENCE = register(
    Operator(FillValueSequenceOperatorDesc, FILL_VALUE_SEQUENCE_SUPPORT, _validate, (), _apply)
)
