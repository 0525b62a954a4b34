"""ReverseSubsequences (DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC): reverse each sequence's first elements.

One `jnp.take_along_axis` with positions computed from the lengths: position ``j`` of a
sequence of length ``L`` reads ``L - 1 - j`` when ``j < L``, else ``j``. Differentiable in
the input (the gradient is the same permutation, applied backwards).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._core.errors import fail
from dmljax._ops.common.indices import as_data, as_indices, check_axis, check_rank

__all__ = ["reverse_subsequences", "reverse_subsequences_validated"]


def reverse_subsequences(input: jax.typing.ArrayLike, sequence_lengths: jax.typing.ArrayLike, axis: int) -> jax.Array:
    """Reverse the first ``sequence_lengths`` elements of every sequence along ``axis``.

    DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC: ``sequence_lengths`` has ``input``'s shape with
    size 1 along ``axis``; along the sequence at coordinate ``p`` the first
    ``L = sequence_lengths[p]`` elements are reversed and the rest copied. A length above
    the axis size acts as the axis size (the page's clamp); lengths 0 and 1 copy the
    sequence; a negative length of a signed type acts as 0 (DirectML's lengths are
    unsigned). ONNX ReverseSequence is the case of a 2-D ``(batch, time)`` layout.

    Args:
      input: array of 1 to 8 dimensions, any `DataType`.
      sequence_lengths: ``SequenceLengthsTensor``: INT32, INT64, UINT32 or UINT64, shape
        ``input.shape`` with ``axis`` set to 1. May be traced.
      axis: ``Axis``, in ``[-rank, rank)``.

    Returns:
      Array of ``input``'s shape and type.

    Raises:
      ValidationError: ``axis`` is out of range or traced, or ``sequence_lengths`` has the wrong shape.
      TypeError: ``input`` or ``sequence_lengths`` has an unsupported type.

    Examples:
      >>> x = jnp.arange(1.0, 13.0).reshape(3, 4)
      >>> reverse_subsequences(x, jnp.array([[2], [4], [3]], dtype=jnp.uint32), axis=1)
      Array([[ 2.,  1.,  3.,  4.],
             [ 8.,  7.,  6.,  5.],
             [11., 10.,  9., 12.]], dtype=float32)
    """
    input = as_data("reverse_subsequences", "input", input)
    check_rank("reverse_subsequences", "input", input.shape)
    context = f"input shape {input.shape}"
    axis = check_axis("reverse_subsequences", axis, input.ndim, context)
    lengths = as_indices("reverse_subsequences", sequence_lengths)
    expected = input.shape[:axis] + (1,) + input.shape[axis + 1 :]
    if tuple(lengths.shape) != expected:
        rule = f"equal input.shape with size 1 along axis {axis}: {expected}"
        raise fail("reverse_subsequences", "sequence_lengths.shape", rule, tuple(lengths.shape), context)
    if not isinstance(lengths, jax.Array):  # clamp on the host: a 64-bit length narrowed by JAX could wrap
        lengths = np.clip(lengths, 0, input.shape[axis]).astype(np.int32)
    return reverse_subsequences_validated(input, jnp.asarray(lengths), axis)


def reverse_subsequences_validated(input: jax.Array, sequence_lengths: jax.Array, axis: int) -> jax.Array:
    """`reverse_subsequences` on a checked shape and a non-negative axis: no checks."""
    size = input.shape[axis]
    # Clamp in the lengths' own type first (a uint64 length above 2^31 stays above the axis size).
    lengths = jnp.clip(sequence_lengths, 0, size).astype(jnp.int32)
    shape = [1] * input.ndim
    shape[axis] = size
    j = jnp.arange(size, dtype=jnp.int32).reshape(shape)
    source = jnp.where(j < lengths, lengths - 1 - j, j)
    positions = jnp.broadcast_to(source, input.shape)
    return jnp.take_along_axis(input, positions, axis=axis, mode="promise_in_bounds")
