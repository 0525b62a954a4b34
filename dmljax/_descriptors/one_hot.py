"""DML_ONE_HOT_OPERATOR_DESC and DML_NONZERO_COORDINATES_OPERATOR_DESC: structs, tables, rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_one_hot_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_nonzero_coordinates_operator_desc
Semantics: `dmljax.one_hot`, `dmljax.nonzero_coordinates`.
"""

from __future__ import annotations

import dataclasses
import math

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
from dmljax._ops.nonzero import nonzero_coordinates
from dmljax._ops.one_hot import one_hot

__all__ = ["NONZERO_COORDINATES_SUPPORT", "NonzeroCoordinatesOperatorDesc", "ONE_HOT_SUPPORT", "OneHotOperatorDesc"]


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


@dataclasses.dataclass(frozen=True)
class NonzeroCoordinatesOperatorDesc:
    """DML_NONZERO_COORDINATES_OPERATOR_DESC: the count and coordinates of the non-zero elements.

    Semantics from `dmljax.nonzero_coordinates`; the coordinates tensor's ``N`` columns
    hold the last ``N`` coordinates (the leading ones of size-1 dimensions are 0), and its
    rows past the count hold 0.

    Attributes:
      input_tensor: the tensor to search.
      output_count_tensor: sizes all 1, UINT32.
      output_coordinates_tensor: ``{1, .., 1, M, N}``, UINT32: ``M`` the input's element
        count, ``N`` from its effective rank (no leading 1s) to its dimension count.
    """

    input_tensor: TensorDesc
    output_count_tensor: TensorDesc
    output_coordinates_tensor: TensorDesc

    def __post_init__(self) -> None:
        set_tensors(self)


def _one_hot_row(level: FeatureLevel, dims: tuple[int, int], index: tuple, data: tuple) -> MemberRow:
    return MemberRow(level, dims, (("indices_tensor", index), ("values_tensor", data), ("output_tensor", data)))


# ONE_HOT: introduced in DML_FEATURE_LEVEL_2_0 (4 dimensions, floats, UINT32 indices);
# 2.1 adds the integer data types; 3.0: 1 to 8 dimensions and the four index types.
ONE_HOT_SUPPORT = (
    _one_hot_row(FeatureLevel.FL_2_0, (4, 4), (DataType.UINT32,), FL1_0_DATA_TYPES),
    _one_hot_row(FeatureLevel.FL_2_1, (4, 4), (DataType.UINT32,), FL2_1_DATA_TYPES),
    _one_hot_row(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL3_0_INDEX_TYPES, FL2_1_DATA_TYPES),
)
# NONZERO_COORDINATES: introduced in 3.0, one table: 4 or 5 dimensions.
NONZERO_COORDINATES_SUPPORT = (
    MemberRow(
        FeatureLevel.FL_3_0,
        (4, 5),
        (
            ("input_tensor", FL2_1_DATA_TYPES),
            ("output_count_tensor", (DataType.UINT32,)),
            ("output_coordinates_tensor", (DataType.UINT32,)),
        ),
    ),
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


def _validate_nonzero(check: Check, row: MemberRow, desc: NonzeroCoordinatesOperatorDesc) -> None:
    check_member_row(check, row, desc)
    sizes = desc.input_tensor.sizes
    if any(n != 1 for n in desc.output_count_tensor.sizes):
        raise check.error("output_count_tensor.sizes", "be all 1 (a scalar)", desc.output_count_tensor.sizes)
    effective = len(sizes) - next((i for i, n in enumerate(sizes) if n != 1), len(sizes))
    *ones, m, n = desc.output_coordinates_tensor.sizes
    if any(one != 1 for one in ones) or m != math.prod(sizes) or not effective <= n <= len(sizes):
        rule = f"be {{1, .., 1, {math.prod(sizes)}, N}} with N in [{effective}, {len(sizes)}]"
        raise check.error("output_coordinates_tensor.sizes", rule, desc.output_coordinates_tensor.sizes)
    for member in ("output_count_tensor", "output_coordinates_tensor"):
        check_output(check, member, getattr(desc, member))


def _apply_one_hot(desc: OneHotOperatorDesc, indices: jax.Array, values: jax.Array) -> tuple[jax.Array]:
    depth = desc.output_tensor.sizes[desc.axis]
    off_on = values.reshape(-1)[:2]  # element 1 along the fastest-changing dimension of size > 1
    return (one_hot(jnp.squeeze(indices, desc.axis), depth, values=off_on, axis=desc.axis),)


def _apply_nonzero(desc: NonzeroCoordinatesOperatorDesc, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    count, coordinates = nonzero_coordinates(x)
    columns = desc.output_coordinates_tensor.sizes[-1]
    return count.astype(DataType.UINT32.dtype), coordinates[:, x.ndim - columns :].astype(DataType.UINT32.dtype)


ONE_HOT = register(
    Operator(
        OneHotOperatorDesc, ONE_HOT_SUPPORT, _validate_one_hot, ("indices_tensor", "values_tensor"), _apply_one_hot
    )
)
NONZERO_COORDINATES = register(
    Operator(
        NonzeroCoordinatesOperatorDesc,
        NONZERO_COORDINATES_SUPPORT,
        _validate_nonzero,
        ("input_tensor",),
        _apply_nonzero,
    )
)
