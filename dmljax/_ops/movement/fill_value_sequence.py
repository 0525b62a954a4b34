"""FillValueSequence (DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC): an arithmetic sequence in row-major order.

No input tensor: the output's shape, type, start and delta are static. The page defines
the operator as a loop, ``output[c] = value; value += delta`` over the coordinates in
order, with ``value`` of the output's type. Integers: ``start + delta * i`` in the unsigned
type of their width, equal to the loop's wrap-around modulo 2^bits, in parallel. Floats:
each addition rounds, so ``start + delta * i`` gives other bits; the loop's own bits come
from its runs of a constant step in units of the last place within each binade
(`float_runs`, found on the host from the static start and delta), computed in parallel
as ``first + j * step`` per run in the type, each product and sum exact
(docs/design/fill-value-sequence.md). `float_loop`, the loop as written, is the oracle.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.dtypes import DataType, as_data_type, x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, MAX_TENSOR_ELEMENTS
from dmljax._ops.common.static_args import static_ints, static_real
from dmljax._ops.movement.float_runs import float_runs

__all__ = ["check_scalar", "fill_value_sequence", "fill_value_sequence_validated", "float_loop"]

# The operator's output types (the page's tensor support table, feature levels 2.1 to 5.0).
FILL_TYPES = tuple(DataType)[:11]


def fill_value_sequence(shape: Sequence[int], dtype: Any, start: float | int, delta: float | int) -> jax.Array:
    """``output`` with ``output.flat[i] = start + delta * i``: DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC.

    ``i`` counts the elements in row-major order. ``start`` and ``delta`` are DirectML's
    ``ValueStart`` and ``ValueDelta`` (a ``DML_SCALAR_UNION`` of ``ValueDataType``, the
    output's type). The page's rule is a loop, ``value += delta`` after each element, in
    the output's type: for a float type each addition rounds (exactly as that loop, so
    ``0.1`` added ten times is not ``1.0``); for an integer type the sequence wraps modulo
    2^bits, and ``delta`` may be negative for an unsigned type (the page's UINT8 example
    steps by -2). Integer ``start`` must fit the type.

    Args:
      shape: ``OutputTensor.Sizes``: 1 to 8 static ints >= 1.
      dtype: the output's `DataType` (FLOAT64 to UINT8; 64-bit types need ``jax_enable_x64``).
      start: ``ValueStart``, a real number (Python or NumPy; not a string, bool or None).
      delta: ``ValueDelta``, a real number.

    Returns:
      Array of ``shape`` and ``dtype``.

    Raises:
      ValidationError: ``shape`` is traced, out of range or too large; ``start`` or
        ``delta`` is traced, no real number (None, a string, complex), or no integer in the
        type's range for an integer type.
      TypeError: ``dtype`` is no DirectML type, or is 64-bit with ``jax_enable_x64`` off.

    Examples:
      >>> fill_value_sequence([2, 3], "float32", 1.0, 0.5)
      Array([[1. , 1.5, 2. ],
             [2.5, 3. , 3.5]], dtype=float32)
      >>> fill_value_sequence([4], "uint8", 250, 3)  # wraps modulo 256
      Array([250, 253,   0,   3], dtype=uint8)
      >>> fill_value_sequence([4], "uint8", 10, -2)  # the page's example 2
      Array([10,  8,  6,  4], dtype=uint8)
    """
    op = "fill_value_sequence"
    data_type = as_data_type(dtype, op, "dtype")
    if data_type not in FILL_TYPES or (data_type.is_64bit and not x64_enabled()):
        rule = f"be one of {', '.join(t.name for t in FILL_TYPES)} (64-bit types with jax_enable_x64 on)"
        raise TypeError(str(fail(op, "dtype", rule, data_type)))
    shape = static_ints(op, "shape", shape, None, "output", minimum=1)
    if not 1 <= len(shape) <= MAX_DIMENSIONS or int(np.prod(shape)) > MAX_TENSOR_ELEMENTS:
        raise fail(op, "shape", f"have 1 to {MAX_DIMENSIONS} sizes and at most {MAX_TENSOR_ELEMENTS} elements", shape)
    values = [check_scalar(op, name, v, data_type.dtype) for name, v in (("start", start), ("delta", delta))]
    return fill_value_sequence_validated(shape, data_type.dtype, *values)


def check_scalar(op: str, param: str, value: Any, dtype: np.dtype) -> Any:
    """``value`` as the Python int or float the type takes (integers: the type's range; ``delta`` modulo 2^bits)."""
    number = static_real(op, param, value, f"dtype {dtype}")
    if dtype.kind in "iu":
        low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
        if param == "delta":  # a step modulo 2^bits: either type of the width (the page steps a UINT8 by -2)
            bits = dtype.itemsize * 8
            low, high = -(2 ** (bits - 1)), 2**bits - 1
        whole = number if isinstance(number, int) else int(number) if math.isfinite(number) else None
        if whole is None or whole != number or not low <= whole <= high:
            raise fail(op, param, f"be an integer in [{low}, {high}] (dtype {dtype})", value)
        return whole
    try:
        return float(number)
    except OverflowError:  # a Python int beyond every float
        raise fail(op, param, f"be a number that dtype {dtype} can hold", value) from None


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
        # One compiled program per sequence, keyed by the bits of start and delta (0.0 == -0.0 in Python).
        keys = (int(np.asarray(v, np.float64).view(np.int64)) for v in (start, delta))
        flat = _float_sequence(count, dtype, *keys)
    return jnp.reshape(flat, shape)


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def _float_sequence(count: int, dtype: np.dtype, start_bits: int, delta_bits: int) -> jax.Array:
    """The float loop from its runs (`float_runs`): ``first + j * step`` per run, exact in ``dtype``.

    ``start_bits`` and ``delta_bits`` are the float64 bits of ``start`` and ``delta``.

    Within a run every value lies in one binade, ``step`` is a whole number of its ulps and
    ``j * step`` less than the binade's width, so the product and the sum are exact (a fused
    multiply-add too): no rounding, no bitcast (ONNX below opset 26 has none). Runs among
    the subnormals are constants (XLA CPU flushes subnormal arithmetic to zero).
    """
    unsigned = np.dtype(f"uint{dtype.itemsize * 8}")
    start, delta = (float(np.asarray(b, np.int64).view(np.float64)) for b in (start_bits, delta_bits))

    def value(bits: int) -> np.ndarray:  # a 0-d array of dtype
        return np.asarray(bits, unsigned).view(dtype)

    tiny = float(jnp.finfo(dtype).tiny)
    pieces = []
    for length, first, step in float_runs(count, dtype, start, delta):
        stride = float(value(first + step)) - float(value(first))  # two values of one binade: exact
        if step == 0:
            pieces.append(jnp.full((length,), value(first), dtype))
        elif abs(stride) < tiny or abs(float(value(first))) < tiny:
            # Subnormal steps or values: XLA CPU flushes them to zero in arithmetic, so this
            # run (at most one binade's 2^mant values) is a constant of its bits.
            run = np.arange(length, dtype=unsigned) * np.asarray(step % 2 ** (8 * dtype.itemsize), unsigned)
            pieces.append(jnp.asarray((run + np.asarray(first, unsigned)).view(dtype)))
        else:
            pieces.append(lax.iota(dtype, length) * np.asarray(stride, dtype) + value(first))
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, 0)


def float_loop(count: int, dtype: np.dtype, start: float, delta: float) -> jax.Array:
    """The page's float loop as written (`lax.scan` in ``dtype``, one step per element): the oracle of `float_runs`."""
    step = np.asarray(delta, dtype)

    def add(value: jax.Array, _: None) -> tuple[jax.Array, jax.Array]:
        return value + step, value

    _, flat = lax.scan(add, jnp.asarray(start, dtype), None, length=count)
    return flat
