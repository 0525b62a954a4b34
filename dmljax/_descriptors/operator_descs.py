"""DirectML operator descriptors (DML_*_OPERATOR_DESC) as frozen, hashable dataclasses.

One dataclass per DirectML struct, its members in snake_case and in the struct's order.
Construction checks only static, level-independent facts (every tensor is a `TensorDesc`,
``axis`` is an integer, window arrays are integer tuples); everything that depends on a
feature level or on several members at once is checked by `dmljax.compile_operator`
(`dmljax._descriptors.validate`), as DirectML's ``IDMLDevice::CompileOperator`` does.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.errors import fail

__all__ = [
    "GatherElementsOperatorDesc",
    "GatherOperatorDesc",
    "RandomGeneratorOperatorDesc",
    "RandomGeneratorType",
    "ScatterElementsOperatorDesc",
    "ScatterOperatorDesc",
    "Slice1OperatorDesc",
]


class RandomGeneratorType(enum.Enum):
    """DML_RANDOM_GENERATOR_TYPE: the generator of DML_RANDOM_GENERATOR_OPERATOR_DESC.

    DirectML defines one, Philox 4x32-10 (Salmon et al., SC'11, "Parallel random numbers: as
    easy as 1, 2, 3").
    """

    PHILOX_4X32_10 = 0

    def __repr__(self) -> str:
        return f"RandomGeneratorType.{self.name}"


def _tensor(struct: str, member: str, value: Any, optional: bool = False) -> TensorDesc | None:
    if value is None and optional:
        return None
    if not isinstance(value, TensorDesc):
        rule = "be a TensorDesc or None" if optional else "be a TensorDesc"
        raise TypeError(str(fail(struct, member, rule, value)))
    return value


def _uint(struct: str, member: str, value: Any) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(str(fail(struct, member, "be an integer", value)))
    return int(value)


def _ints(struct: str, member: str, values: Any) -> tuple[int, ...]:
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(str(fail(struct, member, "be a sequence of integers", values))) from None
    return tuple(_uint(struct, f"{member}[{i}]", item) for i, item in enumerate(items))


def _set_tensors(desc: Any, *optional: str) -> None:
    """Check every ``*_tensor`` member of a descriptor (the named ones may be None)."""
    struct = type(desc).__name__
    for field in dataclasses.fields(desc):
        if field.name.endswith("_tensor"):
            _tensor(struct, field.name, getattr(desc, field.name), field.name in optional)


@dataclasses.dataclass(frozen=True)
class ScatterOperatorDesc:
    """DML_SCATTER_OPERATOR_DESC (alias DML_SCATTER_ELEMENTS_OPERATOR_DESC).

    ``output = input``, then ``output[p with p[axis] := indices[p]] = updates[p]`` for every
    coordinate ``p`` of ``indices``; semantics from `dmljax.scatter`.

    Attributes:
      input_tensor: the tensor copied to the output.
      indices_tensor: positions along ``axis``; input's sizes except along ``axis``.
      updates_tensor: the values written; indices' sizes, input's data type.
      output_tensor: input's sizes and data type.
      axis: the axis to scatter along, in ``[0, DimensionCount)``.

    Examples:
      >>> t = TensorDesc("float32", (5,))
      >>> i = TensorDesc("uint32", (4,))
      >>> ScatterOperatorDesc(t, i, TensorDesc("float32", (4,)), t, axis=0).axis
      0
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    updates_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    def __post_init__(self) -> None:
        _set_tensors(self)
        object.__setattr__(self, "axis", _uint(type(self).__name__, "axis", self.axis))


ScatterElementsOperatorDesc = ScatterOperatorDesc


@dataclasses.dataclass(frozen=True)
class GatherOperatorDesc:
    """DML_GATHER_OPERATOR_DESC: gather slices along ``axis``, with ``index_dimensions``.

    Every tensor has the same dimension count. Only the last ``index_dimensions`` sizes of
    ``indices_tensor`` hold indices (the leading ones are 1). The output sizes are
    ``input.sizes[:axis] + indices.sizes[-index_dimensions:] + input.sizes[axis + 1:]``,
    right-aligned to the dimension count (leading 1s cropped or added). Semantics from
    `dmljax.gather` (ONNX Gather) on the indices' last ``index_dimensions`` dimensions.

    Attributes:
      input_tensor: the tensor to read from.
      indices_tensor: the indices, same dimension count as the input.
      output_tensor: the result; input's data type.
      axis: the axis of the input to gather along, in ``[0, DimensionCount)``.
      index_dimensions: how many trailing dimensions of the indices are meaningful.

    Examples:
      >>> d = GatherOperatorDesc(
      ...     TensorDesc("float32", (4,)), TensorDesc("uint32", (5,)), TensorDesc("float32", (5,)), 0, 1)
      >>> d.index_dimensions
      1
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int
    index_dimensions: int

    def __post_init__(self) -> None:
        _set_tensors(self)
        struct = type(self).__name__
        object.__setattr__(self, "axis", _uint(struct, "axis", self.axis))
        object.__setattr__(self, "index_dimensions", _uint(struct, "index_dimensions", self.index_dimensions))


@dataclasses.dataclass(frozen=True)
class GatherElementsOperatorDesc:
    """DML_GATHER_ELEMENTS_OPERATOR_DESC: ``output[p] = input[p with p[axis] := indices[p]]``.

    Semantics from `dmljax.gather_elements`, the inverse of `ScatterOperatorDesc`.

    Attributes:
      input_tensor: the tensor to read from.
      indices_tensor: positions along ``axis``; input's sizes except along ``axis``.
      output_tensor: indices' sizes, input's data type.
      axis: the axis to gather along, in ``[0, DimensionCount)``.
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int

    def __post_init__(self) -> None:
        _set_tensors(self)
        object.__setattr__(self, "axis", _uint(type(self).__name__, "axis", self.axis))


@dataclasses.dataclass(frozen=True)
class Slice1OperatorDesc:
    """DML_SLICE1_OPERATOR_DESC: a strided window, strides may be negative.

    DirectML's ``DimensionCount`` member is the length of the three window tuples.
    Semantics from `dmljax.slice1`, with the output tensor's sizes as output sizes.

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
        _set_tensors(self)
        struct = type(self).__name__
        for member in ("input_window_offsets", "input_window_sizes", "input_window_strides"):
            object.__setattr__(self, member, _ints(struct, member, getattr(self, member)))

    @property
    def dimension_count(self) -> int:
        """DirectML's ``DimensionCount``: the length of the window tuples."""
        return len(self.input_window_offsets)


@dataclasses.dataclass(frozen=True)
class RandomGeneratorOperatorDesc:
    """DML_RANDOM_GENERATOR_OPERATOR_DESC: Philox 4x32-10 bits from a 6-word state.

    Semantics from `dmljax.random_generator`: output element ``n`` is word ``n % 4`` of the
    block at ``counter + n // 4``; the output state is the counter advanced by
    ``ceil(element_count / 4)``, key unchanged.

    Attributes:
      input_state_tensor: UINT32 ``{1, 1, 1, 6}`` (any leading 1s from feature level 4.0).
      output_tensor: UINT32, any sizes.
      output_state_tensor: optional, the input state's sizes; ``None`` to skip it.
      type: the generator, `RandomGeneratorType.PHILOX_4X32_10`.
    """

    input_state_tensor: TensorDesc
    output_tensor: TensorDesc
    output_state_tensor: TensorDesc | None = None
    type: RandomGeneratorType = RandomGeneratorType.PHILOX_4X32_10

    def __post_init__(self) -> None:
        _set_tensors(self, "output_state_tensor")
        if not isinstance(self.type, RandomGeneratorType):
            names = ", ".join(repr(t) for t in RandomGeneratorType)
            raise TypeError(str(fail(type(self).__name__, "type", f"be one of {names}", self.type)))
