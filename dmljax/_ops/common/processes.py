"""Calls that span processes: telling them apart, and one small exchange of host facts among them.

A concrete array on devices of more than one process (`spans_processes`) means the call is a
multi-process computation that every one of those processes makes. A decision such a call
takes on host values (the range check of NumPy indices) must come out the same in each, or
the processes that go on wait for the others in the operator's collectives forever.
`exchange` gives every process the fixed-size rows of all of them (one all-gather), so each
can decide from the same facts. Design: docs/design/index-checks.md, "Several processes".
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

__all__ = ["exchange", "spans_processes"]


def spans_processes(array: jax.Array) -> bool:
    """Whether ``array`` is concrete and has devices in another process than this one.

    Costs one ``isinstance`` for a single-device array (the single-process eager path).

    Examples:
      >>> spans_processes(jnp.arange(3))
      False
    """
    if isinstance(array, jax.core.Tracer) or isinstance(array.sharding, SingleDeviceSharding):
        return False
    return not array.is_fully_addressable


@functools.lru_cache(maxsize=16)
def _all_gather(devices: tuple[jax.Device, ...]) -> tuple[NamedSharding, Callable[[jax.Array], jax.Array]]:
    """A sharding with one row per device, and the program that replicates such an array on every device."""
    mesh = Mesh(np.array(devices), ("devices",))
    return NamedSharding(mesh, P("devices")), jax.jit(lambda rows: rows, out_shardings=NamedSharding(mesh, P()))


def exchange(row: np.ndarray, devices: frozenset[jax.Device] | set[jax.Device]) -> list[np.ndarray]:
    """Every process's ``row`` (a 1-D uint8 array of the same size everywhere), in process order.

    Every process that holds one of ``devices`` must call it, in the same order relative to
    its other calls on those devices: the rows travel in one all-gather over ``devices``.

    Examples:
      >>> [r.tolist() for r in exchange(np.array([7, 8], np.uint8), {jax.devices()[0]})]
      [[7, 8]]
    """
    ordered = tuple(sorted(devices, key=lambda d: d.id))
    sharding, replicate = _all_gather(ordered)
    local = np.asarray(row, np.uint8)[None]
    rows = jax.make_array_from_callback((len(ordered), local.shape[1]), sharding, lambda index: local)
    gathered = np.asarray(replicate(rows))  # replicated: every process holds all rows
    first: dict[int, np.ndarray] = {}
    for device, value in zip(ordered, gathered, strict=True):
        first.setdefault(device.process_index, value)
    return [first[p] for p in sorted(first)]
