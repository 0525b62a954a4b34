"""DML_RANDOM_GENERATOR_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_random_generator_operator_desc
Semantics: `dmljax.random.random_generator` (Philox 4x32-10 from a 6-word state).
"""

from __future__ import annotations

import dataclasses
import enum

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, MAX_TENSOR_ELEMENTS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.validate import Check, check_output, check_tensor, same, tensors_of
from dmljax._random.generator import STATE_WORDS, random_generator_validated

__all__ = [
    "RANDOM_GENERATOR_SUPPORT",
    "RandomGeneratorOperatorDesc",
    "RandomGeneratorSupport",
    "RandomGeneratorType",
]


class RandomGeneratorType(enum.Enum):
    """DML_RANDOM_GENERATOR_TYPE: the generator of DML_RANDOM_GENERATOR_OPERATOR_DESC.

    DirectML defines one, Philox 4x32-10 (Salmon et al., SC'11, "Parallel random numbers: as
    easy as 1, 2, 3").
    """

    PHILOX_4X32_10 = 0

    def __repr__(self) -> str:
        return f"RandomGeneratorType.{self.name}"


@dataclasses.dataclass(frozen=True)
class RandomGeneratorOperatorDesc:
    """DML_RANDOM_GENERATOR_OPERATOR_DESC: Philox 4x32-10 bits from a 6-word state.

    Semantics from `dmljax.random.random_generator`: output element ``n`` is word ``n % 4`` of the
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
        set_tensors(self, "output_state_tensor")
        if not isinstance(self.type, RandomGeneratorType):
            names = ", ".join(repr(t) for t in RandomGeneratorType)
            raise TypeError(str(fail(type(self).__name__, "type", f"be one of {names}", self.type)))


@dataclasses.dataclass(frozen=True)
class RandomGeneratorSupport:
    """What DML_RANDOM_GENERATOR accepts from one feature level on (the struct's "tensor support").

    Attributes:
      level: the first feature level this row applies to.
      state_dimension_counts: allowed DimensionCount of InputStateTensor and
        OutputStateTensor; their sizes are 1 in every dimension but the last, which is 6.
      output_dimension_counts: allowed DimensionCount of OutputTensor (any sizes).
      data_types: the one data type of all three tensors.
    """

    level: FeatureLevel
    state_dimension_counts: tuple[int, ...]
    output_dimension_counts: tuple[int, ...]
    data_types: tuple[DataType, ...] = (DataType.UINT32,)


# {1,1,1,6} states and 4-D outputs at 3.0; 1 to 8 dimensions from 4.0.
RANDOM_GENERATOR_SUPPORT = (
    RandomGeneratorSupport(FeatureLevel.FL_3_0, state_dimension_counts=(4,), output_dimension_counts=(4,)),
    RandomGeneratorSupport(
        FeatureLevel.FL_4_0,
        state_dimension_counts=tuple(range(1, MAX_DIMENSIONS + 1)),
        output_dimension_counts=tuple(range(1, MAX_DIMENSIONS + 1)),
    ),
)


def _validate(check: Check, row: RandomGeneratorSupport, desc: RandomGeneratorOperatorDesc) -> None:
    state, output, output_state = desc.input_state_tensor, desc.output_tensor, desc.output_state_tensor
    check_tensor(check, "input_state_tensor", state, row.state_dimension_counts, row.data_types)
    check_tensor(check, "output_tensor", output, row.output_dimension_counts, row.data_types)
    if output_state is not None:
        check_tensor(check, "output_state_tensor", output_state, row.state_dimension_counts, row.data_types)
    expected = (1,) * (state.dimension_count - 1) + (STATE_WORDS,)
    if state.sizes != expected:
        rule = f"be {expected} (leading 1s, then {STATE_WORDS} UINT32 words: 128-bit counter, 64-bit key)"
        raise check.error("input_state_tensor.sizes", rule, state.sizes)
    if output.element_count > MAX_TENSOR_ELEMENTS:
        rule = f"have at most {MAX_TENSOR_ELEMENTS} elements"
        raise check.error("output_tensor.sizes", rule, output.sizes, f"{output.element_count} elements")
    check_output(check, "output_tensor", output)
    if output_state is not None:
        same(check, tensors_of(desc), "output_state_tensor", "input_state_tensor", "sizes")
        check_output(check, "output_state_tensor", output_state)


def _apply(desc: RandomGeneratorOperatorDesc, state: jax.Array) -> tuple[jax.Array, jax.Array]:
    return random_generator_validated(state, desc.output_tensor.sizes)


RANDOM_GENERATOR = register(
    Operator(RandomGeneratorOperatorDesc, RANDOM_GENERATOR_SUPPORT, _validate, ("input_state_tensor",), _apply)
)
