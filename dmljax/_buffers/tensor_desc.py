"""DML_BUFFER_TENSOR_DESC: data type, sizes, strides and buffer size.

DirectML: https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_buffer_tensor_desc
and https://learn.microsoft.com/en-us/windows/ai/directml/dml-strides.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from dmljax._buffers.layout import has_aliasing
from dmljax._core.dtypes import DataType, as_data_type
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, UINT32_MAX

__all__ = ["TensorDesc", "calc_buffer_tensor_size", "packed_strides"]


def _as_int_tuple(values: Any, op: str, param: str) -> tuple[int, ...]:
    try:
        items = tuple(values)
    except TypeError:
        raise fail(op, param, "be a sequence of integers", values) from None
    for i, item in enumerate(items):
        if isinstance(item, bool) or not hasattr(item, "__index__"):
            raise fail(op, f"{param}[{i}]", "be an integer", item)
    return tuple(int(item) for item in items)


def _check_sizes(sizes: Any, op: str) -> tuple[int, ...]:
    sizes = _as_int_tuple(sizes, op, "sizes")
    if not 1 <= len(sizes) <= MAX_DIMENSIONS:
        raise fail(op, "sizes", f"have 1 to {MAX_DIMENSIONS} dimensions", sizes)
    for i, size in enumerate(sizes):
        if not 1 <= size <= UINT32_MAX:
            raise fail(op, f"sizes[{i}]", "be in [1, 2**32 - 1]", size, f"sizes {sizes}")
    return sizes


def _check_strides(strides: Any, sizes: tuple[int, ...], op: str) -> tuple[int, ...]:
    strides = _as_int_tuple(strides, op, "strides")
    if len(strides) != len(sizes):
        raise fail(op, "strides", f"have one stride per dimension ({len(sizes)})", strides, f"sizes {sizes}")
    for i, stride in enumerate(strides):
        if not 0 <= stride <= UINT32_MAX:
            raise fail(op, f"strides[{i}]", "be in [0, 2**32 - 1]", stride, f"sizes {sizes}")
    return strides


def _row_major_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def calc_buffer_tensor_size(dtype: Any, sizes: Sequence[int], strides: Sequence[int] | None = None) -> int:
    """Minimum buffer size in bytes for a tensor: DirectML's ``DMLCalcBufferTensorSize``.

    Without strides it is ``prod(sizes) * itemsize``; with strides it is
    ``(sum((sizes[i] - 1) * strides[i]) + 1) * itemsize``; either is rounded up to a
    multiple of 4 bytes. Computed with Python integers, so it is exact for 64-bit types
    and for tensors whose last offset does not fit in 32 bits.

    Args:
      dtype: a `DataType`, NumPy/JAX dtype or name.
      sizes: 1 to 8 sizes, each >= 1.
      strides: ``None`` (packed) or one stride >= 0 per dimension.

    Returns:
      The size in bytes, a multiple of 4.

    Raises:
      ValidationError: a size or stride breaks its rule.
      TypeError: ``dtype`` is no supported type.

    Examples:
      >>> calc_buffer_tensor_size("float16", (1, 1, 3, 5))  # 30 bytes, rounded up
      32
      >>> calc_buffer_tensor_size("float32", (2, 3), strides=(0, 1))  # broadcast rows
      12
      >>> calc_buffer_tensor_size("float32", (2, 3), strides=(5, 1))  # padded rows
      32
    """
    op = "calc_buffer_tensor_size"
    data_type = as_data_type(dtype, op, "dtype")
    sizes = _check_sizes(sizes, op)
    if strides is None:
        return _round_to_4(math.prod(sizes) * data_type.itemsize)
    return _strided_bytes(data_type, sizes, _check_strides(strides, sizes, op))


def _round_to_4(nbytes: int) -> int:
    return (nbytes + 3) // 4 * 4


def _strided_bytes(data_type: DataType, sizes: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """DMLCalcBufferTensorSize of sizes and strides already checked."""
    elements = sum((size - 1) * stride for size, stride in zip(sizes, strides, strict=True)) + 1
    return _round_to_4(elements * data_type.itemsize)


def _packed_strides_checked(sizes: tuple[int, ...], op: str) -> tuple[int, ...]:
    """Row-major strides, which DML_BUFFER_TENSOR_DESC stores as UINT like the sizes."""
    strides = _row_major_strides(sizes)
    if strides[0] > UINT32_MAX:
        rule = "have packed row-major strides that fit in UINT32 (at most 2**32 - 1 elements per step)"
        raise fail(op, "sizes", rule, sizes, f"packed strides {strides}; pass strides explicitly")
    return strides


_LAYOUT_LETTERS = "NCDHW"


def packed_strides(sizes: Sequence[int], layout: str | None = None) -> tuple[int, ...]:
    """Packed strides for a physical layout, with ``sizes`` in logical order.

    ``layout`` names the dimensions outermost first, with the letters N, C, D, H, W
    ("NCHW", "NHWC", "NCDHW", "NDHWC", "HW", "WH", "DHW", "WHD", ...). The logical order
    of ``sizes`` is always N, C, D, H, W for the letters present. ``None`` is row-major.

    Examples:
      >>> packed_strides((1, 1, 3, 5), layout="NHWC")
      (15, 1, 5, 1)
      >>> packed_strides((2, 3), layout="WH")  # column-major
      (1, 2)
      >>> packed_strides((2, 2, 3))
      (6, 3, 1)
    """
    op = "packed_strides"
    sizes = _check_sizes(sizes, op)
    if layout is None:
        return _row_major_strides(sizes)
    letters = str(layout).upper()
    if sorted(letters) != sorted(set(letters)) or not set(letters) <= set(_LAYOUT_LETTERS):
        raise fail(op, "layout", f"be distinct letters from {_LAYOUT_LETTERS!r}", layout)
    if len(letters) != len(sizes):
        raise fail(op, "layout", f"have one letter per dimension ({len(sizes)})", layout, f"sizes {sizes}")
    logical = [c for c in _LAYOUT_LETTERS if c in letters]
    size_of = dict(zip(logical, sizes, strict=True))
    stride_of = dict(zip(letters, _row_major_strides([size_of[c] for c in letters]), strict=True))
    return tuple(stride_of[c] for c in logical)


@dataclasses.dataclass(frozen=True, init=False)
class TensorDesc:
    """A DirectML buffer tensor descriptor (DML_BUFFER_TENSOR_DESC).

    The element at coordinate ``c`` lives at element offset ``dot(c, strides)`` of a flat
    buffer. Frozen and hashable, so it can be a static argument of `jax.jit`.

    Args:
      dtype: a `DataType`, NumPy/JAX dtype or name.
      sizes: the logical shape, 1 to 8 sizes, each >= 1.
      strides: elements to skip per step along each dimension (>= 0); ``None`` for
        packed row-major. A stride of 0 broadcasts; larger strides pad.
      total_tensor_size_in_bytes: the buffer size; at least `calc_buffer_tensor_size`,
        which is the default.

    Raises:
      ValidationError: a size, stride or the buffer size breaks its rule.
      TypeError: ``dtype`` is no supported type.

    Examples:
      >>> desc = TensorDesc("float32", (1, 1, 3, 5), strides=packed_strides((1, 1, 3, 5), "NHWC"))
      >>> desc.strides, desc.is_packed, desc.total_tensor_size_in_bytes
      ((15, 1, 5, 1), True, 60)
      >>> TensorDesc("float32", (2, 3), strides=(0, 1)).is_packed  # broadcast
      False
    """

    dtype: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    total_tensor_size_in_bytes: int

    def __init__(
        self,
        dtype: Any,
        sizes: Sequence[int],
        strides: Sequence[int] | None = None,
        total_tensor_size_in_bytes: int | None = None,
    ) -> None:
        op = "TensorDesc"
        data_type = as_data_type(dtype, op, "dtype")
        sizes = _check_sizes(sizes, op)
        strides = _packed_strides_checked(sizes, op) if strides is None else _check_strides(strides, sizes, op)
        minimum = _strided_bytes(data_type, sizes, strides)
        if total_tensor_size_in_bytes is None:
            total = minimum
        else:
            if isinstance(total_tensor_size_in_bytes, bool) or not hasattr(total_tensor_size_in_bytes, "__index__"):
                raise fail(op, "total_tensor_size_in_bytes", "be an integer", total_tensor_size_in_bytes)
            total = int(total_tensor_size_in_bytes)
            if total < minimum:
                context = f"DMLCalcBufferTensorSize = {minimum} for sizes {sizes}, strides {strides}"
                raise fail(op, "total_tensor_size_in_bytes", f"be at least {minimum}", total, context)
        object.__setattr__(self, "dtype", data_type)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "total_tensor_size_in_bytes", total)

    @property
    def dimension_count(self) -> int:
        """The number of dimensions (DirectML's DimensionCount)."""
        return len(self.sizes)

    @property
    def element_count(self) -> int:
        """The number of logical elements, ``prod(sizes)``."""
        return math.prod(self.sizes)

    @property
    def min_buffer_elements(self) -> int:
        """Elements a buffer needs to hold every element: ``sum((size - 1) * stride) + 1``."""
        return sum((n - 1) * s for n, s in zip(self.sizes, self.strides, strict=True)) + 1

    @property
    def buffer_elements(self) -> int:
        """Elements of a buffer of ``total_tensor_size_in_bytes``."""
        return self.total_tensor_size_in_bytes // self.dtype.itemsize

    @property
    def is_packed(self) -> bool:
        """Whether the elements fill ``element_count`` consecutive offsets, each once."""
        return self.min_buffer_elements == self.element_count and not self.has_aliasing

    @property
    def has_aliasing(self) -> bool:
        """Whether two logical elements share an offset (broadcast or overlapping strides)."""
        return has_aliasing(self.sizes, self.strides)
