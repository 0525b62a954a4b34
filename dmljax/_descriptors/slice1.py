"""DML_SLICE1_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_slice1_operator_desc
Semantics: `dmljax.slice`, with the output tensor's sizes as output sizes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import ints_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import (
    FL2_1_DATA_TYPES,
    FL4_1_DATA_TYPES,
    SupportRow,
)
from dmljax._descriptors.validate import Check, check_output, check_row, same, tensors_of
from dmljax._ops.index.slice1 import check_window_rules, slice1_validated

__all__ = ["SLICE1_SUPPORT", "Slice1OperatorDesc"]


@dataclasses.dataclass(frozen=True)
class Slice1OperatorDesc:
    """DML_SLICE1_OPERATOR_DESC: a strided window, strides may be negative.

    DirectML's ``DimensionCount`` member is the length of the three window tuples.
    Semantics from `dmljax.slice`, with the output tensor's sizes as output sizes.

    Attributes:
      input_tensor: the tensor to slice.
      output_tensor: the result; input's data type and dimension count.
      input_window_offsets: window start per dimension (UINT: 0 to 2^32 - 1).
      input_window_sizes: window extent per dimension (UINT, >= 1, inside the input).
      input_window_strides: nonzero step per dimension (INT: -2^31 to 2^31 - 1); negative
        copies from the window's end.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    input_window_offsets: tuple[int, ...]
    input_window_sizes: tuple[int, ...]
    input_window_strides: tuple[int, ...]

    def __post_init__(self) -> None:
        set_window_members(self)

    @property
    def dimension_count(self) -> int:
        """DirectML's ``DimensionCount``: the length of the window tuples."""
        return len(self.input_window_offsets)


# The struct's "tensor support" tables: introduced in 2.1 with 4 or 5 dimensions; 1 to 8
# from 3.0; 64-bit types from 4.1. No indices tensor.
SLICE1_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_1, (4, 5), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, MAX_DIMENSIONS), FL4_1_DATA_TYPES),
)

# The window members named by the rules of `dmljax._ops.index.slice1.check_window_rules`
# (``output_sizes``: the windowed tensor's sizes, `check_window_members`).
_WINDOW_MEMBERS = {
    "offsets": "input_window_offsets",
    "sizes": "input_window_sizes",
    "strides": "input_window_strides",
}


def _validate(check: Check, row: SupportRow, desc: Slice1OperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_row(check, row, tensors)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    same(check, tensors, "output_tensor", "input_tensor", "dimension_count")
    check_window_members(check, desc, "input_tensor", "output_tensor")
    check_output(check, "output_tensor", desc.output_tensor)


def set_window_members(desc: Any) -> None:
    """A struct's tensor members, then its ``input_window_*`` members as tuples of ints (Slice1, SliceGrad)."""
    set_tensors(desc)
    struct = type(desc).__name__
    for member in ("input_window_offsets", "input_window_sizes", "input_window_strides"):
        object.__setattr__(desc, member, ints_member(struct, member, getattr(desc, member)))


def check_window_members(check: Check, desc: Any, data: str, windowed: str) -> None:
    """Slice1's window rules on a struct's ``input_window_*`` members (Slice1, SliceGrad):
    one entry per dimension, then `check_window_rules` for the window of tensor member
    ``data`` whose sizes are tensor member ``windowed``'s."""
    count = getattr(desc, data).dimension_count
    for member in ("input_window_offsets", "input_window_sizes", "input_window_strides"):
        if len(getattr(desc, member)) != count:
            raise check.error(member, f"have one entry per dimension ({count})", getattr(desc, member))
    window = (desc.input_window_offsets, desc.input_window_sizes, desc.input_window_strides)
    members = {**_WINDOW_MEMBERS, "output_sizes": f"{windowed}.sizes"}
    shape, sizes = getattr(desc, data).sizes, getattr(desc, windowed).sizes
    check_window_rules(shape, *window, sizes, check.error, members, f"{data}.sizes")


def _apply(desc: Slice1OperatorDesc, data: jax.Array) -> tuple[jax.Array]:
    window = (desc.input_window_offsets, desc.input_window_sizes, desc.input_window_strides)
    return (slice1_validated(data, *window, desc.output_tensor.sizes),)


SLICE1 = register(Operator(Slice1OperatorDesc, SLICE1_SUPPORT, _validate, ("input_tensor",), _apply))
