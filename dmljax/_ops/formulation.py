"""The flat formulation of the element-wise gathers and scatters on one CPU device.

XLA CPU runs an element-wise scatter or gather with batching dimensions as a loop over an
``(N, rank)`` index array; the same operation on the flattened array at one-column flat
positions runs faster there (`dmljax._core.platform` says when and how a formulation is
chosen per platform; docs/design/per-platform-formulations.md has the figures).
`use_flat` says whether the flat formulation may be used, `flat_positions` builds the
positions, generic in the index dtype, and `clamped` normalises indices for both.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.platform import one_device_shape
from dmljax._ops.indices import IndexMode

__all__ = ["FLAT_LIMIT", "clamped", "flat_positions", "use_flat"]

# Flat positions are uint32, with ``prod(shape)`` itself as the out-of-range sentinel.
FLAT_LIMIT = 2**32


def use_flat(shape: tuple) -> bool:
    """Whether the flat formulation may be used for an array of ``shape`` (see the module doc).

    Examples:
      >>> use_flat((3, 4))  # one device in this process
      True
      >>> use_flat((12,)), use_flat((2**16, 2**16))
      (False, False)
    """
    if not config.flat_formulations:
        return False
    return len(shape) >= 2 and one_device_shape(shape) and math.prod(shape) < FLAT_LIMIT


def clamped(index: jax.Array, size: int, mode: IndexMode) -> jax.Array:
    """Normalised (unsigned) indices in ``[0, size)``; `FILL` keeps out-of-range ones (dropped)."""
    if mode is IndexMode.FILL:
        return index
    return jnp.minimum(index, jnp.asarray(size - 1, index.dtype))  # size may be symbolic (jax.export)


def flat_positions(index: jax.Array, shape: tuple[int, ...], axis: int, mode: IndexMode) -> jax.Array:
    """uint32 positions in the flattened array of ``shape`` of each element of ``index``.

    ``index`` holds normalised indices along ``axis`` (any unsigned dtype); element ``p`` of
    the result is the flat position of ``p`` with ``p[axis]`` replaced by ``index[p]`` (clamped
    unless ``mode`` is `FILL`, where out-of-range indices give ``prod(shape)``, dropped by a
    `FILL_OR_DROP` gather or scatter). Needs ``prod(shape) < 2**32`` (`use_flat`).
    """
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    along = clamped(index, shape[axis], mode)
    lin = along.astype(jnp.uint32) * np.uint32(strides[axis])  # wrapped values: replaced below
    for d, stride in enumerate(strides):
        if d != axis:
            lin = lin + lax.broadcasted_iota(jnp.uint32, index.shape, d) * np.uint32(stride)
    if mode is IndexMode.FILL:  # keep out-of-range elements out of range (filled or dropped)
        lin = jnp.where(along < shape[axis], lin, np.uint32(math.prod(shape)))
    return lin
