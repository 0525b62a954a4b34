"""FillValueSequence (DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC): an arithmetic sequence in row-major order.

No input tensor: the output's shape, type, start and delta are static. Integers are
computed in the unsigned type of their width, so a sequence that leaves the type's range
wraps modulo 2^bits; floats are ``start + delta * i`` computed in float32 (float64 for
FLOAT64) and rounded once to the output type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.dtypes import DataType, as_data_type, x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, MAX_TENSOR_ELEMENTS
from dmljax._ops.static_args import static_ints

__all__ = ["fill_value_sequence", "fill_value_sequence_validated"]

# The operator's output types (the page's tensor support table, feature levels 2.1 to 5.0).
FILL_TYPES = tuple(DataType)[:11]


def fill_value_sequence(shape: Sequence[int], dtype: Any, start: float | int, delta: float | int) -> jax.Array:
    """``output`` with ``output.flat[i] = start + delta * i``: DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC.

    ``i`` counts the elements in row-major order. ``start`` and ``delta`` are DirectML's
    ``ValueStart`` and ``ValueDelta`` (a ``DML_SCALAR_UNION`` of ``ValueDataType``, the
    output's type): for an integer type they must be integers that fit it, and the
    sequence wraps modulo 2^bits when it leaves the type's range; for a float type the
    value is computed in float32 (float64 for FLOAT64) and rounded once.

    Args:
      shape: ``OutputTensor.Sizes``: 1 to 8 static ints >= 1.
      dtype: the output's `DataType` (FLOAT64 to UINT8; 64-bit types need ``jax_enable_x64``).
      start: ``ValueStart``, a Python number.
      delta: ``ValueDelta``, a Python number.

    Returns:
      Array of ``shape`` and ``dtype``.

    Raises:
      ValidationError: ``shape`` is traced, out of range or too large; ``start`` or
        ``delta`` is traced, or no integer in the type's range for an integer type.
      TypeError: ``dtype`` is no DirectML type, or is 64-bit with ``jax_enable_x64`` off.

    Examples:
      >>> fill_value_sequence([2, 3], "float32", 1.0, 0.5)
      Array([[1. , 1.5, 2. ],
             [2.5, 3. , 3.5]], dtype=float32)
      >>> fill_value_sequence([4], "uint8", 250, 3)  # wraps modulo 256
      Array([250, 253,   0,   3], dtype=uint8)
    """
    op = "fill_value_sequence"
    data_type = as_data_type(dtype, op, "dtype")
    if data_type not in FILL_TYPES or (data_type.is_64bit and not x64_enabled()):
        rule = f"be one of {', '.join(t.name for t in FILL_TYPES)} (64-bit types with jax_enable_x64 on)"
        raise TypeError(str(fail(op, "dtype", rule, data_type)))
    shape = static_ints(op, "shape", shape, None, "output", minimum=1)
    if not 1 <= len(shape) <= MAX_DIMENSIONS or int(np.prod(shape)) > MAX_TENSOR_ELEMENTS:
        raise fail(op, "shape", f"have 1 to {MAX_DIMENSIONS} sizes and at most {MAX_TENSOR_ELEMENTS} elements", shape)
    values = [_scalar(op, name, v, data_type.dtype) for name, v in (("start", start), ("delta", delta))]
    return fill_value_sequence_validated(shape, data_type.dtype, *values)


def _scalar(op: str, param: str, value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, jax.core.Tracer) or isinstance(value, bool) or np.ndim(value) != 0:
        raise fail(op, param, "be a static Python number", value, f"dtype {dtype}")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not float(value).is_integer() or not info.min <= int(value) <= info.max:
            raise fail(op, param, f"be an integer in [{info.min}, {info.max}] (dtype {dtype})", value)
        return int(value)
    return float(value)


def fill_value_sequence_validated(shape: tuple[int, ...], dtype: np.dtype, start: Any, delta: Any) -> jax.Array:
    """`fill_value_sequence` on checked arguments: no checks."""
    count = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        unsigned = np.dtype(f"uint{dtype.itemsize * 8}")
        modulus = 2 ** (dtype.itemsize * 8)
        i = lax.iota(unsigned, count)
        flat = i * np.asarray(delta % modulus, unsigned) + np.asarray(start % modulus, unsigned)
        flat = lax.bitcast_convert_type(flat, dtype) if dtype != unsigned else flat
    else:
        work = np.dtype("float64") if dtype == np.float64 else np.dtype("float32")
        step = lax.iota(work, count) * np.asarray(delta, work)
        flat = (step + np.asarray(start, work)).astype(dtype)
    return jnp.reshape(flat, shape)
