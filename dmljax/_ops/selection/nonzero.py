"""Non-zero coordinates (DML_NONZERO_COORDINATES_OPERATOR_DESC) with a static-size output.

ONNX NonZero's output shape depends on the data; DirectML's does not: it writes at most
one row per input element into a tensor of ``x.size`` rows and returns the count apart.
That is a shape JAX can trace: `jnp.nonzero` with ``size=x.size`` finds the flat
positions in ascending order, `jnp.unravel_index` turns them into coordinates.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.markers import mark, traced
from dmljax._ops.common.indices import as_data, check_rank

__all__ = ["nonzero_coordinates", "nonzero_coordinates_validated"]


def nonzero_coordinates(x: jax.typing.ArrayLike) -> tuple[jax.Array, jax.Array]:
    """Count and coordinates of the non-zero elements of ``x``: DML_NONZERO_COORDINATES.

    Row ``i < count`` of ``coordinates`` is the coordinate of the ``i``-th non-zero element
    in row-major order (ascending element index, DirectML's guarantee); ``-0.0`` is zero,
    NaN and subnormals are not (decided on the bits: XLA CPU would flush a subnormal).
    DirectML leaves the rows past ``count`` undefined; here they hold 0 (the page's example
    shows zeros). ONNX NonZero returns the transpose of the first ``count``
    rows, a shape that depends on the data, which JAX cannot trace.

    Args:
      x: array of 1 to 8 dimensions, any `DataType` (DirectML lists FLOAT32, FLOAT16,
        INT32, INT16, INT8, UINT32, UINT16, UINT8).

    Returns:
      ``(count, coordinates)``: an int32 scalar and an int32 array of shape
      ``(x.size, x.ndim)`` (DirectML writes UINT32 ``{1, 1, M, N}``).

    Raises:
      ValidationError: ``x`` has no or more than 8 dimensions.
      TypeError: ``x`` has an unsupported type.

    Examples:
      >>> count, coordinates = nonzero_coordinates(jnp.array([[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]]))
      >>> count
      Array(4, dtype=int32)
      >>> coordinates[:5]
      Array([[0, 0],
             [0, 3],
             [1, 1],
             [1, 3],
             [0, 0]], dtype=int32)
    """
    x = as_data("nonzero_coordinates", "x", x)
    check_rank("nonzero_coordinates", "x", x.shape)
    count, coordinates = _nonzero_impl(x)
    if not traced(count, x):
        return count, coordinates
    op = "nonzero_coordinates"  # marked so that an ONNX export refuses it by name
    return mark(count, x, op=op, output="count"), mark(coordinates, x, op=op, output="coordinates")


def nonzero_coordinates_validated(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """`nonzero_coordinates`' trace of an input the descriptor layer validated: no checks."""
    count, coordinates = _nonzero_impl(x)
    op = "nonzero_coordinates"
    return mark(count, x, op=op, output="count"), mark(coordinates, x, op=op, output="coordinates")


@jax.jit
def _nonzero_impl(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Flat positions of the non-zero elements, padded with position 0, as coordinates."""
    flat = _nonzero_mask(x).reshape(-1)
    count = jnp.sum(flat, dtype=np.int32)
    if x.size == 0:
        return count, jnp.zeros((0, x.ndim), np.int32)
    (position,) = jnp.nonzero(flat, size=x.size, fill_value=0)
    coordinates = jnp.stack(jnp.unravel_index(position, x.shape), axis=-1)
    return count, coordinates.astype(np.int32)


def _nonzero_mask(x: jax.Array) -> jax.Array:
    """``x != 0`` decided on the bits for floats: XLA CPU flushes subnormals in comparisons."""
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return _nonzero_mask(jnp.real(x)) | _nonzero_mask(jnp.imag(x))
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x != 0
    unsigned = np.dtype(f"uint{8 * x.dtype.itemsize}")
    magnitude = lax.bitcast_convert_type(x, unsigned) & np.asarray((1 << (8 * x.dtype.itemsize - 1)) - 1, unsigned)
    return magnitude != 0
