"""An ordered reduction in a partitioned program: each device folds the replicated operands.

XLA's partitioner splits a scatter by its updates and all-reduces the partial results,
which is not ONNX's loop order (docs/design/ordered-reductions.md). `replicated` wraps the
reduction in a `jax.experimental.custom_partitioning` whose partition callback asks for
every operand and the result replicated, so each device runs the unpartitioned program
(one in-order XLA scatter on XLA CPU, the sorted fold elsewhere) on the whole operands:
the result is the one device's, bit for bit. A program that is not partitioned (one
device, `jax.export` of one device) inlines the function. `custom_partitioning` has no
batching rule: the ordered add's primitive batches before it is lowered
(`dmljax._ops.ordered.ordered_add`), so `replicated` has none; the ordered ``"mul"`` is a
``jax.custom_jvp`` that `jax.vmap` traces through, so `replicated_batchable` adds a
`jax.custom_batching.custom_vmap` whose rule is `dmljax._ops.common.positions.batch_rows`
(one reduction of the concatenated rows, targets offset by row; row by row where the
offsets do not fit).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
from jax.experimental.custom_partitioning import custom_partitioning
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from dmljax._ops.common.positions import batch_rows

__all__ = ["replicated", "replicated_batchable"]


def replicated(
    fun: Callable, reduction: str, indices_are_sorted: bool, flat: jax.Array, targets: jax.Array, updates: jax.Array
) -> jax.Array:
    """``fun(flat, targets, updates, reduction, indices_are_sorted, one_device=False)``, on
    replicated operands wherever the program is partitioned (see the module doc).

    ``fun``: a module-level function (a static argument: hashed); ``flat``: 1-D;
    ``targets``, ``updates``: 1-D of one length, unsigned targets (``>= flat.size`` dropped).
    No batching rule: for a caller that batches before (the ordered add's primitive).
    """
    flat, targets, updates = (_whole(a) for a in (flat, targets, updates))
    return _call(fun, reduction, indices_are_sorted, flat, targets, updates)


def replicated_batchable(
    fun: Callable, reduction: str, indices_are_sorted: bool, flat: jax.Array, targets: jax.Array, updates: jax.Array
) -> jax.Array:
    """`replicated` under `jax.vmap` too: a batch is one call on the concatenated rows
    (`dmljax._ops.common.positions.batch_rows`)."""
    call = functools.partial(_call, fun, reduction, indices_are_sorted)

    @jax.custom_batching.custom_vmap
    def run(flat: jax.Array, targets: jax.Array, updates: jax.Array) -> jax.Array:
        return call(*(_whole(a) for a in (flat, targets, updates)))

    @run.def_vmap
    def _rule(
        size: int, batched: list[bool], flat: jax.Array, targets: jax.Array, updates: jax.Array
    ) -> tuple[jax.Array, bool]:
        # the rows' dropped targets interleave with the next rows': no longer sorted
        whole = functools.partial(replicated_batchable, fun, reduction, False)
        dims = tuple(0 if b else None for b in batched)
        return batch_rows((flat, targets, updates), dims, whole, run)[0], True

    return run(flat, targets, updates)


def _whole(x: jax.Array) -> jax.Array:
    """``x`` constrained to be replicated before the partitioned call.

    Shardy may otherwise give an operand a sharding over a sub-axis of the mesh (an uneven
    concatenation of sharded and replicated arrays, as jraph's self edges make, came out
    split in 2 over 8 devices), which `custom_partitioning` cannot express over the mesh's
    axes: the compilation failed (IndivisibleError). Replicated operands are what the
    partition asks for anyway. Only under `jax.set_mesh` (the context mesh): without one, a mesh
    of our own would clash with the operands' (other axis names).
    """
    if not jax.sharding.get_abstract_mesh().empty:
        return jax.lax.with_sharding_constraint(x, P())
    return x  # no context mesh: a mesh of our own would clash with the operands' (another axis name)


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
