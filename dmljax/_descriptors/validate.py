"""Feature-level validation of operator descriptors: the driver and the rules operators share.

`validate_operator_desc` checks a descriptor as DirectML's ``CompileOperator`` does at a
feature level: the operator exists at that level, every tensor's dimension count and data
type is in the level's row of the operator's support table, the operator's own rules
between members hold (its registered validator, `dmljax._descriptors.registry`), and no
buffer exceeds 2^32 - 1 elements. One small function per rule family; each failure is a
`ValidationError` naming the struct, the member, the rule, the feature level and the
offending value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from dmljax._buffers.layout import has_aliasing
from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.errors import ValidationError, fail
from dmljax._core.limits import MAX_TENSOR_ELEMENTS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.registry import Operator, lookup
from dmljax._descriptors.support import SupportRow, support_at
from dmljax._ops.common.indices import check_sizes_except_axis

__all__ = [
    "Check",
    "check_axis",
    "check_indexed_tensors",
    "check_indexing",
    "check_output",
    "check_row",
    "check_sizes_except_axis_members",
    "check_tensor",
    "same",
    "tensors_of",
    "validate_operator_desc",
]


@dataclasses.dataclass(frozen=True)
class Check:
    """The struct being validated and the feature level: formats every error."""

    struct: str
    level: FeatureLevel

    def error(self, member: str, rule: str, value: Any, context: str = "") -> ValidationError:
        where = f"feature level {self.level}"
        return fail(self.struct, member, rule, value, f"{context}, {where}" if context else where)


def validate_operator_desc(desc: Any, level: FeatureLevel) -> Operator:
    """Validate ``desc`` for DirectML feature ``level``; return its registration or raise.

    Raises:
      TypeError: ``desc`` is no dmljax operator descriptor.
      ValidationError: the operator is not available at ``level``, or a rule is broken.
    """
    operator = lookup(desc)
    check = Check(operator.name, level)
    row = support_row(check, operator.support)
    operator.validate(check, row, desc)
    for member, tensor in tensors_of(desc).items():
        check_buffer_size(check, member, tensor)
    return operator


def support_row(check: Check, table: Any) -> Any:
    """The table's row at the level (`support_at`); an error before the operator exists."""
    row = support_at(table, check.level)
    if row is None:
        first = table[0].level
        rule = f"be at least {first} ({check.struct} was introduced in DML_FEATURE_LEVEL_{first.name[3:]})"
        raise fail(check.struct, "feature_level", rule, str(check.level))
    return row


def _dims(row: SupportRow) -> tuple[int, ...]:
    low, high = row.dims
    return tuple(range(low, high + 1))


def check_tensor(
    check: Check, member: str, tensor: TensorDesc, counts: Sequence[int], types: Sequence[DataType]
) -> None:
    """A tensor's dimension count and data type must be in the level's row of the table."""
    count = tensor.dimension_count
    if count not in counts:
        contiguous = tuple(counts) == tuple(range(counts[0], counts[-1] + 1))
        allowed = (
            " or ".join(map(str, counts)) if not contiguous or len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
        )
        rule = f"be {allowed} at feature level {check.level}"
        raise fail(check.struct, f"{member}.dimension_count", rule, count, f"{member}.sizes {tensor.sizes}")
    if tensor.dtype not in types:
        names = ", ".join(t.name for t in types)
        raise fail(check.struct, f"{member}.dtype", f"be one of {names} at feature level {check.level}", tensor.dtype)


def check_row(check: Check, row: SupportRow, tensors: dict[str, TensorDesc]) -> None:
    """Every tensor against a `SupportRow`: indices take ``index_types``, the others ``data_types``."""
    for member, tensor in tensors.items():
        types = row.index_types if member == "indices_tensor" else row.data_types
        check_tensor(check, member, tensor, _dims(row), types)


def tensors_of(desc: Any) -> dict[str, TensorDesc]:
    """The descriptor's ``*_tensor`` members that are set, in the struct's order; a
    ``*_tensors`` member (DML_JOIN's inputs, DML_SPLIT's outputs) gives ``name[i]`` per element."""
    tensors: dict[str, TensorDesc] = {}
    for field in dataclasses.fields(desc):
        value = getattr(desc, field.name)
        if field.name.endswith("_tensor") and value is not None:
            tensors[field.name] = value
        elif field.name.endswith("_tensors"):
            tensors.update((f"{field.name}[{i}]", tensor) for i, tensor in enumerate(value))
    return tensors


def same(check: Check, tensors: dict[str, TensorDesc], member: str, other: str, attr: str) -> None:
    """``tensors[member].attr`` must equal ``tensors[other].attr`` (sizes, dtype, dimension_count)."""
    value, expected = getattr(tensors[member], attr), getattr(tensors[other], attr)
    if value != expected:
        raise check.error(f"{member}.{attr}", f"equal {other}.{attr} ({expected!r})", value)


def check_buffer_size(check: Check, member: str, tensor: TensorDesc) -> None:
    """A buffer tensor may not exceed 2^32 - 1 elements.

    The other buffer-size rule, ``TotalTensorSizeInBytes >= DMLCalcBufferTensorSize``,
    holds for every `TensorDesc` (it is checked on construction).
    """
    if tensor.buffer_elements > MAX_TENSOR_ELEMENTS:
        rule = f"be at most {MAX_TENSOR_ELEMENTS} elements ({MAX_TENSOR_ELEMENTS * tensor.dtype.itemsize} bytes)"
        context = f"{tensor.buffer_elements} elements of {tensor.dtype.name}"
        raise check.error(f"{member}.total_tensor_size_in_bytes", rule, tensor.total_tensor_size_in_bytes, context)


def check_output(check: Check, member: str, tensor: TensorDesc) -> None:
    """An output tensor must give every element its own buffer offset."""
    if has_aliasing(tensor.sizes, tensor.strides):
        rule = "describe each element at its own offset (an output must not alias: no zero or overlapping strides)"
        raise check.error(f"{member}.strides", rule, tensor.strides, f"{member}.sizes {tensor.sizes}")


def check_axis(check: Check, axis: int, count: int) -> None:
    if not 0 <= axis < count:
        raise check.error("axis", f"be in [0, {count}) (input_tensor.dimension_count)", axis)


def check_sizes_except_axis_members(check: Check, tensors: dict[str, TensorDesc], axis: int) -> None:
    sizes, input_sizes = tensors["indices_tensor"].sizes, tensors["input_tensor"].sizes
    names, context = ("indices_tensor.sizes", "input_tensor.sizes"), f"input_tensor.sizes {input_sizes}"
    suffix = f" in every dimension but axis {axis}"
    check_sizes_except_axis(input_sizes, sizes, axis, check.error, *names, context, suffix)


def check_indexed_tensors(check: Check, row: SupportRow, tensors: dict[str, TensorDesc]) -> None:
    """The support table's row; every tensor of the input's rank, every data tensor of its type."""
    check_row(check, row, tensors)
    for member in tensors:
        if member != "input_tensor":
            same(check, tensors, member, "input_tensor", "dimension_count")
        if member not in ("input_tensor", "indices_tensor"):
            same(check, tensors, member, "input_tensor", "dtype")


def check_indexing(check: Check, row: SupportRow, desc: Any) -> dict[str, TensorDesc]:
    """Rules shared by Scatter, Gather and GatherElements: the table, ranks, data types, axis, output."""
    tensors = tensors_of(desc)
    check_indexed_tensors(check, row, tensors)
    check_axis(check, desc.axis, desc.input_tensor.dimension_count)
    check_output(check, "output_tensor", desc.output_tensor)
    return tensors
