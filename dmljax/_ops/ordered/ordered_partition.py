"""An ordered reduction in a partitioned program: each device folds the replicated operands.

XLA's partitioner splits a scatter by its updates and all-reduces the partial results,
which is not ONNX's loop order (docs/design/ordered-reductions.md). `replicated` wraps the
reduction in a `jax.experimental.custom_partitioning` whose partition callback asks for
every operand and the result replicated, so each device runs the unpartitioned program
(one in-order XLA scatter on XLA CPU, the sorted fold elsewhere) on the whole operands:
the result is the one device's, bit for bit. A program that is not partitioned (one
device, `jax.export` of one device) inlines the function. `custom_partitioning` has no
batching rule, so a `jax.custom_batching.custom_vmap` folds a batch into one reduction of
the concatenated rows (targets offset by row; dropped ones stay dropped).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental.custom_partitioning import custom_partitioning
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from dmljax._core.limits import UINT32_MAX

__all__ = ["replicated"]


def replicated(
    fun: Callable, reduction: str, indices_are_sorted: bool, flat: jax.Array, targets: jax.Array, updates: jax.Array
) -> jax.Array:
    """``fun(flat, targets, updates, reduction, indices_are_sorted, one_device=False)``, on
    replicated operands wherever the program is partitioned (see the module doc).

    ``fun``: a module-level function (a static argument: hashed); ``flat``: 1-D;
    ``targets``, ``updates``: 1-D of one length, unsigned targets (``>= flat.size`` dropped).
    """
    flat, targets, updates = (_whole(a) for a in (flat, targets, updates))
    return _batched(fun, reduction, indices_are_sorted, flat, targets, updates)


def _whole(x: jax.Array) -> jax.Array:
    """``x`` constrained to be replicated before the partitioned call.

    Shardy may otherwise give an operand a sharding over a sub-axis of the mesh (an uneven
    concatenation of sharded and replicated arrays, as jraph's self edges make, came out
    split in 2 over 8 devices), which `custom_partitioning` cannot express over the mesh's
    axes: the compilation failed (IndivisibleError). Replicated operands are what the
    partition asks for anyway. Under `jax.set_mesh` the context mesh, else one over every device.
    """
    if not jax.sharding.get_abstract_mesh().empty:
        return jax.lax.with_sharding_constraint(x, P())
    return jax.lax.with_sharding_constraint(x, NamedSharding(Mesh(np.array(jax.devices()), ("devices",)), P()))


@functools.partial(custom_partitioning, static_argnums=(0, 1, 2))
def _call(
    fun: Callable, reduction: str, indices_are_sorted: bool, flat: jax.Array, targets: jax.Array, updates: jax.Array
) -> jax.Array:
    return fun(flat, targets, updates, reduction, indices_are_sorted, one_device=False)


def _partition(
    fun: Callable, reduction: str, indices_are_sorted: bool, mesh: Any, arg_shapes: Any, result_shape: Any
) -> tuple[Any, Callable, NamedSharding, tuple[NamedSharding, ...]]:
    """Every operand and the result replicated; each device runs ``fun`` on the whole operands."""
    whole = NamedSharding(mesh, P())

    def lower(flat: jax.Array, targets: jax.Array, updates: jax.Array) -> jax.Array:
        return fun(flat, targets, updates, reduction, indices_are_sorted, one_device=False)

    return mesh, lower, whole, (whole,) * len(arg_shapes)


def _infer(
    fun: Callable, reduction: str, indices_are_sorted: bool, mesh: Any, arg_shapes: Any, result_shape: Any
) -> NamedSharding:
    return NamedSharding(mesh, P())


_call.def_partition(
    partition=_partition,
    infer_sharding_from_operands=_infer,
    sharding_rule="n, m, m -> n",
    need_replication_factors=("n", "m"),
)


def _batched(
    fun: Callable, reduction: str, indices_are_sorted: bool, flat: jax.Array, targets: jax.Array, updates: jax.Array
) -> jax.Array:
    call = functools.partial(_call, fun, reduction, indices_are_sorted)

    @jax.custom_batching.custom_vmap
    def run(flat: jax.Array, targets: jax.Array, updates: jax.Array) -> jax.Array:
        return call(flat, targets, updates)

    @run.def_vmap
    def _rule(
        size: int, batched: list[bool], flat: jax.Array, targets: jax.Array, updates: jax.Array
    ) -> tuple[jax.Array, bool]:
        operands = (flat, targets, updates)
        flat, targets, updates = (
            x if b else jnp.broadcast_to(x, (size, *x.shape)) for x, b in zip(operands, batched, strict=True)
        )
        n, m = flat.shape[1], targets.shape[1]
        if size * n >= UINT32_MAX and targets.dtype == np.uint32:  # the offsets would not fit: one row at a time
            return lax.map(lambda a: run(*a), (flat, targets, updates)), True
        row = lax.broadcasted_iota(targets.dtype, (size, m), 0) * np.asarray(n, targets.dtype)
        dump = np.asarray(size * n, targets.dtype)
        offset = jnp.where(targets < np.asarray(n, targets.dtype), targets + row, dump)
        # the rows' dropped targets interleave with the next rows': no longer sorted
        out = _batched(fun, reduction, False, flat.reshape(-1), offset.reshape(-1), updates.reshape(-1))
        return out.reshape(size, n), True

    return run(flat, targets, updates)
