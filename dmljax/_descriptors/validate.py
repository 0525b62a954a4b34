"""Feature-level validation of operator descriptors, driven by the operators' support tables.

`validate_operator_desc` checks a descriptor as DirectML's ``CompileOperator`` does at a
feature level: the operator exists at that level, every tensor's dimension count and data
type is in the level's row of the operator's table (``SCATTER_SUPPORT`` beside `scatter`,
...), and the shape rules between tensors, the axis, window and state rules hold. One
small function per rule family; each failure is a `ValidationError` naming the struct, the
member, the rule, the feature level and the offending value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from dmljax._buffers.layout import has_aliasing
from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.errors import ValidationError, fail
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.operator_descs import (
    GatherElementsOperatorDesc,
    GatherOperatorDesc,
    RandomGeneratorOperatorDesc,
    ScatterOperatorDesc,
    Slice1OperatorDesc,
)
from dmljax._descriptors.support import SupportRow
from dmljax._ops.gather import GATHER_ELEMENTS_SUPPORT, GATHER_SUPPORT
from dmljax._ops.indices import check_sizes_except_axis
from dmljax._ops.scatter import SCATTER_SUPPORT
from dmljax._ops.slice1 import SLICE1_SUPPORT, check_window_rules
from dmljax._random.generator import MAX_OUTPUT_ELEMENTS, RANDOM_GENERATOR_SUPPORT, STATE_WORDS, RandomGeneratorSupport

__all__ = ["SUPPORT_TABLES", "gather_output_sizes", "validate_operator_desc"]


# The support table each descriptor is validated against.
SUPPORT_TABLES: dict[type, Any] = {
    ScatterOperatorDesc: SCATTER_SUPPORT,
    GatherOperatorDesc: GATHER_SUPPORT,
    GatherElementsOperatorDesc: GATHER_ELEMENTS_SUPPORT,
    Slice1OperatorDesc: SLICE1_SUPPORT,
    RandomGeneratorOperatorDesc: RANDOM_GENERATOR_SUPPORT,
}


# DML_BUFFER_TENSOR_DESC: "The total size of a buffer tensor may not exceed (2^32 - 1) elements."
_MAX_BUFFER_ELEMENTS = 2**32 - 1


@dataclasses.dataclass(frozen=True)
class _Check:
    """The struct being validated and the feature level: formats every error."""

    struct: str
    level: FeatureLevel

    def error(self, member: str, rule: str, value: Any, context: str = "") -> ValidationError:
        where = f"feature level {self.level}"
        return fail(self.struct, member, rule, value, f"{context}, {where}" if context else where)


def validate_operator_desc(desc: Any, level: FeatureLevel) -> None:
    """Validate ``desc`` for DirectML feature ``level``; return None or raise.

    Raises:
      TypeError: ``desc`` is no dmljax operator descriptor.
      ValidationError: the operator is not available at ``level``, or a rule is broken.
    """
    validator = _VALIDATORS.get(type(desc))
    if validator is None:
        names = ", ".join(cls.__name__ for cls in _VALIDATORS)
        raise TypeError(str(fail("compile_operator", "desc", f"be one of {names}", desc)))
    check = _Check(type(desc).__name__, level)
    row = _support_row(check, SUPPORT_TABLES[type(desc)])
    validator(check, row, desc)
    for member, tensor in _tensors(desc).items():
        _check_buffer_size(check, member, tensor)


def _support_row(check: _Check, table: Any) -> Any:
    """The table's row at the level (a tuple of rows with ``.level``, or a dict by level)."""
    rows = sorted(table.items()) if isinstance(table, dict) else [(row.level, row) for row in table]
    applicable = [row for level, row in rows if level <= check.level]
    if not applicable:
        first = rows[0][0]
        rule = f"be at least {first} ({check.struct} was introduced in DML_FEATURE_LEVEL_{first.name[3:]})"
        raise fail(check.struct, "feature_level", rule, str(check.level))
    return applicable[-1]


def _dims(row: SupportRow) -> tuple[int, ...]:
    low, high = row.dims
    return tuple(range(low, high + 1))


def _check_tensor(
    check: _Check, member: str, tensor: TensorDesc, counts: Sequence[int], types: Sequence[DataType]
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


def _check_row(check: _Check, row: SupportRow, tensors: dict[str, TensorDesc]) -> None:
    """Every tensor against a `SupportRow`: indices take ``index_types``, the others ``data_types``."""
    for member, tensor in tensors.items():
        types = row.index_types if member == "indices_tensor" else row.data_types
        _check_tensor(check, member, tensor, _dims(row), types)


def _tensors(desc: Any) -> dict[str, TensorDesc]:
    """The descriptor's ``*_tensor`` members that are set, in the struct's order."""
    members = (f.name for f in dataclasses.fields(desc) if f.name.endswith("_tensor"))
    return {name: getattr(desc, name) for name in members if getattr(desc, name) is not None}


def _same(check: _Check, tensors: dict[str, TensorDesc], member: str, other: str, attr: str) -> None:
    """``tensors[member].attr`` must equal ``tensors[other].attr`` (sizes, dtype, dimension_count)."""
    value, expected = getattr(tensors[member], attr), getattr(tensors[other], attr)
    if value != expected:
        raise check.error(f"{member}.{attr}", f"equal {other}.{attr} ({expected!r})", value)


def _check_buffer_size(check: _Check, member: str, tensor: TensorDesc) -> None:
    """A buffer tensor may not exceed 2^32 - 1 elements.

    The other buffer-size rule, ``TotalTensorSizeInBytes >= DMLCalcBufferTensorSize``,
    holds for every `TensorDesc` (it is checked on construction).
    """
    if tensor.buffer_elements > _MAX_BUFFER_ELEMENTS:
        rule = f"be at most {_MAX_BUFFER_ELEMENTS} elements ({_MAX_BUFFER_ELEMENTS * tensor.dtype.itemsize} bytes)"
        context = f"{tensor.buffer_elements} elements of {tensor.dtype.name}"
        raise check.error(f"{member}.total_tensor_size_in_bytes", rule, tensor.total_tensor_size_in_bytes, context)


def _check_output(check: _Check, member: str, tensor: TensorDesc) -> None:
    """An output tensor must give every element its own buffer offset."""
    if has_aliasing(tensor.sizes, tensor.strides):
        rule = "describe each element at its own offset (an output must not alias: no zero or overlapping strides)"
        raise check.error(f"{member}.strides", rule, tensor.strides, f"{member}.sizes {tensor.sizes}")


def _check_axis(check: _Check, axis: int, count: int) -> None:
    if not 0 <= axis < count:
        raise check.error("axis", f"be in [0, {count}) (input_tensor.dimension_count)", axis)


def _check_sizes_except_axis(check: _Check, tensors: dict[str, TensorDesc], axis: int) -> None:
    sizes, input_sizes = tensors["indices_tensor"].sizes, tensors["input_tensor"].sizes
    names, context = ("indices_tensor.sizes", "input_tensor.sizes"), f"input_tensor.sizes {input_sizes}"
    suffix = f" in every dimension but axis {axis}"
    check_sizes_except_axis(input_sizes, sizes, axis, check.error, *names, context, suffix)


def _check_indexing(check: _Check, row: SupportRow, desc: Any) -> dict[str, TensorDesc]:
    """Rules shared by Scatter, Gather and GatherElements: the table, ranks, data types, axis, output."""
    tensors = _tensors(desc)
    _check_row(check, row, tensors)
    for member in tensors:
        if member != "input_tensor":
            _same(check, tensors, member, "input_tensor", "dimension_count")
        if member not in ("input_tensor", "indices_tensor"):
            _same(check, tensors, member, "input_tensor", "dtype")
    _check_axis(check, desc.axis, desc.input_tensor.dimension_count)
    _check_output(check, "output_tensor", desc.output_tensor)
    return tensors


def _validate_scatter(check: _Check, row: SupportRow, desc: ScatterOperatorDesc) -> None:
    tensors = _check_indexing(check, row, desc)
    _check_sizes_except_axis(check, tensors, desc.axis)
    _same(check, tensors, "updates_tensor", "indices_tensor", "sizes")
    _same(check, tensors, "output_tensor", "input_tensor", "sizes")


def _validate_gather_elements(check: _Check, row: SupportRow, desc: GatherElementsOperatorDesc) -> None:
    tensors = _check_indexing(check, row, desc)
    _check_sizes_except_axis(check, tensors, desc.axis)
    _same(check, tensors, "output_tensor", "indices_tensor", "sizes")


def gather_output_sizes(
    input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], axis: int, index_dimensions: int
) -> tuple[int, ...] | None:
    """DML_GATHER's output sizes, right-aligned to the dimension count; None if they do not fit.

    Examples:
      >>> gather_output_sizes((1, 3, 3), (1, 1, 2), axis=2, index_dimensions=2)  # leading 1 cropped
      (3, 1, 2)
      >>> gather_output_sizes((1, 3, 2), (1, 1, 1), axis=1, index_dimensions=0)  # leading 1 added
      (1, 1, 2)
      >>> gather_output_sizes((3, 2), (1, 2), axis=1, index_dimensions=2) is None  # 3 would be cropped
      True
    """
    count = len(input_sizes)
    kept = indices_sizes[count - index_dimensions :] if index_dimensions else ()
    sizes = input_sizes[:axis] + kept + input_sizes[axis + 1 :]
    excess = len(sizes) - count
    if excess > 0 and any(size != 1 for size in sizes[:excess]):
        return None
    return sizes[excess:] if excess > 0 else (1,) * -excess + sizes


def _validate_gather(check: _Check, row: SupportRow, desc: GatherOperatorDesc) -> None:
    _check_indexing(check, row, desc)
    source, indices, count = desc.input_tensor, desc.indices_tensor, desc.input_tensor.dimension_count
    if not 0 <= desc.index_dimensions <= count:
        rule = f"be in [0, {count}] (indices_tensor.dimension_count)"
        raise check.error("index_dimensions", rule, desc.index_dimensions)
    if any(size != 1 for size in indices.sizes[: count - desc.index_dimensions]):
        rule = f"be 1 before the last index_dimensions ({desc.index_dimensions}) sizes"
        raise check.error("indices_tensor.sizes", rule, indices.sizes)
    expected = gather_output_sizes(source.sizes, indices.sizes, desc.axis, desc.index_dimensions)
    if expected is None:
        rule = f"leave at most {count} dimensions once leading 1s are cropped (input rank + index_dimensions - 1)"
        raise check.error("index_dimensions", rule, desc.index_dimensions, f"input_tensor.sizes {source.sizes}")
    if desc.output_tensor.sizes != expected:
        rule = f"equal {expected} (input sizes around axis {desc.axis}, the indexed sizes between, right-aligned)"
        raise check.error("output_tensor.sizes", rule, desc.output_tensor.sizes)


def _validate_slice1(check: _Check, row: SupportRow, desc: Slice1OperatorDesc) -> None:
    tensors = _tensors(desc)
    _check_row(check, row, tensors)
    _same(check, tensors, "output_tensor", "input_tensor", "dtype")
    _same(check, tensors, "output_tensor", "input_tensor", "dimension_count")
    count = desc.input_tensor.dimension_count
    for member in ("input_window_offsets", "input_window_sizes", "input_window_strides"):
        if len(getattr(desc, member)) != count:
            raise check.error(member, f"have one entry per dimension ({count})", getattr(desc, member))
    window = (desc.input_window_offsets, desc.input_window_sizes, desc.input_window_strides)
    shape, output_sizes = desc.input_tensor.sizes, desc.output_tensor.sizes
    check_window_rules(shape, *window, output_sizes, check.error, _SLICE1_MEMBERS, "input_tensor.sizes")
    _check_output(check, "output_tensor", desc.output_tensor)


# Slice1OperatorDesc's members for the window rules of `dmljax._ops.slice1.check_window_rules`.
_SLICE1_MEMBERS = {
    "offsets": "input_window_offsets",
    "sizes": "input_window_sizes",
    "strides": "input_window_strides",
    "output_sizes": "output_tensor.sizes",
}


def _validate_random_generator(check: _Check, row: RandomGeneratorSupport, desc: RandomGeneratorOperatorDesc) -> None:
    state, output, output_state = desc.input_state_tensor, desc.output_tensor, desc.output_state_tensor
    _check_tensor(check, "input_state_tensor", state, row.state_dimension_counts, row.data_types)
    _check_tensor(check, "output_tensor", output, row.output_dimension_counts, row.data_types)
    if output_state is not None:
        _check_tensor(check, "output_state_tensor", output_state, row.state_dimension_counts, row.data_types)
    expected = (1,) * (state.dimension_count - 1) + (STATE_WORDS,)
    if state.sizes != expected:
        rule = f"be {expected} (leading 1s, then {STATE_WORDS} UINT32 words: 128-bit counter, 64-bit key)"
        raise check.error("input_state_tensor.sizes", rule, state.sizes)
    if output.element_count > MAX_OUTPUT_ELEMENTS:
        rule = f"have at most {MAX_OUTPUT_ELEMENTS} elements"
        raise check.error("output_tensor.sizes", rule, output.sizes, f"{output.element_count} elements")
    _check_output(check, "output_tensor", output)
    if output_state is not None:
        _same(check, _tensors(desc), "output_state_tensor", "input_state_tensor", "sizes")
        _check_output(check, "output_state_tensor", output_state)


_VALIDATORS: dict[type, Callable[[_Check, Any, Any], None]] = {
    ScatterOperatorDesc: _validate_scatter,
    GatherOperatorDesc: _validate_gather,
    GatherElementsOperatorDesc: _validate_gather_elements,
    Slice1OperatorDesc: _validate_slice1,
    RandomGeneratorOperatorDesc: _validate_random_generator,
}
