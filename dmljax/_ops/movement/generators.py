"""Generators without inputs: DML_FILL_VALUE_CONSTANT and DML_DIAGONAL_MATRIX(1) (ONNX EyeLike).

`fill_value_constant` writes one value everywhere. `diagonal_matrix` treats the last two
dimensions as matrices (the leading ones count a batch) and writes ``value`` where the
column minus the row is in DIAGONAL_MATRIX1's span ``[diagonal_fill_begin,
diagonal_fill_end)`` (the page's rule, inverted when ``end < begin``; DIAGONAL_MATRIX's
``Offset`` is the span ``[offset, offset + 1)``), else the optional ``x`` or zero.
A value for an integer type must be an integer in the type's range (DML_SCALAR_UNION);
DIAGONAL_MATRIX's FLOAT value is truncated toward zero for an integer type, as its page
says (``10.6`` becomes ``10``): pass ``truncate=True``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.dtypes import as_data_type, x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, MAX_TENSOR_ELEMENTS
from dmljax._ops.common.static_args import static_ints
from dmljax._ops.movement.fill_value_sequence import FILL_TYPES, check_scalar

__all__ = ["diagonal_matrix", "diagonal_matrix_validated", "fill_value_constant", "fill_value_constant_validated"]


def _shape_and_type(op: str, shape: Any, dtype: Any, minimum_rank: int) -> tuple[tuple[int, ...], np.dtype]:
    data_type = as_data_type(dtype, op, "dtype")
    if data_type not in FILL_TYPES or (data_type.is_64bit and not x64_enabled()):
        rule = f"be one of {', '.join(t.name for t in FILL_TYPES)} (64-bit types with jax_enable_x64 on)"
        raise TypeError(str(fail(op, "dtype", rule, data_type)))
    shape = static_ints(op, "shape", shape, None, "output", minimum=1)
    if not minimum_rank <= len(shape) <= MAX_DIMENSIONS or math.prod(shape) > MAX_TENSOR_ELEMENTS:
        rule = f"have {minimum_rank} to {MAX_DIMENSIONS} sizes and at most {MAX_TENSOR_ELEMENTS} elements"
        raise fail(op, "shape", rule, shape)
    return shape, data_type.dtype


def _value(op: str, value: Any, dtype: np.dtype, truncate: bool) -> Any:
    if truncate and dtype.kind in "iu" and not isinstance(value, bool) and np.ndim(value) == 0:
        if not isinstance(value, jax.core.Tracer) and math.isfinite(float(value)):
            value = math.trunc(float(value))
    return check_scalar(op, "value", value, dtype)


def fill_value_constant(shape: Sequence[int], dtype: Any, value: float | int) -> jax.Array:
    """An array of ``shape`` holding ``value`` everywhere: DML_FILL_VALUE_CONSTANT.

    Args:
      shape: ``OutputTensor.Sizes``: 1 to 8 static ints >= 1.
      dtype: the output's `DataType` (``ValueDataType``).
      value: ``Value`` (a DML_SCALAR_UNION of the type): an integer in the type's range for
        an integer type, any float for a float type (rounded to it once).

    Returns:
      Array of ``shape`` and ``dtype``.

    Raises:
      ValidationError: ``shape`` is out of range, or ``value`` is traced or does not fit.
      TypeError: ``dtype`` is no DirectML type, or is 64-bit with ``jax_enable_x64`` off.

    Examples:
      >>> fill_value_constant((2, 2), "int8", -3)
      Array([[-3, -3],
             [-3, -3]], dtype=int8)
    """
    op = "fill_value_constant"
    shape, dtype = _shape_and_type(op, shape, dtype, 1)
    return fill_value_constant_validated(shape, dtype, check_scalar(op, "value", value, dtype))


def fill_value_constant_validated(shape: tuple[int, ...], dtype: np.dtype, value: Any) -> jax.Array:
    """`fill_value_constant` on checked arguments: no checks."""
    return jnp.full(shape, np.asarray(value).astype(dtype), dtype)


def diagonal_matrix(
    shape: Sequence[int],
    dtype: Any,
    offset: int = 0,
    value: float | int = 1.0,
    *,
    diagonal_fill_end: int | None = None,
    x: jax.typing.ArrayLike | None = None,
    truncate: bool = False,
) -> jax.Array:
    """Matrices with ``value`` on a diagonal: DML_DIAGONAL_MATRIX / DIAGONAL_MATRIX1, ONNX EyeLike.

    ``out[..., i, j] = value`` where ``j - i`` is in ``[offset, diagonal_fill_end)``
    (default ``offset + 1``: the one diagonal ``j = i + offset``; a positive offset shifts
    it right), else ``x[..., i, j]`` when ``x`` is given, else 0. With ``diagonal_fill_end
    < offset`` the span is inverted, as DIAGONAL_MATRIX1's rule ``(end >= begin) ^ (j - i
    >= begin) ^ (j - i < end)`` says.

    Args:
      shape: 2 to 8 static ints >= 1; the last two are each matrix's rows and columns.
      dtype: the output's `DataType`.
      offset: ``Offset`` / ``DiagonalFillBegin``, a static int.
      value: the diagonal's value (an integer in the type's range for an integer type).
      diagonal_fill_end: DIAGONAL_MATRIX1's ``DiagonalFillEnd``, a static int, or None.
      x: DIAGONAL_MATRIX1's optional ``InputTensor``: an array of ``shape`` and ``dtype``
        whose elements fill the rest.
      truncate: truncate a float ``value`` toward zero for an integer type (DIAGONAL_MATRIX's
        FLOAT member).

    Returns:
      Array of ``shape`` and ``dtype``.

    Raises:
      ValidationError: ``shape`` is out of range; ``offset``, ``diagonal_fill_end`` or
        ``value`` is traced or does not fit; ``x`` has another shape.
      TypeError: ``dtype`` is no DirectML type, or ``x`` has another type.

    Examples:
      >>> diagonal_matrix((3, 2), "float32", offset=-1)  # the page's third example
      Array([[0., 0.],
             [1., 0.],
             [0., 1.]], dtype=float32)
      >>> diagonal_matrix((2, 3), "int32", 1, 10.6, truncate=True)
      Array([[ 0, 10,  0],
             [ 0,  0, 10]], dtype=int32)
    """
    op = "diagonal_matrix"
    shape, dtype = _shape_and_type(op, shape, dtype, 2)
    begin = _static_int(op, "offset", offset)
    end = begin + 1 if diagonal_fill_end is None else _static_int(op, "diagonal_fill_end", diagonal_fill_end)
    fill = _value(op, value, dtype, bool(truncate))
    if x is not None:
        x = jnp.asarray(x)
        if x.shape != shape:
            raise fail(op, "x.shape", f"be the output's shape {shape}", x.shape)
        if x.dtype != dtype:
            raise TypeError(str(fail(op, "x.dtype", f"be the output's type {dtype}", x.dtype)))
    return diagonal_matrix_validated(shape, dtype, begin, end, fill, x)


def _static_int(op: str, param: str, value: Any) -> int:
    if isinstance(value, jax.core.Tracer) or isinstance(value, bool) or not hasattr(value, "__index__"):
        raise fail(op, param, "be a static int", value)
    return int(value)


def diagonal_matrix_validated(
    shape: tuple[int, ...], dtype: np.dtype, begin: int, end: int, value: Any, x: jax.Array | None
) -> jax.Array:
    """`diagonal_matrix` on checked arguments: no checks."""
    rank = len(shape)
    top = lax.broadcasted_iota(np.int64 if x64_enabled() else np.int32, shape, rank - 1)
    top = top - lax.broadcasted_iota(top.dtype, shape, rank - 2)  # column - row
    use = (end >= begin) ^ (top >= begin) ^ (top < end)
    rest = jnp.zeros(shape, dtype) if x is None else x
    return jnp.where(use, np.asarray(value).astype(dtype), rest)
