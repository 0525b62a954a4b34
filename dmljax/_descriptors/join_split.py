"""DML_JOIN_OPERATOR_DESC and DML_SPLIT_OPERATOR_DESC: structs, support table, rules, registered.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_join_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_split_operator_desc
Semantics: `dmljax.concatenate`, `dmljax.split_tensor`. ``InputCount``/``OutputCount`` are the
lengths of the tensor tuples; the compiled operator takes (Join) or returns (Split) one
buffer per tensor, in order.
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL1_0_DATA_TYPES, FL2_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_axis, check_output, check_row, same, tensors_of
from dmljax._ops.movement.join_split import join_validated, split_validated

__all__ = ["JOIN_SPLIT_SUPPORT", "JoinOperatorDesc", "SplitOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class JoinOperatorDesc:
    """DML_JOIN_OPERATOR_DESC: the inputs one after the other along ``axis``.

    Semantics from `dmljax.concatenate`.

    Attributes:
      input_tensors: one or more tensors (``InputCount``), one type and dimension count,
        the same sizes but along ``axis``.
      output_tensor: their sizes along ``axis`` summed, the others theirs.
      axis: in ``[0, dimension count)``.
    """

    input_tensors: tuple[TensorDesc, ...]
    output_tensor: TensorDesc
    axis: int

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "axis", int_member(type(self).__name__, "axis", self.axis))


@dataclasses.dataclass(frozen=True)
class SplitOperatorDesc:
    """DML_SPLIT_OPERATOR_DESC: consecutive pieces of the input along ``axis``.

    Semantics from `dmljax.split_tensor`, with the outputs' sizes along ``axis`` as the pieces.

    Attributes:
      input_tensor: the tensor to split.
      output_tensors: one or more tensors (``OutputCount``), the input's type and sizes but
        along ``axis``, where theirs add up to the input's.
      axis: in ``[0, dimension count)``.
    """

    input_tensor: TensorDesc
    output_tensors: tuple[TensorDesc, ...]
    axis: int

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "axis", int_member(type(self).__name__, "axis", self.axis))


# DML_JOIN's "tensor support" tables (the stored page; DML_SPLIT's page lists none, so it
# shares them): 1.0 4 dimensions, floats and 32/16-bit integers; 2.1 + 8-bit integers;
# 3.0 4 to 5 dimensions. Later rows (more dimensions, 64-bit types) are not on that page.
FL1_0_JOIN_TYPES = (*FL1_0_DATA_TYPES, *(DataType[n] for n in "INT32 INT16 UINT32 UINT16".split()))
JOIN_SPLIT_SUPPORT = (
    SupportRow(FeatureLevel.FL_1_0, (4, 4), FL1_0_JOIN_TYPES),
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_3_0, (4, 5), FL2_1_DATA_TYPES),
)


def _validate(check: Check, row: SupportRow, desc: JoinOperatorDesc | SplitOperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_row(check, row, tensors)
    if isinstance(desc, JoinOperatorDesc):
        whole, pieces, names = "output_tensor", desc.input_tensors, "input_tensors"
    else:
        whole, pieces, names = "input_tensor", desc.output_tensors, "output_tensors"
    for member in tensors:
        if member != whole:
            same(check, tensors, member, whole, "dtype")
            same(check, tensors, member, whole, "dimension_count")
    sizes, axis = tensors[whole].sizes, desc.axis
    check_axis(check, axis, len(sizes))
    for i, piece in enumerate(pieces):
        for d, (a, b) in enumerate(zip(piece.sizes, sizes, strict=True)):
            if d != axis and a != b:
                raise check.error(f"{names}[{i}].sizes[{d}]", f"equal {whole}.sizes[{d}] ({b})", a)
    total = sum(piece.sizes[axis] for piece in pieces)
    if total != sizes[axis]:
        rule = f"add up to {whole}.sizes[{axis}] ({sizes[axis]}) along axis {axis}"
        raise check.error(f"{names}.sizes", rule, tuple(piece.sizes[axis] for piece in pieces))
    for member in tensors:
        if member.startswith("output"):
            check_output(check, member, tensors[member])


def _join(desc: JoinOperatorDesc, *arrays: jax.Array) -> tuple[jax.Array]:
    return (join_validated(arrays, desc.axis),)


def _split(desc: SplitOperatorDesc, data: jax.Array) -> tuple[jax.Array, ...]:
    return split_validated(data, tuple(t.sizes[desc.axis] for t in desc.output_tensors), desc.axis)


JOIN = register(Operator(JoinOperatorDesc, JOIN_SPLIT_SUPPORT, _validate, ("input_tensors",), _join))
SPLIT = register(Operator(SplitOperatorDesc, JOIN_SPLIT_SUPPORT, _validate, ("input_tensor",), _split))
