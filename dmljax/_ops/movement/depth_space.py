"""SpaceToDepth1 and DepthToSpace1 (DML_SPACE_TO_DEPTH1/DML_DEPTH_TO_SPACE1): blocks <-> channels.

Both are a reshape, a transpose and a reshape of an NCHW tensor. ``order`` is DirectML's
``DML_DEPTH_SPACE_ORDER``: ``"DCR"`` (DEPTH_COLUMN_ROW, ONNX's default and the only order of
the structs without the "1") puts the block offset before the channel in the depth
dimension, ``"CRD"`` (COLUMN_ROW_DEPTH) after it (docs/semantics.md, "Space and depth").
Each function with an order is the inverse of the other with the same order.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from dmljax._core.errors import fail
from dmljax._ops.common.indices import as_data
from dmljax._ops.common.static_args import static_int

__all__ = [
    "ORDERS",
    "check_order",
    "depth_to_space",
    "depth_to_space_validated",
    "space_to_depth",
    "space_to_depth_validated",
]

# DML_DEPTH_SPACE_ORDER (directml.h), by ONNX's short names.
ORDERS = {"dcr": "DCR", "depth_column_row": "DCR", "crd": "CRD", "column_row_depth": "CRD"}
_PREFIX = "dml_depth_space_order_"


def check_order(op: str, order: Any) -> str:
    """``order`` as ``"DCR"`` or ``"CRD"`` (any case; DirectML's long names too).

    Raises:
      ValidationError: ``order`` is neither.
    """
    name = ORDERS.get(order.lower().removeprefix(_PREFIX)) if isinstance(order, str) else None
    if name is None:
        raise fail(op, "order", "be 'DCR' (DEPTH_COLUMN_ROW) or 'CRD' (COLUMN_ROW_DEPTH)", order)
    return name


def _check(op: str, input: Any, block_size: Any, order: Any) -> tuple[jax.Array, int, str]:
    input = as_data(op, "input", input)
    context = f"input shape {input.shape}"
    if input.ndim != 4:
        raise fail(op, "input.ndim", "be 4 (N, C, H, W)", input.ndim, context)
    return input, static_int(op, "block_size", block_size, context, minimum=1), check_order(op, order)


def space_to_depth(input: jax.typing.ArrayLike, block_size: int, order: str = "DCR") -> jax.Array:
    """Move ``block_size`` x ``block_size`` spatial blocks into channels: DML_SPACE_TO_DEPTH1_OPERATOR_DESC.

    For an NCHW input and ``b = block_size`` the output is ``(N, C * b * b, H / b, W / b)``
    with ``output[n, d, h, w] = input[n, c, h * b + i, w * b + j]`` where
    ``d = (i * b + j) * C + c`` for ``"DCR"`` and ``d = (c * b + i) * b + j`` for ``"CRD"``.

    Args:
      input: a 4-dimensional array (NCHW), any `DataType`; H and W multiples of ``block_size``.
      block_size: ``BlockSize``, an int >= 1.
      order: ``Order``: ``"DCR"`` (ONNX SpaceToDepth) or ``"CRD"``.

    Returns:
      Array of ``input``'s type, shape ``(N, C * b * b, H / b, W / b)``.

    Raises:
      ValidationError: ``input`` is not 4-dimensional, ``block_size`` is traced, below 1
        or does not divide H and W, or ``order`` is unknown.
      TypeError: ``input`` has an unsupported type.

    Examples:
      >>> x = jnp.arange(8).reshape(1, 2, 2, 2)
      >>> space_to_depth(x, 2)[0, :, 0, 0], space_to_depth(x, 2, "CRD")[0, :, 0, 0]
      (Array([0, 4, 1, 5, 2, 6, 3, 7], dtype=int32), Array([0, 1, 2, 3, 4, 5, 6, 7], dtype=int32))
    """
    input, block, order = _check("space_to_depth", input, block_size, order)
    for d, name in ((2, "H"), (3, "W")):
        if input.shape[d] % block:
            rule = f"be a multiple of block_size ({block})"
            context = f"{name}; input shape {input.shape}"
            raise fail("space_to_depth", f"input.shape[{d}]", rule, input.shape[d], context)
    return space_to_depth_validated(input, block, order)


def space_to_depth_validated(input: jax.Array, block_size: int, order: str) -> jax.Array:
    """`space_to_depth` on checked arguments (``order`` ``"DCR"`` or ``"CRD"``): no checks."""
    n, c, h, w = input.shape
    b = block_size
    blocks = input.reshape(n, c, h // b, b, w // b, b)
    axes = (0, 3, 5, 1, 2, 4) if order == "DCR" else (0, 1, 3, 5, 2, 4)
    return jnp.transpose(blocks, axes).reshape(n, c * b * b, h // b, w // b)


def depth_to_space(input: jax.typing.ArrayLike, block_size: int, order: str = "DCR") -> jax.Array:
    """Move channels into ``block_size`` x ``block_size`` spatial blocks: DML_DEPTH_TO_SPACE1_OPERATOR_DESC.

    The inverse of `space_to_depth` with the same ``order``: for an NCHW input and
    ``b = block_size`` the output is ``(N, C / (b * b), H * b, W * b)`` with
    ``output[n, c, h * b + i, w * b + j] = input[n, d, h, w]``, ``d`` as in `space_to_depth`
    (ONNX DepthToSpace, ``mode="DCR"`` or ``"CRD"``).

    Args:
      input: a 4-dimensional array (NCHW), any `DataType`; C a multiple of ``block_size ** 2``.
      block_size: ``BlockSize``, an int >= 1.
      order: ``Order``: ``"DCR"`` or ``"CRD"``.

    Returns:
      Array of ``input``'s type, shape ``(N, C / (b * b), H * b, W * b)``.

    Raises:
      ValidationError: ``input`` is not 4-dimensional, ``block_size`` is traced, below 1
        or its square does not divide C, or ``order`` is unknown.
      TypeError: ``input`` has an unsupported type.

    Examples:
      >>> x = jnp.arange(8).reshape(1, 8, 1, 1)
      >>> depth_to_space(x, 2)[0, 0]
      Array([[0, 2],
             [4, 6]], dtype=int32)
      >>> depth_to_space(x, 2, "CRD")[0, 0]
      Array([[0, 1],
             [2, 3]], dtype=int32)
    """
    input, block, order = _check("depth_to_space", input, block_size, order)
    if input.shape[1] % (block * block):
        rule = f"be a multiple of block_size ** 2 ({block * block})"
        raise fail("depth_to_space", "input.shape[1]", rule, input.shape[1], f"C; input shape {input.shape}")
    return depth_to_space_validated(input, block, order)


def depth_to_space_validated(input: jax.Array, block_size: int, order: str) -> jax.Array:
    """`depth_to_space` on checked arguments (``order`` ``"DCR"`` or ``"CRD"``): no checks."""
    n, c, h, w = input.shape
    b = block_size
    if order == "DCR":
        blocks = jnp.transpose(input.reshape(n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2))
    else:
        blocks = jnp.transpose(input.reshape(n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3))
    return blocks.reshape(n, c // (b * b), h * b, w * b)
