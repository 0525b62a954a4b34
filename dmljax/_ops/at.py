"""Scatters and gathers at unsigned flat positions along axis 0 (`scatter_at`, `gather_at`).

jnp's ``x.at[t]`` converts uint32 positions to int32 when ``jax_enable_x64`` is off, so a
position of 2^31 or more would wrap (and then count from the end); `lax.scatter` and
`lax.gather` take them as they are (docs/design/ordered-reductions.md, "Unsigned positions").
"""

from __future__ import annotations

import jax
from jax import lax

__all__ = ["gather_at", "scatter_at"]

_SCATTERS = {
    "none": lax.scatter,
    "add": lax.scatter_add,
    "mul": lax.scatter_mul,
    "max": lax.scatter_max,
    "min": lax.scatter_min,
}


def scatter_at(
    x: jax.Array, positions: jax.Array, updates: jax.Array, reduction: str = "none", unique: bool = False
) -> jax.Array:
    """``x.at[positions].<reduction>(updates, mode="drop")`` along axis 0, positions kept unsigned.

    ``positions``: 1-D unsigned, ``>= x.shape[0]`` dropped; ``updates``:
    ``positions.shape + x.shape[1:]``; ``reduction``: ``"none"`` (overwrite), ``"add"``,
    ``"mul"``, ``"max"`` or ``"min"``; ``unique``: the positions are promised distinct.

    Examples:
      >>> import jax.numpy as jnp
      >>> scatter_at(jnp.zeros(3), jnp.array([2, 2, 7], jnp.uint32), jnp.array([1.0, 2.0, 4.0]), "add")
      Array([0., 0., 3.], dtype=float32)
    """
    window = tuple(range(1, x.ndim))
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=window, inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    drop = lax.GatherScatterMode.FILL_OR_DROP
    return _SCATTERS[reduction](x, positions[:, None], updates, dnums, unique_indices=unique, mode=drop)


def gather_at(x: jax.Array, positions: jax.Array) -> jax.Array:
    """``x.at[positions].get(mode="clip")`` for 1-D ``x`` and unsigned ``positions``, kept unsigned.

    Examples:
      >>> import jax.numpy as jnp
      >>> gather_at(jnp.arange(3.0), jnp.array([2, 0, 9], jnp.uint32))
      Array([2., 0., 2.], dtype=float32)
    """
    dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    return lax.gather(x, positions[..., None], dnums, (1,), mode=lax.GatherScatterMode.CLIP)
