"""Tile (DML_TILE_OPERATOR_DESC): the input repeated along every dimension.

The public function checks the repeats (static ints >= 1), then calls `tile_validated`,
which is `jnp.tile` (a broadcast and a reshape: no gather).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp

from dmljax._ops.common.indices import as_data, check_rank
from dmljax._ops.common.static_args import static_ints

__all__ = ["tile", "tile_validated"]


def tile(input: jax.typing.ArrayLike, repeats: Sequence[int]) -> jax.Array:
    """Repeat ``input`` ``repeats[i]`` times along dimension ``i``: DML_TILE_OPERATOR_DESC.

    ``output[c] = input[c % input.shape]`` with output shape ``input.shape * repeats``
    (ONNX Tile).

    Args:
      input: array of 1 to 8 dimensions, any `DataType`.
      repeats: ``Repeats``, one int >= 1 per dimension (``RepeatsCount`` is its length).

    Returns:
      Array of ``input``'s type and shape ``input.shape[i] * repeats[i]``.

    Raises:
      ValidationError: ``repeats`` is traced, of the wrong length, or holds a value below 1.
      TypeError: ``input`` has an unsupported type.

    Examples:
      >>> tile(jnp.array([[1, 2], [3, 4]]), [2, 3])
      Array([[1, 2, 1, 2, 1, 2],
             [3, 4, 3, 4, 3, 4],
             [1, 2, 1, 2, 1, 2],
             [3, 4, 3, 4, 3, 4]], dtype=int32)
    """
    input = as_data("tile", "input", input)
    check_rank("tile", "input", input.shape)
    repeats = static_ints("tile", "repeats", repeats, input.ndim, f"input shape {input.shape}", minimum=1)
    return tile_validated(input, repeats)


def tile_validated(input: jax.Array, repeats: tuple[int, ...]) -> jax.Array:
    """`tile` on checked repeats: no checks."""
    return jnp.tile(input, repeats)
