"""DML_GATHER_ND1 and DML_SCATTER_ND: the structs, their support tables, their rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_gather_nd1_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_scatter_nd_operator_desc
Semantics: `dmljax.gather_nd` (ONNX GatherND) and `dmljax.scatter_nd` (ONNX ScatterND,
``reduction="none"``) on the meaningful trailing dimensions of each tensor.

Where the pages contradict themselves, dmljax follows their examples: the trailing input
segment of the output (updates) sizes starts after the batch and indexed dimensions (the
formula's ``InputTensor.DimensionCount - indexTupleSize`` would keep the indexed ones), and
ScatterND's dimension counts range over ``[1, DimensionCount]`` (the page's half-open
range would exclude its own 1-D example).
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES, FL4_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_indexed_tensors, check_output, same, tensors_of
from dmljax._ops.index.nd import gather_nd_validated, scatter_nd_validated

__all__ = ["GATHER_ND_SUPPORT", "SCATTER_ND_SUPPORT", "GatherNDOperatorDesc", "ScatterNDOperatorDesc", "right_aligned"]


@dataclasses.dataclass(frozen=True)
class GatherNDOperatorDesc:
    """DML_GATHER_ND1_OPERATOR_DESC: ``output[batch, ...] = input[batch, indices[batch, ...], ...]``.

    Every tensor has the same dimension count; only the last ``input_dimension_count`` sizes
    of the input and the last ``indices_dimension_count`` sizes of the indices are meaningful
    (the leading ones are 1). On those logical tensors, semantics from `dmljax.gather_nd`
    (ONNX GatherND) with ``batch_dims = batch_dimension_count``: the output sizes are
    ``indices[:-1] + input[batch + k:]`` (``k = indices.sizes[-1]``, the tuple size),
    right-aligned to the dimension count (leading 1s cropped or added).
    ``batch_dimension_count = 0`` is DML_GATHER_ND_OPERATOR_DESC.

    Attributes:
      input_tensor: the tensor to read from.
      indices_tensor: index tuples along its last dimension; input's dimension count.
      output_tensor: the result; input's dimension count and data type.
      input_dimension_count: meaningful trailing input dimensions, in ``[1, DimensionCount]``.
      indices_dimension_count: meaningful trailing indices dimensions, in ``[1, DimensionCount]``.
      batch_dimension_count: leading meaningful dimensions shared by input, indices and
        output as independent batches, in ``[0, min(input_dimension_count, indices_dimension_count))``.

    Examples:
      >>> d = GatherNDOperatorDesc(
      ...     TensorDesc("float32", (1, 3, 2, 2)), TensorDesc("uint32", (1, 3, 2, 2)),
      ...     TensorDesc("float32", (1, 1, 3, 2)), 3, 3, 1)  # the page's example 2
      >>> d.batch_dimension_count
      1
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    input_dimension_count: int
    indices_dimension_count: int
    batch_dimension_count: int = 0

    def __post_init__(self) -> None:
        _set_counts(self, "input_dimension_count", "indices_dimension_count", "batch_dimension_count")


@dataclasses.dataclass(frozen=True)
class ScatterNDOperatorDesc:
    """DML_SCATTER_ND_OPERATOR_DESC: ``output = input; output[indices[...]] = updates[...]``.

    Every tensor has the same dimension count; only the last ``input_dimension_count`` sizes
    of the input and the last ``indices_dimension_count`` sizes of the indices are meaningful
    (the leading ones are 1). On those logical tensors, semantics from `dmljax.scatter_nd`
    (ONNX ScatterND without a reduction): ``updates`` holds ``indices[:-1] + input[k:]``
    right-aligned to the dimension count (``k = indices.sizes[-1]``). Duplicate index tuples
    are invalid: DirectML leaves unspecified which update wins, and so does dmljax.

    Attributes:
      input_tensor: the tensor copied to the output.
      indices_tensor: index tuples along its last dimension; input's dimension count.
      updates_tensor: the slices written; input's dimension count and data type.
      output_tensor: input's sizes and data type.
      input_dimension_count: meaningful trailing input dimensions, in ``[1, DimensionCount]``.
      indices_dimension_count: meaningful trailing indices dimensions, in ``[1, DimensionCount]``.

    Examples:
      >>> x, i, u = TensorDesc("float32", (1, 8)), TensorDesc("uint32", (4, 1)), TensorDesc("float32", (1, 4))
      >>> ScatterNDOperatorDesc(x, i, u, x, 1, 2).indices_dimension_count  # indices {4,1}: four 1-tuples
      2
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    updates_tensor: TensorDesc
    output_tensor: TensorDesc
    input_dimension_count: int
    indices_dimension_count: int

    def __post_init__(self) -> None:
        _set_counts(self, "input_dimension_count", "indices_dimension_count")


def _set_counts(desc: object, *members: str) -> None:
    set_tensors(desc)
    for member in members:
        object.__setattr__(desc, member, int_member(type(desc).__name__, member, getattr(desc, member)))


# The structs' "tensor support" tables. GatherND1: introduced in DML_FEATURE_LEVEL_3_0 (GatherND,
# its batch-less predecessor, in 2.1); ScatterND: introduced in DML_FEATURE_LEVEL_2_1, 4-D only
# with UINT32 indices until 3.0. Both add the 64-bit data types in 4.1.
GATHER_ND_SUPPORT = (
    SupportRow(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, MAX_DIMENSIONS), FL4_1_DATA_TYPES, FL3_0_INDEX_TYPES),
)
SCATTER_ND_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, MAX_DIMENSIONS), FL4_1_DATA_TYPES, FL3_0_INDEX_TYPES),
)


def right_aligned(sizes: tuple[int, ...], count: int) -> tuple[int, ...] | None:
    """``sizes`` in ``count`` dimensions: leading 1s added or cropped; None if they do not fit.

    Examples:
      >>> right_aligned((2, 6, 7), 5)
      (1, 1, 2, 6, 7)
      >>> right_aligned((1, 1, 3), 2)
      (1, 3)
      >>> right_aligned((2, 3, 4), 2) is None
      True
    """
    excess = len(sizes) - count
    if excess > 0 and any(size != 1 for size in sizes[:excess]):
        return None
    return sizes[excess:] if excess > 0 else (1,) * -excess + sizes


def _logical(
    check: Check, row: SupportRow, desc: object, tensors: dict[str, TensorDesc]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The rules both structs share; the meaningful input and indices sizes."""
    check_indexed_tensors(check, row, tensors)
    check_output(check, "output_tensor", tensors["output_tensor"])
    count = tensors["input_tensor"].dimension_count
    shapes = []
    for tensor in ("input", "indices"):
        member, sizes = f"{tensor}_dimension_count", tensors[f"{tensor}_tensor"].sizes
        meaningful = getattr(desc, member)
        if not 1 <= meaningful <= count:
            raise check.error(member, f"be in [1, {count}] ({tensor}_tensor.dimension_count)", meaningful)
        if any(size != 1 for size in sizes[: count - meaningful]):
            rule = f"be 1 before the last {member} ({meaningful}) sizes"
            raise check.error(f"{tensor}_tensor.sizes", rule, sizes)
        shapes.append(sizes[count - meaningful :])
    return shapes[0], shapes[1]


def _check_tuple(check: Check, data: tuple[int, ...], index: tuple[int, ...], batch: int | None) -> int:
    """The tuple size ``k = indices.sizes[-1]``: one index per meaningful input dimension after the batches."""
    k, high = index[-1], len(data) - (batch or 0)
    bound = "input_dimension_count" if batch is None else "input_dimension_count - batch_dimension_count"
    if not 1 <= k <= high:
        rule = f"be in [1, {high}] ({bound}: one index per dimension)"
        raise check.error("indices_tensor.sizes[-1]", rule, k, f"meaningful input sizes {data}")
    return k


def _check_sizes(check: Check, member: str, tensor: TensorDesc, logical: tuple[int, ...], rule: str) -> None:
    expected = right_aligned(logical, tensor.dimension_count)
    if expected is None:
        fit = f"hold {logical} once leading 1s are cropped ({rule})"
        raise check.error(f"{member}.dimension_count", fit, tensor.dimension_count)
    if tensor.sizes != expected:
        raise check.error(f"{member}.sizes", f"equal {expected} ({rule}, right-aligned)", tensor.sizes)


def _validate_gather(check: Check, row: SupportRow, desc: GatherNDOperatorDesc) -> None:
    data, index = _logical(check, row, desc, tensors_of(desc))
    batch, high = desc.batch_dimension_count, min(desc.input_dimension_count, desc.indices_dimension_count)
    if not 0 <= batch < high:
        rule = f"be in [0, {high}) (min of input_dimension_count and indices_dimension_count)"
        raise check.error("batch_dimension_count", rule, batch)
    for d in range(batch):
        if index[d] != data[d]:
            rule = f"equal the input's batch sizes {data[:batch]}"
            raise check.error("indices_tensor.sizes", rule, desc.indices_tensor.sizes, "a batch dimension differs")
    k = _check_tuple(check, data, index, batch)
    rule = "the indices' sizes but the last, then the input's after the batch and indexed ones"
    _check_sizes(check, "output_tensor", desc.output_tensor, index[:-1] + data[batch + k :], rule)


def _validate_scatter(check: Check, row: SupportRow, desc: ScatterNDOperatorDesc) -> None:
    tensors = tensors_of(desc)
    data, index = _logical(check, row, desc, tensors)
    k = _check_tuple(check, data, index, None)
    rule = "the indices' sizes but the last, then the input's after the indexed ones"
    _check_sizes(check, "updates_tensor", desc.updates_tensor, index[:-1] + data[k:], rule)
    same(check, tensors, "output_tensor", "input_tensor", "sizes")


def _shapes(desc: GatherNDOperatorDesc | ScatterNDOperatorDesc) -> tuple[tuple[int, ...], tuple[int, ...]]:
    count = desc.input_tensor.dimension_count
    return (
        desc.input_tensor.sizes[count - desc.input_dimension_count :],
        desc.indices_tensor.sizes[count - desc.indices_dimension_count :],
    )


def _apply_gather(desc: GatherNDOperatorDesc, data: jax.Array, indices: jax.Array) -> tuple[jax.Array]:
    """DML_GATHER_ND1 as ONNX `gather_nd` on the meaningful dimensions."""
    data_shape, index_shape = _shapes(desc)
    return (gather_nd_validated(data.reshape(data_shape), indices.reshape(index_shape), desc.batch_dimension_count),)


def _apply_scatter(
    desc: ScatterNDOperatorDesc, data: jax.Array, indices: jax.Array, updates: jax.Array
) -> tuple[jax.Array]:
    """DML_SCATTER_ND as ONNX `scatter_nd` (no reduction) on the meaningful dimensions."""
    data_shape, index_shape = _shapes(desc)
    update_shape = index_shape[:-1] + data_shape[index_shape[-1] :]
    return (
        scatter_nd_validated(data.reshape(data_shape), indices.reshape(index_shape), updates.reshape(update_shape)),
    )


GATHER_ND = register(
    Operator(
        GatherNDOperatorDesc, GATHER_ND_SUPPORT, _validate_gather, ("input_tensor", "indices_tensor"), _apply_gather
    )
)
SCATTER_ND = register(
    Operator(
        ScatterNDOperatorDesc,
        SCATTER_ND_SUPPORT,
        _validate_scatter,
        ("input_tensor", "indices_tensor", "updates_tensor"),
        _apply_scatter,
    )
)
