"""DML_NONZERO_COORDINATES_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_nonzero_coordinates_operator_desc
Semantics: `dmljax.nonzero_coordinates`.
"""

from __future__ import annotations

import dataclasses
import math

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._descriptors.axis_direction import MemberRow, check_member_row
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL2_1_DATA_TYPES
from dmljax._descriptors.validate import Check, check_output
from dmljax._ops.selection.nonzero import nonzero_coordinates_validated

__all__ = ["NONZERO_COORDINATES_SUPPORT", "NonzeroCoordinatesOperatorDesc"]


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


def _apply_nonzero(desc: NonzeroCoordinatesOperatorDesc, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    count, coordinates = nonzero_coordinates_validated(x)
    columns = desc.output_coordinates_tensor.sizes[-1]
    return count.astype(DataType.UINT32.dtype), coordinates[:, x.ndim - columns :].astype(DataType.UINT32.dtype)


NONZERO_COORDINATES = register(
    Operator(
        NonzeroCoordinatesOperatorDesc,
        NONZERO_COORDINATES_SUPPORT,
        _validate_nonzero,
        ("input_tensor",),
        _apply_nonzero,
    )
)
