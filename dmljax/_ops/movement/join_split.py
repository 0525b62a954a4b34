"""Join and split (DML_JOIN_OPERATOR_DESC, DML_SPLIT_OPERATOR_DESC) along one axis.

`join` is `lax.concatenate`; `split_tensor` is one `lax.slice` per output. The public
name of the split is `split_tensor` because `dmljax.random.split` derives random keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
from jax import lax

from dmljax._core.errors import fail
from dmljax._ops.common.indices import as_data, check_axis, check_rank, type_fail
from dmljax._ops.common.static_args import static_ints

__all__ = ["join", "join_validated", "split_tensor", "split_validated"]


def join(inputs: Sequence[jax.typing.ArrayLike], axis: int) -> jax.Array:
    """Concatenate ``inputs`` along ``axis``: DML_JOIN_OPERATOR_DESC (ONNX Concat).

    Args:
      inputs: one or more arrays (``InputCount`` of them) of 1 to 8 dimensions, one
        `DataType`, the same rank, and the same sizes in every dimension but ``axis``.
      axis: ``Axis``, in ``[-rank, rank)``.

    Returns:
      Array of the inputs' type; its size along ``axis`` is the sum of theirs.

    Raises:
      ValidationError: no inputs, ranks or sizes differ, or ``axis`` is out of range or traced.
      TypeError: the types differ or one is unsupported.

    Examples:
      >>> join([jnp.array([[1, 2]]), jnp.array([[3, 4], [5, 6]])], axis=0)
      Array([[1, 2],
             [3, 4],
             [5, 6]], dtype=int32)
    """
    if isinstance(inputs, jax.Array) or not isinstance(inputs, Sequence) or not inputs:
        raise fail("join", "inputs", "be a non-empty sequence of arrays", inputs)
    arrays = [as_data("join", f"inputs[{i}]", x) for i, x in enumerate(inputs)]
    first = arrays[0]
    check_rank("join", "inputs[0]", first.shape)
    axis = check_axis("join", axis, first.ndim, f"inputs[0] shape {first.shape}")
    for i, x in enumerate(arrays[1:], 1):
        context = f"inputs[0] shape {first.shape}, axis {axis}"
        if x.dtype != first.dtype:
            raise type_fail("join", f"inputs[{i}].dtype", f"equal inputs[0].dtype ({first.dtype})", x.dtype)
        if x.ndim != first.ndim:
            raise fail("join", f"inputs[{i}].ndim", f"equal inputs[0].ndim ({first.ndim})", x.ndim, context)
        for d, (a, b) in enumerate(zip(x.shape, first.shape, strict=True)):
            if d != axis and a != b:
                raise fail("join", f"inputs[{i}].shape[{d}]", f"equal inputs[0].shape[{d}] ({b})", a, context)
    return join_validated(arrays, axis)


def join_validated(inputs: Sequence[jax.Array], axis: int) -> jax.Array:
    """`join` on checked inputs and a non-negative axis: no checks."""
    return lax.concatenate(list(inputs), axis)


def split_tensor(input: jax.typing.ArrayLike, sizes: Sequence[int], axis: int) -> tuple[jax.Array, ...]:
    """Split ``input`` along ``axis`` into consecutive pieces: DML_SPLIT_OPERATOR_DESC (ONNX Split).

    Output ``k`` holds ``sizes[k]`` elements along ``axis``, starting where output ``k - 1``
    ended; its other sizes are ``input``'s. DirectML gives the pieces as the output
    tensors' sizes along ``axis``; they must add up to ``input.shape[axis]``.

    Args:
      input: array of 1 to 8 dimensions, any `DataType`.
      sizes: one int >= 1 per output (``OutputCount`` of them), summing to ``input.shape[axis]``.
      axis: ``Axis``, in ``[-rank, rank)``.

    Returns:
      A tuple of ``len(sizes)`` arrays of ``input``'s type.

    Raises:
      ValidationError: ``sizes`` is traced, empty, holds a value below 1 or does not add up;
        ``axis`` is out of range or traced.
      TypeError: ``input`` has an unsupported type.

    Examples:
      >>> split_tensor(jnp.arange(6), [2, 1, 3], axis=0)
      (Array([0, 1], dtype=int32), Array([2], dtype=int32), Array([3, 4, 5], dtype=int32))
    """
    input = as_data("split_tensor", "input", input)
    check_rank("split_tensor", "input", input.shape)
    context = f"input shape {input.shape}"
    axis = check_axis("split_tensor", axis, input.ndim, context)
    sizes = static_ints("split_tensor", "sizes", sizes, None, context, minimum=1)
    if not sizes or sum(sizes) != input.shape[axis]:
        rule = f"be non-empty and add up to input.shape[{axis}] ({input.shape[axis]})"
        raise fail("split_tensor", "sizes", rule, sizes, context)
    return split_validated(input, sizes, axis)


def split_validated(input: jax.Array, sizes: tuple[int, ...], axis: int) -> tuple[jax.Array, ...]:
    """`split_tensor` on checked sizes and a non-negative axis: no checks."""
    pieces, start = [], 0
    for size in sizes:
        pieces.append(lax.slice_in_dim(input, start, start + size, axis=axis))
        start += size
    return tuple(pieces)
