"""Per-platform formulations of the element-wise gathers and scatters: flat positions on one CPU.

XLA CPU runs a scatter (and the scatter-add that transposes a gather) as a serial loop over
indices. An element-wise scatter or gather with batching dimensions becomes a loop over an
``(N, rank)`` index array; the same operation on the flattened array at one-column flat
positions (``r * C + i`` for a 2-D array) runs 1.5-5x faster there. But a flat position
merges every axis into one: under sharding, XLA's partitioner cannot keep the non-axis
dimensions local and all-gathers the data, the indices and the cotangent. So:

* `use_flat` says whether the flat formulation may be used at all: a concrete shape (not
  symbolic, for `jax.export`) of rank >= 2 whose positions (plus the out-of-range sentinel)
  fit uint32, and a JAX process that sees a single device (with several, a program may be
  partitioned; JAX's abstract values do not say how at trace time).
* `cpu_or_plain` picks the flat formulation for XLA CPU and the plain one (batching
  dimensions, partitionable, what JAX's own transposes use) for every other platform, with
  `lax.platform_dependent`: only the chosen branch is compiled.
* `flat_positions` builds the positions, generic in the index dtype (uint32 or uint64).

Every CPU-specific formulation (these, `dmljax._buffers.transpose`, `dmljax._ops.gather_blocked`) needs
`one_device_shape`: a concrete shape in a process that sees one device. The tiled and
blocked ones also keep two passes apart, which XLA CPU would fuse into one loop:
`lax.optimization_barrier` is expanded away before fusion and a `lax.cond` on a constant is
folded, but a `lax.cond` whose two branches are the same function, on `opaque_predicate`
(a value XLA cannot know), holds (jax/jaxlib 0.10.2; their tests check the compiled HLO).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["concrete_shape", "cpu_or_plain", "one_device_shape", "opaque_predicate"]


def concrete_shape(shape: tuple) -> bool:
    """Whether every dimension of ``shape`` is a known integer (not symbolic, as in `jax.export`)."""
    return all(isinstance(d, int | np.integer) for d in shape)


def one_device_shape(shape: tuple) -> bool:
    """Whether a one-device formulation may be traced for ``shape``: concrete_shape, and one device.

    The CPU-specific formulations and the GPU's whole-output ones (Philox's flat row,
    gather_elements' gradient blocks) need it: with several devices a program may be
    partitioned (JAX's abstract values do not say how at trace time), and these
    formulations merge axes or read one element. So a one-device program on a host with
    several devices gets the plain formulations. Tried and reverted: deciding when the
    program is lowered, where JAX knows the device count (a `lax.switch` on a primitive
    that lowers to that constant). One-device programs folded the conditional, but
    partitioned ones kept both branches: on 8 host devices, gather_elements' backward kept
    the dead flat branch, its all-reduce included, inside a conditional that also keeps
    the live branch from fusing with its neighbours. That needs a primitive that lowers
    only the chosen branch, with its own differentiation and batching rules.
    """
    return concrete_shape(shape) and jax.device_count() == 1


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


def cpu_or_plain(flat: Callable, plain: Callable, *args: jax.Array) -> jax.Array:
    """``flat(*args)`` in programs compiled for XLA CPU, ``plain(*args)`` on other platforms."""
    return lax.platform_dependent(*args, cpu=flat, default=plain)
