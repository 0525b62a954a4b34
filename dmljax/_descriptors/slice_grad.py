"""DML_SLICE_GRAD_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_slice_grad_operator_desc
Semantics: `dmljax.slice_grad`; the window rules are Slice1's.
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.slice1 import check_window_members, set_window_members
from dmljax._descriptors.support import FL2_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_output, check_row, same, tensors_of
from dmljax._ops.index.slice_grad import slice_grad_validated

__all__ = ["SLICE_GRAD_SUPPORT", "SliceGradOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class SliceGradOperatorDesc:
    """DML_SLICE_GRAD_OPERATOR_DESC: Slice1's gradient, zero where the window does not read.

    DirectML's ``DimensionCount`` is the length of the window tuples. Semantics from
    `dmljax.slice_grad`.

    Attributes:
      input_gradient_tensor: the gradient of Slice1's output (its sizes).
      output_gradient_tensor: the gradient of Slice1's input (its sizes), the same type.
      input_window_offsets: as in `Slice1OperatorDesc`.
      input_window_sizes: as in `Slice1OperatorDesc`.
      input_window_strides: as in `Slice1OperatorDesc`: nonzero, may be negative.
    """

    input_gradient_tensor: TensorDesc
    output_gradient_tensor: TensorDesc
    input_window_offsets: tuple[int, ...]
    input_window_sizes: tuple[int, ...]
    input_window_strides: tuple[int, ...]

    def __post_init__(self) -> None:
        set_window_members(self)

    @property
    def dimension_count(self) -> int:
        """DirectML's ``DimensionCount``: the length of the window tuples."""
        return len(self.input_window_offsets)


# The page's "tensor support" table: introduced in 3.0, 1 to 8 dimensions, 32/16/8-bit types.
SLICE_GRAD_SUPPORT = (SupportRow(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES),)


def _validate(check: Check, row: SupportRow, desc: SliceGradOperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_row(check, row, tensors)
    same(check, tensors, "output_gradient_tensor", "input_gradient_tensor", "dtype")
    same(check, tensors, "output_gradient_tensor", "input_gradient_tensor", "dimension_count")
    check_window_members(check, desc, "output_gradient_tensor", "input_gradient_tensor")
    check_output(check, "output_gradient_tensor", desc.output_gradient_tensor)


def _apply(desc: SliceGradOperatorDesc, gradient: jax.Array) -> tuple[jax.Array]:
    window = (desc.input_window_offsets, desc.input_window_sizes, desc.input_window_strides)
    return (slice_grad_validated(gradient, desc.output_gradient_tensor.sizes, *window),)


SLICE_GRAD = register(
    Operator(SliceGradOperatorDesc, SLICE_GRAD_SUPPORT, _validate, ("input_gradient_tensor",), _apply)
)
