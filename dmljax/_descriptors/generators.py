"""DML_FILL_VALUE_CONSTANT, DML_DIAGONAL_MATRIX and DML_DIAGONAL_MATRIX1: structs, tables, rules.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_fill_value_constant_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_diagonal_matrix_operator_desc
https://learn.microsoft.com/en-us/windows/ai/directml/api/ns-directml-dml_diagonal_matrix1_operator_desc
Semantics: `dmljax.fill_value_constant`, `dmljax.diagonal_matrix`. FILL_VALUE_CONSTANT and
DIAGONAL_MATRIX take no buffers; DIAGONAL_MATRIX1 takes its input's when it has one.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType, as_data_type
from dmljax._core.errors import ValidationError
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL2_1_DATA_TYPES, FL4_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_output, check_row, same, tensors_of
from dmljax._ops.movement.fill_value_sequence import check_scalar
from dmljax._ops.movement.generators import diagonal_matrix_validated, fill_value_constant_validated

__all__ = [
    "DIAGONAL_MATRIX1_SUPPORT",
    "DIAGONAL_MATRIX_SUPPORT",
    "FILL_VALUE_CONSTANT_SUPPORT",
    "DiagonalMatrix1OperatorDesc",
    "DiagonalMatrixOperatorDesc",
    "FillValueConstantOperatorDesc",
]

# The pages' "Tensor support" tables (Markdown source: github.com/MicrosoftDocs/sdk-api, and
# MicrosoftDocs/windows-ai-docs for DIAGONAL_MATRIX1). DIAGONAL_MATRIX: introduced in 2.0, 4
# dimensions, FLOAT32/FLOAT16; the 32/16/8-bit integers from 2.1; 2 to 4 dimensions from 4.0;
# the 64-bit types from 5.1. FILL_VALUE_CONSTANT: introduced in 2.1, 4 dimensions, the
# 32/16/8-bit types; 1 to 8 dimensions from 4.0; the 64-bit types from 4.1. DIAGONAL_MATRIX1
# (5.1, DirectML 1.9): 2 to 4 dimensions, the 64-bit types included.
DIAGONAL_MATRIX_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_0, (4, 4), (DataType.FLOAT32, DataType.FLOAT16)),
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_4_0, (2, 4), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_5_1, (2, 4), FL4_1_DATA_TYPES),
)
DIAGONAL_MATRIX1_SUPPORT = (SupportRow(FeatureLevel.FL_5_1, (2, 4), FL4_1_DATA_TYPES),)
FILL_VALUE_CONSTANT_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_4_0, (1, 8), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, 8), FL4_1_DATA_TYPES),
)


def _value_type(desc: Any) -> None:
    data_type = as_data_type(desc.value_data_type, type(desc).__name__, "value_data_type")
    object.__setattr__(desc, "value_data_type", data_type)


@dataclasses.dataclass(frozen=True)
class FillValueConstantOperatorDesc:
    """DML_FILL_VALUE_CONSTANT_OPERATOR_DESC: ``value`` in every element.

    Attributes:
      output_tensor: the tensor to fill.
      value_data_type: ``ValueDataType``; must equal the output's type.
      value: ``Value`` (DML_SCALAR_UNION), a Python number that fits the type.
    """

    output_tensor: TensorDesc
    value_data_type: Any
    value: float | int

    def __post_init__(self) -> None:
        set_tensors(self)
        _value_type(self)


@dataclasses.dataclass(frozen=True)
class DiagonalMatrixOperatorDesc:
    """DML_DIAGONAL_MATRIX_OPERATOR_DESC: ``value`` where ``column == row + offset``, else 0.

    Attributes:
      output_tensor: ``{batch1, batch2, rows, columns}``.
      offset: ``Offset`` (INT).
      value: ``Value`` (FLOAT): truncated toward zero for an integer type (the page).
    """

    output_tensor: TensorDesc
    offset: int
    value: float

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "offset", int_member(type(self).__name__, "offset", self.offset))


@dataclasses.dataclass(frozen=True)
class DiagonalMatrix1OperatorDesc:
    """DML_DIAGONAL_MATRIX1_OPERATOR_DESC: ``value`` on the span ``[begin, end)`` of ``column - row``.

    Attributes:
      input_tensor: None, or the values of the other elements (the output's sizes and type).
      output_tensor: 2 to 4 dimensions; the last two are each matrix's.
      value_data_type: ``ValueDataType``; must equal the output's type.
      value: ``Value`` (DML_SCALAR_UNION).
      diagonal_fill_begin, diagonal_fill_end: the span (inverted when end < begin).
    """

    input_tensor: TensorDesc | None
    output_tensor: TensorDesc
    value_data_type: Any
    value: float | int
    diagonal_fill_begin: int
    diagonal_fill_end: int

    def __post_init__(self) -> None:
        set_tensors(self, "input_tensor")
        _value_type(self)
        struct = type(self).__name__
        for member in ("diagonal_fill_begin", "diagonal_fill_end"):
            object.__setattr__(self, member, int_member(struct, member, getattr(self, member)))


def _check_value(check: Check, desc: Any, truncate: bool = False) -> Any:
    dtype = desc.output_tensor.dtype.dtype
    if getattr(desc, "value_data_type", desc.output_tensor.dtype) != desc.output_tensor.dtype:
        rule = f"equal output_tensor.dtype ({desc.output_tensor.dtype!r})"
        raise check.error("value_data_type", rule, desc.value_data_type)
    value = desc.value
    if truncate and dtype.kind in "iu" and isinstance(value, int | float) and abs(float(value)) != float("inf"):
        value = int(float(value))
    try:
        return check_scalar(check.struct, "value", value, dtype)
    except ValidationError as error:
        raise check.error("value", "fit the output's type", desc.value, str(error)) from None


def _validate(check: Check, row: SupportRow, desc: Any) -> None:
    tensors = tensors_of(desc)
    check_row(check, row, tensors)
    if "input_tensor" in tensors:
        same(check, tensors, "input_tensor", "output_tensor", "sizes")
        same(check, tensors, "input_tensor", "output_tensor", "dtype")
    _check_value(check, desc, isinstance(desc, DiagonalMatrixOperatorDesc))
    check_output(check, "output_tensor", desc.output_tensor)


def _check() -> Check:
    return Check("", FeatureLevel.LATEST)


def _apply_fill(desc: FillValueConstantOperatorDesc) -> tuple[jax.Array]:
    out = desc.output_tensor
    return (fill_value_constant_validated(out.sizes, out.dtype.dtype, _check_value(_check(), desc)),)


def _apply_diagonal(desc: DiagonalMatrixOperatorDesc) -> tuple[jax.Array]:
    out, value = desc.output_tensor, _check_value(_check(), desc, truncate=True)
    return (diagonal_matrix_validated(out.sizes, out.dtype.dtype, desc.offset, desc.offset + 1, value, None),)


def _apply_diagonal1(desc: DiagonalMatrix1OperatorDesc, *x: jax.Array) -> tuple[jax.Array]:
    out, value = desc.output_tensor, _check_value(_check(), desc)
    begin, end = desc.diagonal_fill_begin, desc.diagonal_fill_end
    return (diagonal_matrix_validated(out.sizes, out.dtype.dtype, begin, end, value, x[0] if x else None),)


register(Operator(FillValueConstantOperatorDesc, FILL_VALUE_CONSTANT_SUPPORT, _validate, (), _apply_fill))
register(Operator(DiagonalMatrixOperatorDesc, DIAGONAL_MATRIX_SUPPORT, _validate, (), _apply_diagonal))
register(
    Operator(DiagonalMatrix1OperatorDesc, DIAGONAL_MATRIX1_SUPPORT, _validate, ("input_tensor",), _apply_diagonal1)
)
