"""Per-platform formulations of the element-wise gathers and scatters: flat positions on one CPU.

XLA CPU runs a scatter (and the scatter-add that transposes a gather) as a serial loop over
indices; at one-column flat positions (``r * C + i`` for a 2-D array) instead of an
``(N, rank)`` index array it runs 1.5-5x faster. A flat position merges every axis into
one, so under sharding the partitioner would all-gather. So:

* `use_flat` says whether the flat formulation may be used at all: a concrete shape of
  rank >= 2 whose positions (plus the out-of-range sentinel) fit uint32, in a JAX process
  that sees a single device.
* `cpu_or_plain` picks the flat formulation for XLA CPU and the plain one (batching
  dimensions, partitionable) for every other platform, with `lax.platform_dependent`.
* `flat_positions` builds the positions, generic in the index dtype (uint32 or uint64).

Every one-device formulation needs `one_device_shape`. The tiled and blocked ones keep two
passes apart with a `lax.cond` whose two branches are the same function, on
`opaque_predicate` (jax/jaxlib 0.10.2; their tests check the compiled HLO).
Alternatives: docs/design/per-platform-formulations.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._ops.indices import IndexMode

__all__ = [
    "FLAT_LIMIT",
    "clamped",
    "concrete",
    "cpu_or_plain",
    "flat_positions",
    "one_device_shape",
    "opaque_predicate",
    "use_flat",
]

# Flat positions are uint32, with ``prod(shape)`` itself as the out-of-range sentinel.
FLAT_LIMIT = 2**32


def concrete(shape: tuple) -> bool:
    """Whether every dimension of ``shape`` is a known integer (not symbolic, as in `jax.export`)."""
    return all(isinstance(d, int | np.integer) for d in shape)


def one_device_shape(shape: tuple) -> bool:
    """Whether a one-device formulation may be traced for ``shape``: concrete, and one device.

    The CPU-specific formulations and the GPU's whole-output ones (Philox's flat row,
    gather_elements' gradient blocks) need it: with several devices a program may be
    partitioned (JAX's abstract values do not say how at trace time), and these
    formulations merge axes or read one element. So a one-device program on a host with
    several devices gets the plain formulations (deciding at lowering time was tried and
    reverted: docs/design/per-platform-formulations.md).

    Examples:
      >>> one_device_shape((3, 4))  # the doctests run in a process with one device
      True
      >>> import jax.export
      >>> one_device_shape(jax.export.symbolic_shape("b, 4"))
      False
    """
    return concrete(shape) and jax.device_count() == 1


def opaque_predicate(x: jax.Array) -> jax.Array:
    """A bool scalar XLA cannot fold: whether the low bit of ``x``'s first element is 0.

    For a ``lax.cond`` whose two branches are the same function, so its value never matters
    (see the module doc). ``x``: integer or floating, not empty.

    Examples:
      >>> opaque_predicate(jnp.array([1.0, 2.0])), opaque_predicate(jnp.array([3, 4], jnp.uint32))
      (Array(True, dtype=bool), Array(False, dtype=bool))
    """
    first = lax.slice(x.reshape(-1), (0,), (1,))
    if not jnp.issubdtype(first.dtype, jnp.unsignedinteger):
        first = lax.bitcast_convert_type(first, jnp.dtype(f"uint{8 * first.dtype.itemsize}"))
    return (first[0] & 1) == 0


def use_flat(shape: tuple) -> bool:
    """Whether the flat formulation may be used for an array of ``shape`` (see the module doc).

    Examples:
      >>> use_flat((3, 4))  # one device in this process
      True
      >>> use_flat((12,)), use_flat((2**16, 2**16))
      (False, False)
    """
    return len(shape) >= 2 and one_device_shape(shape) and math.prod(shape) < FLAT_LIMIT


def cpu_or_plain(flat: Callable, plain: Callable, *args: jax.Array) -> jax.Array:
    """``flat(*args)`` in programs compiled for XLA CPU, ``plain(*args)`` on other platforms."""
    return lax.platform_dependent(*args, cpu=flat, default=plain)


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
