"""DML_PADDING1_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_padding1_operator_desc
Semantics: `dmljax.pad`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType, as_data_type
from dmljax._core.errors import ValidationError, fail
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import ints_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL4_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_output, check_row, same, tensors_of
from dmljax._ops.common.static_args import static_number, static_real
from dmljax._ops.movement.padding import check_mode, padding_validated, padding_value

__all__ = ["PADDING_SUPPORT", "PaddingOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class PaddingOperatorDesc:
    """DML_PADDING1_OPERATOR_DESC: constant, edge, reflection, symmetric or wrap padding.

    DirectML's ``DimensionCount`` is the length of the padding tuples. Semantics from
    `dmljax.pad`.

    Attributes:
      input_tensor: the tensor to pad.
      output_tensor: ``input + start_padding + end_padding`` per dimension, input's type.
      padding_mode: ``"constant"``, ``"edge"``, ``"reflection"``, ``"symmetric"`` or ``"wrap"``
        (DML_PADDING_MODE; any case, prefix allowed; wrap from feature level 6.4).
      padding_value_data_type: the type ``padding_value`` is read as (``PaddingValueDataType``).
      padding_value: the constant of ``"constant"`` mode (``DML_SCALAR_UNION``), converted to
        the input's type as `dmljax.pad` converts ``value``.
      start_padding: elements added before each dimension (UINT).
      end_padding: elements added after each dimension (UINT).
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    padding_mode: str
    padding_value_data_type: Any
    padding_value: float | int
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]

    def __post_init__(self) -> None:
        set_tensors(self)
        struct = type(self).__name__
        object.__setattr__(self, "padding_mode", check_mode(struct, self.padding_mode))
        data_type = as_data_type(self.padding_value_data_type, struct, "padding_value_data_type")
        object.__setattr__(self, "padding_value_data_type", data_type)
        for member in ("start_padding", "end_padding"):
            object.__setattr__(self, member, ints_member(struct, member, getattr(self, member)))

    @property
    def dimension_count(self) -> int:
        """DirectML's ``DimensionCount``: the length of the padding tuples."""
        return len(self.start_padding)


# The page's "tensor support" table: introduced in 5.0, 1 to 8 dimensions, every DirectML type.
PADDING_SUPPORT = (SupportRow(FeatureLevel.FL_5_0, (1, MAX_DIMENSIONS), FL4_1_DATA_TYPES),)
# DML_PADDING_MODE_WRAP came with feature level 6.4.
WRAP_LEVEL = FeatureLevel.FL_6_4


def _validate(check: Check, row: SupportRow, desc: PaddingOperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_row(check, row, tensors)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    same(check, tensors, "output_tensor", "input_tensor", "dimension_count")
    if desc.padding_mode == "wrap" and check.level < WRAP_LEVEL:
        raise check.error("padding_mode", f"be constant, edge, reflection or symmetric before {WRAP_LEVEL}", "wrap")
    count, sizes = desc.input_tensor.dimension_count, desc.input_tensor.sizes
    for member in ("start_padding", "end_padding"):
        values = getattr(desc, member)
        if len(values) != count:
            raise check.error(member, f"have one entry per dimension ({count})", values)
        for i, value in enumerate(values):
            if not 0 <= value <= 2**32 - 1:
                raise check.error(f"{member}[{i}]", "be in [0, 4294967295] (DirectML UINT)", value)
    expected = tuple(s + a + b for s, a, b in zip(sizes, desc.start_padding, desc.end_padding, strict=True))
    if desc.output_tensor.sizes != expected:
        rule = f"equal input_tensor.sizes + start_padding + end_padding ({expected})"
        raise check.error("output_tensor.sizes", rule, desc.output_tensor.sizes)
    try:
        value = _value(desc)
    except ValidationError as error:
        rule = f"be a number that padding_value_data_type ({desc.padding_value_data_type.name}) reads"
        raise check.error("padding_value", rule, desc.padding_value, str(error)) from None
    try:
        padding_value(desc.input_tensor.dtype.dtype, value)
    except ValidationError as error:
        raise check.error("padding_value", "fit input_tensor.dtype", desc.padding_value, str(error)) from None
    check_output(check, "output_tensor", desc.output_tensor)


def _value(desc: PaddingOperatorDesc) -> Any:
    """``padding_value`` read as ``padding_value_data_type`` (a float read as an integer type truncates).

    Raises:
      ValidationError: the value is no number of the type's kind (None, a string; complex
        for a real type), or NaN or infinite for an integer type.
    """
    data_type: DataType = desc.padding_value_data_type
    kind = data_type.dtype.kind
    struct = type(desc).__name__
    context = f"padding_value_data_type {data_type.name}"
    if kind == "c":
        return complex(static_number(struct, "padding_value", desc.padding_value, context, complex_ok=True))
    number = static_real(struct, "padding_value", desc.padding_value, context)
    if kind in "iu":
        if isinstance(number, float) and not math.isfinite(number):
            raise fail(struct, "padding_value", "be finite for an integer type", desc.padding_value, context)
        return int(number)
    try:
        return float(number)
    except OverflowError:  # a Python int beyond every float
        raise fail(struct, "padding_value", "be within the float range", desc.padding_value, context) from None


def _apply(desc: PaddingOperatorDesc, data: jax.Array) -> tuple[jax.Array]:
    value = padding_value(data.dtype, _value(desc))
    return (padding_validated(data, desc.start_padding, desc.end_padding, desc.padding_mode, value),)


PADDING = register(Operator(PaddingOperatorDesc, PADDING_SUPPORT, _validate, ("input_tensor",), _apply))
