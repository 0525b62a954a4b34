"""DML_TOP_K1_OPERATOR_DESC and DML_ARGMAX/ARGMIN_OPERATOR_DESC: structs, tables, rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_top_k1_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_argmax_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_argmin_operator_desc
Semantics: `dmljax.top_k`, `dmljax.argmax`, `dmljax.argmin` (ties by index, NaN above every number).
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.axis_direction import AxisDirection, MemberRow, check_member_row, direction_member
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, ints_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES
from dmljax._descriptors.validate import Check, check_axis, check_output, same
from dmljax._ops.selection.arg_reduce import argmax_validated, argmin_validated
from dmljax._ops.selection.topk import top_k_validated

__all__ = ["ARG_REDUCE_SUPPORT", "TOP_K_SUPPORT", "ArgMaxOperatorDesc", "ArgMinOperatorDesc", "TopKOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class TopKOperatorDesc:
    """DML_TOP_K1_OPERATOR_DESC: the ``k`` largest (DECREASING) or smallest (INCREASING) along ``axis``.

    Semantics from `dmljax.top_k`; the indices are written as UINT32.

    Attributes:
      input_tensor: the tensor to select from.
      output_value_tensor: input's sizes with ``k`` along ``axis``, input's data type.
      output_index_tensor: the same sizes, UINT32: indices from the start of each sequence.
      axis: the axis to select along, in ``[0, DimensionCount)``.
      k: the number of elements, in ``[1, input sizes[axis]]``.
      axis_direction: DECREASING (the largest, descending) or INCREASING (the smallest, ascending).
    """

    input_tensor: TensorDesc
    output_value_tensor: TensorDesc
    output_index_tensor: TensorDesc
    axis: int
    k: int
    axis_direction: AxisDirection = AxisDirection.DECREASING

    def __post_init__(self) -> None:
        set_tensors(self)
        struct = type(self).__name__
        object.__setattr__(self, "axis", int_member(struct, "axis", self.axis))
        object.__setattr__(self, "k", int_member(struct, "k", self.k))
        object.__setattr__(self, "axis_direction", direction_member(struct, self.axis_direction))


@dataclasses.dataclass(frozen=True)
class ArgMaxOperatorDesc:
    """DML_ARGMAX_OPERATOR_DESC: the index of the largest element over ``axes``.

    Semantics from `dmljax.argmax` with ``keepdims=True``: the index counts row-major within
    the reduced axes; INCREASING takes the first index on ties, DECREASING the last.

    Attributes:
      input_tensor: the tensor to reduce.
      output_tensor: input's sizes with 1 on every reduced axis; INT64, INT32, UINT64 or UINT32.
      axes: DirectML's ``Axes`` (``AxisCount`` is its length): distinct axes in ``[0, DimensionCount)``.
      axis_direction: INCREASING (first index on ties) or DECREASING (last).
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: tuple[int, ...]
    axis_direction: AxisDirection = AxisDirection.INCREASING

    def __post_init__(self) -> None:
        _arg_members(self)


@dataclasses.dataclass(frozen=True)
class ArgMinOperatorDesc:
    """DML_ARGMIN_OPERATOR_DESC: the index of the smallest element over ``axes``.

    Semantics from `dmljax.argmin` with ``keepdims=True``; members as `ArgMaxOperatorDesc`.

    Attributes:
      input_tensor: the tensor to reduce.
      output_tensor: input's sizes with 1 on every reduced axis; INT64, INT32, UINT64 or UINT32.
      axes: distinct axes in ``[0, DimensionCount)``.
      axis_direction: INCREASING (first index on ties) or DECREASING (last).
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: tuple[int, ...]
    axis_direction: AxisDirection = AxisDirection.INCREASING

    def __post_init__(self) -> None:
        _arg_members(self)


def _arg_members(desc: ArgMaxOperatorDesc | ArgMinOperatorDesc) -> None:
    set_tensors(desc)
    struct = type(desc).__name__
    object.__setattr__(desc, "axes", ints_member(struct, "axes", desc.axes))
    object.__setattr__(desc, "axis_direction", direction_member(struct, desc.axis_direction))


def _top_k_row(level: FeatureLevel, dims: tuple[int, int]) -> MemberRow:
    data = FL2_1_DATA_TYPES
    return MemberRow(
        level,
        dims,
        (("input_tensor", data), ("output_value_tensor", data), ("output_index_tensor", (DataType.UINT32,))),
    )


# TOP_K1: introduced in DML_FEATURE_LEVEL_2_1 with 4 dimensions; 1 to 8 from 3.1.
TOP_K_SUPPORT = (_top_k_row(FeatureLevel.FL_2_1, (4, 4)), _top_k_row(FeatureLevel.FL_3_1, (1, MAX_DIMENSIONS)))
# ARGMIN/ARGMAX: introduced in 3.0, one table: 1 to 8 dimensions, four index types out.
ARG_REDUCE_SUPPORT = (
    MemberRow(
        FeatureLevel.FL_3_0,
        (1, MAX_DIMENSIONS),
        (("input_tensor", FL2_1_DATA_TYPES), ("output_tensor", FL3_0_INDEX_TYPES)),
    ),
)


def _validate_top_k(check: Check, row: MemberRow, desc: TopKOperatorDesc) -> None:
    tensors = check_member_row(check, row, desc)
    same(check, tensors, "output_value_tensor", "input_tensor", "dtype")
    sizes = desc.input_tensor.sizes
    check_axis(check, desc.axis, len(sizes))
    if not 1 <= desc.k <= sizes[desc.axis]:
        raise check.error("k", f"be in [1, {sizes[desc.axis]}] (input_tensor.sizes[axis])", desc.k)
    expected = sizes[: desc.axis] + (desc.k,) + sizes[desc.axis + 1 :]
    for member in ("output_value_tensor", "output_index_tensor"):
        if tensors[member].sizes != expected:
            rule = f"equal input_tensor.sizes with k along axis ({expected})"
            raise check.error(f"{member}.sizes", rule, tensors[member].sizes)
        check_output(check, member, tensors[member])


def _validate_arg(check: Check, row: MemberRow, desc: ArgMaxOperatorDesc) -> None:
    tensors = check_member_row(check, row, desc)
    sizes = desc.input_tensor.sizes
    for axis in desc.axes:
        check_axis(check, axis, len(sizes))
    if not desc.axes or len(set(desc.axes)) != len(desc.axes):
        raise check.error("axes", "name at least one axis, none twice", desc.axes)
    expected = tuple(1 if d in desc.axes else n for d, n in enumerate(sizes))
    if desc.output_tensor.sizes != expected:
        raise check.error(
            "output_tensor.sizes",
            f"equal input_tensor.sizes with 1 on each axis ({expected})",
            tensors["output_tensor"].sizes,
        )
    check_output(check, "output_tensor", desc.output_tensor)


def _apply_top_k(desc: TopKOperatorDesc, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    values, indices = top_k_validated(x, desc.k, desc.axis, desc.axis_direction is AxisDirection.DECREASING)
    return values, indices.astype(desc.output_index_tensor.dtype.dtype)


def _apply_argmax(desc: ArgMaxOperatorDesc, x: jax.Array) -> tuple[jax.Array]:
    last = desc.axis_direction is AxisDirection.DECREASING
    return (argmax_validated(x, tuple(sorted(desc.axes)), True, last).astype(desc.output_tensor.dtype.dtype),)


def _apply_argmin(desc: ArgMinOperatorDesc, x: jax.Array) -> tuple[jax.Array]:
    last = desc.axis_direction is AxisDirection.DECREASING
    return (argmin_validated(x, tuple(sorted(desc.axes)), True, last).astype(desc.output_tensor.dtype.dtype),)


TOP_K = register(Operator(TopKOperatorDesc, TOP_K_SUPPORT, _validate_top_k, ("input_tensor",), _apply_top_k))
ARGMAX = register(Operator(ArgMaxOperatorDesc, ARG_REDUCE_SUPPORT, _validate_arg, ("input_tensor",), _apply_argmax))
ARGMIN = register(Operator(ArgMinOperatorDesc, ARG_REDUCE_SUPPORT, _validate_arg, ("input_tensor",), _apply_argmin))
