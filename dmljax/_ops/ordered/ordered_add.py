"""The ordered float add as a linear JAX primitive, so forward mode combines in order too.

`ordered_add` (``ordered_add_p``) folds ``updates`` into ``flat`` at ``targets`` in the
updates' order, as ONNX's loop does. Its formulation (one in-order XLA scatter on one CPU
device, the sorted fold elsewhere, through `dmljax._ops.ordered.ordered_partition` on several
devices) is `dmljax._ops.ordered.reductions`' and is given here by `define_formulation`; the
primitive adds the rules that a ``jax.custom_jvp`` could not give a linear function:

* lowering: `mlir.lower_fun` of the formulation on every platform (dmljax's config is read
  when the primitive is lowered; it is part of JAX's cache keys). Whether the program may be
  partitioned (several devices, concrete shapes, config ``ordered_replicated_partitions``)
  is decided when it is bound, as before: then it is ``ordered_add_replicated_p``, whose
  formulation runs in a `jax.experimental.custom_partitioning` and which, like that, asks
  JAX for the devices when it is lowered;
* JVP: the primitive itself on the tangents, so ``jax.jvp`` and ``jax.jacfwd`` combine in
  the loop's order, bit for bit the primal operation applied to the tangents (a float XLA
  scatter-add would combine in the GPU's atomic order);
* transpose: the cotangent to ``flat``; to each update, the cotangent at its target
  (`ordered_take`: 0 for a dropped target), what the transpose of XLA's scatter-add gives;
* batching: a batch becomes one reduction of the concatenated rows (targets offset by
  row; dropped ones stay dropped), row by row where the offsets would not fit.

`ordered_take` (``ordered_take_p``) is its dual: ``flat[targets]`` (0 for a dropped target),
a linear primitive whose transpose is `ordered_add` of the cotangent, so a gather written with
it (the gradients of dmljax's gathers, `dmljax._ops.index.gather_grad`) scatters its
cotangent in the updates' order, and each transposes into the other at every order. It is
registered with `dmljax._core.ordered_hooks` at import, for `read_tensor`'s overlapping
strides (`dmljax._buffers` may not import ``_ops``).

Design notes: docs/design/ordered-reductions.md ("Forward mode"), docs/design/gather-gradient.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters import ad, batching, mlir

from dmljax._core import jax_compat, ordered_hooks
from dmljax._core.config import config
from dmljax._core.platform import concrete_shape
from dmljax._ops.common.positions import batch_rows

__all__ = [
    "PRIMITIVES",
    "define_formulation",
    "formulation",
    "ordered_add",
    "ordered_add_p",
    "ordered_add_replicated_p",
    "ordered_take",
    "ordered_take_p",
    "take_formulation",
]

# One device: the formulation `in_order`; several (replicated=True): through ordered_partition.
ordered_add_p = jax.extend.core.Primitive("dmljax_ordered_add")
ordered_add_replicated_p = jax.extend.core.Primitive("dmljax_ordered_add_replicated")
PRIMITIVES = {ordered_add_p: False, ordered_add_replicated_p: True}  # primitive -> replicated
# ``flat[targets]``, 0 where dropped: the gather whose transpose is `ordered_add`.
ordered_take_p = jax.extend.core.Primitive("dmljax_ordered_take")

# ``fun(flat, targets, updates, indices_are_sorted, replicated)``: set by `define_formulation`.
_FORMULATION: list[Callable[..., jax.Array]] = []


def ordered_add(flat: jax.Array, targets: jax.Array, updates: jax.Array, indices_are_sorted: bool = False) -> jax.Array:
    """``flat`` with ``updates`` added at ``targets`` one after the other, in their order.

    Args:
      flat: 1-D float or complex array.
      targets: 1-D unsigned positions into ``flat``; values ``>= flat.size`` are dropped.
      updates: 1-D array of ``targets.shape`` and ``flat``'s type, in loop order.
      indices_are_sorted: the caller promises ``targets`` ascending (dropped ones included).

    Examples:
      >>> import dmljax  # the formulation is defined when dmljax is imported
      >>> t = jnp.array([1, 1, 1, 5], jnp.uint32)
      >>> ordered_add(jnp.zeros(2), t, jnp.array([1e8, -1e8, 1.0, 7.0]))
      Array([0., 1.], dtype=float32)
      >>> jax.jvp(lambda u: ordered_add(jnp.zeros(2), t, u), (jnp.ones(4),), (jnp.array([1e8, 1.0, -1e8, 7.0]),))[1]
      Array([0., 0.], dtype=float32)
    """
    whole = concrete_shape(flat.shape + targets.shape)
    replicated = config.ordered_replicated_partitions and jax.device_count() > 1 and whole
    prim = ordered_add_replicated_p if replicated else ordered_add_p
    return prim.bind(flat, targets, updates, indices_are_sorted=bool(indices_are_sorted))


def define_formulation(fun: Callable[..., jax.Array]) -> Callable[..., jax.Array]:
    """Make ``fun(flat, targets, updates, indices_are_sorted, replicated)`` the primitives'
    formulation on every platform (`dmljax._ops.ordered.reductions` calls it once, at import); returns ``fun``."""
    _FORMULATION[:] = [fun]
    for prim, replicated in PRIMITIVES.items():
        lowering = functools.partial(formulation, replicated=replicated)
        mlir.register_lowering(prim, mlir.lower_fun(lowering, multiple_results=False))
    return fun


def formulation(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, *, indices_are_sorted: bool, replicated: bool
) -> jax.Array:
    """The formulation a primitive lowers to, as plain JAX (``replicated``: `ordered_add_replicated_p`'s)."""
    return _FORMULATION[0](flat, targets, updates, indices_are_sorted, replicated)


def _abstract_eval(flat: Any, targets: Any, updates: Any, *, indices_are_sorted: bool) -> Any:
    vma = getattr(flat, "vma", None)
    if vma is None:
        return flat
    return flat.update(vma=frozenset().union(*(getattr(a, "vma", frozenset()) for a in (flat, targets, updates))))


def _jvp(prim: Any, primals: tuple, tangents: tuple, *, indices_are_sorted: bool) -> tuple:
    flat, targets, updates = primals
    d_flat, _, d_updates = tangents
    out = prim.bind(flat, targets, updates, indices_are_sorted=indices_are_sorted)
    # JAX calls the rule only with a tangent that is not a symbolic zero (not the targets')
    d_flat, d_updates = ad.instantiate_zeros(d_flat), ad.instantiate_zeros(d_updates)
    return out, prim.bind(d_flat, targets, d_updates, indices_are_sorted=indices_are_sorted)


def _transpose(ct: Any, flat: Any, targets: Any, updates: Any, *, indices_are_sorted: bool) -> list[Any]:
    if type(ct) is ad.Zero:
        return [None, None, None]
    ct_flat = ct if ad.is_undefined_primal(flat) else None
    ct_updates = None
    if ad.is_undefined_primal(updates):  # as lax.scatter_add's transpose: a gather, 0 where dropped
        ct_updates = ordered_take(ad.instantiate_zeros(ct), targets)
    return [ct_flat, None, ct_updates]


def _batch(prim: Any, args: tuple, dims: tuple, *, indices_are_sorted: bool) -> tuple[jax.Array, int]:
    whole = functools.partial(prim.bind, indices_are_sorted=False)  # a row's dropped targets precede the next row's
    per_row = functools.partial(prim.bind, indices_are_sorted=indices_are_sorted)
    return batch_rows(args, dims, whole, per_row)


def ordered_take(flat: jax.Array, targets: jax.Array) -> jax.Array:
    """``flat[targets]``, 0 where a target is ``>= flat.size``: a gather whose transpose is `ordered_add`.

    Its JVP is itself on the tangent; its transpose adds the cotangent into ``flat`` at
    ``targets`` in the cotangent's row-major order (`ordered_add`), where XLA's transpose of
    a gather is a scatter-add in no fixed order off one CPU device.

    Args:
      flat: 1-D array.
      targets: unsigned positions into ``flat``, any shape; values ``>= flat.size`` read 0.

    Returns:
      Array of ``targets.shape`` and ``flat``'s type.

    Examples:
      >>> import dmljax  # the ordered add's formulation is defined when dmljax is imported
      >>> t = jnp.array([1, 1, 1, 5], jnp.uint32)
      >>> ordered_take(jnp.array([2.0, 3.0]), t)
      Array([3., 3., 3., 0.], dtype=float32)
      >>> jax.grad(lambda x: ordered_take(x, t) @ jnp.array([1e8, 1.0, -1e8, 7.0]))(jnp.zeros(2))
      Array([0., 0.], dtype=float32)
    """
    return ordered_take_p.bind(flat, targets)


def take_formulation(flat: jax.Array, targets: jax.Array) -> jax.Array:
    """What `ordered_take_p` lowers to, as plain JAX: one gather at unsigned positions, 0 where dropped."""
    dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    mode = lax.GatherScatterMode.FILL_OR_DROP
    return lax.gather(flat, targets[..., None], dnums, (1,), mode=mode, fill_value=0)


def _take_abstract_eval(flat: Any, targets: Any) -> Any:
    vma = getattr(flat, "vma", None)
    if vma is None:
        return flat.update(shape=targets.shape, weak_type=False)
    vma = frozenset().union(vma, getattr(targets, "vma", frozenset()))
    return flat.update(shape=targets.shape, weak_type=False, vma=vma)


def _take_jvp(primals: tuple, tangents: tuple) -> tuple:
    flat, targets = primals
    return ordered_take(flat, targets), ordered_take(ad.instantiate_zeros(tangents[0]), targets)


def _take_transpose(ct: Any, flat: Any, targets: Any) -> list[Any]:
    if type(ct) is ad.Zero or not ad.is_undefined_primal(flat):
        return [None, None]
    aval = flat.aval
    zeros = lax.full(aval.shape, 0, aval.dtype)
    return [ordered_add(zeros, targets.reshape(-1), ct.reshape(-1)), None]


def _take_batch(args: tuple, dims: tuple) -> tuple[jax.Array, int]:
    """vmap: one take from the concatenated rows, each row's targets offset by its row (dropped
    ones stay dropped); row by row where the offsets would not fit the targets' type."""
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    flat, targets = (
        jnp.broadcast_to(a, (size, *a.shape)) if d is None else jnp.moveaxis(a, d, 0)
        for a, d in zip(args, dims, strict=True)
    )
    n = flat.shape[1]
    if not (concrete_shape((size, n)) and size * n < np.iinfo(targets.dtype).max):
        return lax.map(lambda row: ordered_take(*row), (flat, targets)), 0
    row = lax.broadcasted_iota(targets.dtype, targets.shape, 0) * np.asarray(n, targets.dtype)
    dump = np.asarray(size * n, targets.dtype)
    offset = jnp.where(targets < np.asarray(n, targets.dtype), targets + row, dump)
    return ordered_take(flat.reshape(-1), offset), 0


ordered_take_p.def_impl(functools.partial(jax_compat.apply_primitive, ordered_take_p))
ordered_take_p.def_abstract_eval(_take_abstract_eval)
mlir.register_lowering(ordered_take_p, mlir.lower_fun(take_formulation, multiple_results=False))
ad.primitive_jvps[ordered_take_p] = _take_jvp
ad.primitive_transposes[ordered_take_p] = _take_transpose
batching.primitive_batchers[ordered_take_p] = _take_batch
ordered_hooks.register_take(ordered_take)  # for the families below _ops (`dmljax._buffers.strided`)

for _prim in PRIMITIVES:
    _prim.def_impl(functools.partial(jax_compat.apply_primitive, _prim))
    _prim.def_abstract_eval(_abstract_eval)
    ad.primitive_jvps[_prim] = functools.partial(_jvp, _prim)
    ad.primitive_transposes[_prim] = _transpose
    batching.primitive_batchers[_prim] = functools.partial(_batch, _prim)
# its formulation holds a custom_partitioning, which needs them
jax_compat.prim_requires_devices_during_lowering.add(ordered_add_replicated_p)
