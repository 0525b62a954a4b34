"""Shard-local Philox generation: each device computes the tile of the output it holds, nothing else.

`generate` turns a state into stream values of a shape (`philox_layout.stream`). Without a
sharding, XLA's partitioner splits the computation: everything is elementwise in the
output's leading axes, so a sharding of those stays local, and so does a sharding of
the last axis whose device slices hold whole blocks. With ``out_sharding`` (a
`jax.sharding.NamedSharding`, as `jax.random`'s samplers take), the values are computed
inside `jax.shard_map` (a PartitionSpec reads the mesh of `jax.set_mesh`): each
device finds its tile's offsets from `lax.axis_index` and
generates that tile with per-axis counters (`philox_layout.tile`), whatever axes the mesh
splits and wherever a device's slice cuts a block. No collectives, and the bits equal
the single-device result. Axes whose size the mesh does not divide fall back to the
partitioner, under a sharding constraint.
"""

from __future__ import annotations

import math
from typing import Any

import jax
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec, get_abstract_mesh

from dmljax._core.errors import fail
from dmljax._random import philox_layout

__all__ = ["check_out_sharding", "generate"]


def check_out_sharding(op: str, out_sharding: Any, shape: tuple[int, ...]) -> NamedSharding | None:
    """Validate ``out_sharding``: None, a NamedSharding, or a PartitionSpec under `jax.set_mesh`.

    The spec may have at most ``len(shape)`` entries. A PartitionSpec becomes a
    NamedSharding on the current (abstract) mesh, as `jax.random`'s samplers read it.
    """
    if out_sharding is None:
        return None
    mesh = get_abstract_mesh()
    if isinstance(out_sharding, PartitionSpec) and not mesh.empty:
        out_sharding = NamedSharding(mesh, out_sharding)
    if not isinstance(out_sharding, NamedSharding):
        rule = "be a jax.sharding.NamedSharding, a PartitionSpec under jax.set_mesh, or None"
        raise fail(op, "out_sharding", rule, out_sharding, f"shape {shape}")
    if len(out_sharding.spec) > len(shape):
        raise fail(op, "out_sharding.spec", f"have at most {len(shape)} entries", out_sharding.spec, f"shape {shape}")
    return out_sharding


def _names(entry: Any) -> tuple[str, ...]:
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple | list) else (entry,)


def generate(
    state: jax.Array,
    shape: tuple[int, ...],
    per_block: philox_layout.PerBlock = philox_layout._words,
    out_sharding: NamedSharding | None = None,
) -> jax.Array:
    """Stream values of ``shape`` from a uint32[6] ``state`` (see `philox_layout.stream`), optionally shard-local."""
    words = state.reshape(6)
    counter, key = tuple(words[i] for i in range(4)), (words[4], words[5])
    if out_sharding is None:
        return philox_layout.stream(counter, key, shape, per_block)
    spec = (*out_sharding.spec, *(None,) * (len(shape) - len(out_sharding.spec)))
    mesh_shape = dict(out_sharding.mesh.shape)
    parts = [math.prod(mesh_shape[name] for name in _names(entry)) for entry in spec]
    if all(p == 1 for p in parts) or any(size % p for size, p in zip(shape, parts, strict=True)):
        return lax.with_sharding_constraint(philox_layout.stream(counter, key, shape, per_block), out_sharding)
    tile_shape = tuple(size // p for size, p in zip(shape, parts, strict=True))

    def local(state: jax.Array) -> jax.Array:
        words = state.reshape(6)
        counter, key = tuple(words[i] for i in range(4)), (words[4], words[5])
        offsets = [
            0 if p == 1 else lax.axis_index(_names(entry)) * size
            for entry, p, size in zip(spec, parts, tile_shape, strict=True)
        ]
        return philox_layout.tile(counter, key, shape, tile_shape, offsets, per_block)

    mapped = jax.shard_map(local, mesh=out_sharding.mesh, in_specs=PartitionSpec(), out_specs=PartitionSpec(*spec))
    return mapped(state)
