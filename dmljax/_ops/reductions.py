"""Scatter reductions combined exactly as ONNX's sequential loop combines them.

ONNX ScatterND (opsets 16/18) and ScatterElements (16/18) define ``reduction`` by a
row-major loop over the updates: ``output[target] = f(output[target], update)``, one update
after the other (https://onnx.ai/onnx/operators/onnx__ScatterND.html,
https://onnx.ai/onnx/operators/onnx__ScatterElements.html). For a float ``"add"`` or
``"mul"`` with duplicate targets the result depends on that order (``(1e8 + 1) - 1e8`` is
0 in float32, ``1e8 + (1 - 1e8)`` is 1), and XLA's scatter-add gives no order (GPU
atomics differ between runs). `combine` therefore never lets a scatter combine values:

each round of a `lax.while_loop` finds, for every target, its first pending update (a
scatter-min of the updates' loop positions: exact in any order), gathers the current
output there, applies ``f`` element-wise and writes the results back with an overwrite
scatter whose targets are unique. After round ``k`` every output element holds the fold
of its first ``k`` updates, ``((x + u0) + u1) + ...``, bit for bit as the loop does it.

Cost: R rounds, R the largest number of updates of one element (1 without duplicates),
each a scatter-min, two gathers and a scatter of the M updates: O(R M), growing linearly
with the largest duplicate count (M updates of one element: O(M^2)). Integer
``"add"``/``"mul"`` (wrapping arithmetic is associative and commutative) and every
``"max"``/``"min"`` are exact in any order: they are one XLA scatter (``x.at[t].add(u)``...).
So is a float ``"add"`` (and a real ``"mul"``) in a one-device program compiled for XLA CPU,
whose scatter runs one loop over the updates in their order (config ``cpu_ordered_scatter``;
a partitioned program combines partial results, so several devices keep the rounds).
Figures, the evidence and the alternatives measured: docs/design/ordered-reductions.md.

Gradients: ``"add"`` passes the cotangent to the input and to every update;
``"mul"`` gives ``d x = g * prod(u)`` and ``d u_i = g * x * prod(u_j, j != i)`` (no
division: exclusive products within each target's run, found with one stable sort by
target, so the gradient costs a sort the forward pass avoids); ``"max"``/``"min"`` are JAX's
own scatter rules (ties share the cotangent equally, the input's value included).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.errors import fail
from dmljax._core.platform import concrete_shape, cpu_or_plain, one_device_shape
from dmljax._ops.extremal import combine_extremal
from dmljax._ops.indices import position_dtype, size_scalar
from dmljax._ops.positions import gather_at, scatter_at

__all__ = [
    "REDUCTIONS",
    "check_reduction",
    "combine",
    "cpu_scatter_in_order",
]

# ONNX's reduction attribute (ScatterND 16/18, ScatterElements 16/18).
REDUCTIONS = ("none", "add", "mul", "max", "min")

_OPS = {"add": lax.add, "mul": lax.mul}


def check_reduction(op: str, reduction: object) -> str:
    """Validate ``reduction``; return it.

    Raises:
      ValidationError: ``reduction`` is none of `REDUCTIONS`.
    """
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        names = ", ".join(repr(r) for r in REDUCTIONS)
        raise fail(op, "reduction", f"be one of {names}", reduction)
    return reduction


def combine(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str, indices_are_sorted: bool = False
) -> jax.Array:
    """Fold ``updates`` into ``flat`` at ``targets`` in the order of ``updates`` (ONNX's loop).

    Args:
      flat: 1-D array, the flattened input.
      targets: 1-D unsigned positions into ``flat``; values ``>= flat.size`` are dropped.
      updates: 1-D array of ``targets.shape`` and ``flat``'s type, in loop order.
      reduction: ``"add"``, ``"mul"``, ``"max"`` or ``"min"``.
      indices_are_sorted: a promise that the in-range targets are nondecreasing (dropped
        ones may lie anywhere); not used yet.

    Returns:
      ``flat`` with every update combined into its target.

    Examples:
      >>> x = jnp.zeros(2, jnp.float32)
      >>> combine(x, jnp.array([0, 0, 0], jnp.uint32), jnp.array([1e8, 1.0, -1e8]), "add")
      Array([0., 0.], dtype=float32)
      >>> combine(x, jnp.array([1, 1, 1], jnp.uint32), jnp.array([1e8, -1e8, 1.0]), "add")
      Array([0., 1.], dtype=float32)
    """
    if reduction in ("max", "min") and jnp.issubdtype(flat.dtype, jnp.floating):  # onnxruntime's NaN and zero rules
        return combine_extremal(flat, targets, updates, reduction)
    if reduction in ("max", "min") or np.dtype(flat.dtype).kind not in "fc":
        return _unordered(flat, targets, updates, reduction)
    return _ordered(flat, targets, updates, reduction)


def _unordered(flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    """One XLA scatter: exact whatever order it combines in (integers, max, min)."""
    if flat.dtype == jnp.bool_ and reduction in _OPS:  # ONNX on bool: or / and
        reduction = {"add": "max", "mul": "min"}[reduction]
    return scatter_at(flat, targets, updates, reduction)


def cpu_scatter_in_order(flat: jax.Array, reduction: str) -> bool:
    """Whether XLA CPU may combine with one scatter: the switch is on, one device, and the
    scatter's combiner is the loop's (a complex product's is not: its roundings differ).

    Examples:
      >>> cpu_scatter_in_order(jnp.zeros(3), "mul"), cpu_scatter_in_order(jnp.zeros(3, jnp.complex64), "mul")
      (True, False)
    """
    real = np.dtype(flat.dtype).kind == "f"
    return config.cpu_ordered_scatter and one_device_shape(flat.shape) and (real or reduction == "add")


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _ordered(flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    """The loop's result: one XLA scatter on XLA CPU where `cpu_scatter_in_order`, else `_rounds`."""
    rounds = functools.partial(_rounds, reduction=reduction)
    if not cpu_scatter_in_order(flat, reduction):
        return rounds(flat, targets, updates)
    scatter = functools.partial(_unordered, reduction=reduction)
    return cpu_or_plain(scatter, rounds, flat, targets, updates)


def _rounds(flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    """The ordered fold of the module doc: rounds in which each target takes its first pending update."""
    m, n = targets.shape[0], flat.shape[0]
    if m == 0:  # a symbolic size (jax.export) is never 0
        return flat
    order = lax.iota(position_dtype(m), m)  # unsigned: m (no pending update) fits, m symbolic too
    last = size_scalar(m, order.dtype)
    dump = size_scalar(n, targets.dtype)  # out of range: dropped by the scatters
    fresh = concrete_shape((n, m)) and n <= m  # a fresh buffer costs no more than a reset of the M positions
    f = _OPS[reduction]

    def body(state: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        out, pending, first = state
        if fresh:
            first = lax.full((n,), last)
        first = scatter_at(first, jnp.where(pending, targets, dump), order, "min")
        now = pending & (gather_at(first, targets) == order)  # the first pending update of its target
        where = jnp.where(now, targets, dump)
        new = f(gather_at(out, where), updates)
        if not fresh:  # reset where used: O(M) per round, not O(N)
            first = scatter_at(first, where, lax.full_like(order, last))
        return scatter_at(out, where, new), pending & ~now, first

    init = (flat, targets < dump, lax.full((n,), last))
    out, _, _ = lax.while_loop(lambda s: jnp.any(s[1]), body, init)
    return out


@_ordered.defjvp
def _ordered_jvp(reduction: str, primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
    flat, targets, updates = primals
    d_flat, _, d_updates = tangents
    out = _ordered(flat, targets, updates, reduction)
    if reduction == "add":
        return out, scatter_at(d_flat, targets, d_updates, "add")
    product, others = _products(flat.shape[0], targets, updates)
    x = gather_at(flat, targets)
    tangent = d_flat * product + scatter_at(jnp.zeros_like(flat), targets, d_updates * others * x, "add")
    return out, tangent


def _products(n: int, targets: jax.Array, updates: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Per output element the product of its updates; per update the product of the
    other updates of its target (exclusive prefix times exclusive suffix: no division)."""
    m = targets.shape[0]
    one = jnp.ones((1,), updates.dtype)
    if m == 0:
        return jnp.ones((n,), updates.dtype), updates
    iota = lax.iota(position_dtype(m), m)
    sorted_targets, perm = lax.sort((targets, iota), num_keys=1, is_stable=True)  # each target's run, in order
    u = gather_at(updates, perm)
    start = jnp.concatenate([jnp.ones((1,), bool), sorted_targets[1:] != sorted_targets[:-1]])
    end = jnp.concatenate([start[1:], jnp.ones((1,), bool)])
    prefix = _segmented_product(jnp.concatenate([one, u[:-1]]), start)
    suffix = _segmented_product(jnp.concatenate([one, u[::-1][:-1]]), end[::-1])[::-1]
    others = scatter_at(jnp.zeros_like(updates), perm, prefix * suffix, unique=True)
    product = scatter_at(jnp.ones((n,), updates.dtype), targets, updates, "mul")
    return product, others


def _segmented_product(values: jax.Array, start: jax.Array) -> jax.Array:
    """Inclusive products that restart at each ``start`` (where the value is taken as 1)."""
    values = jnp.where(start, jnp.ones_like(values), values)

    def op(a: tuple[jax.Array, jax.Array], b: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        return a[0] | b[0], jnp.where(b[0], b[1], a[1] * b[1])

    if not concrete_shape(values.shape):  # jax.export: JAX's associative_scan needs a known length
        return _doubling_scan(op, start, values)
    return lax.associative_scan(op, (start, values))[1]


def _doubling_scan(op: Callable, start: jax.Array, values: jax.Array) -> jax.Array:
    """The same scan for a symbolic length: log2(m) steps in a `lax.while_loop`, each
    combining every element with the one ``shift`` before it (Hillis-Steele; the products
    are grouped otherwise than `lax.associative_scan` groups them, so they may round otherwise)."""
    m = values.shape[0]
    iota = lax.iota(position_dtype(m), m)
    size = size_scalar(m, iota.dtype)

    def body(state: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        shift, flags, products = state
        source = iota - shift  # wraps below shift: masked
        has = iota >= shift
        earlier = (gather_at(flags, source), gather_at(products, source))
        new_flags, new_products = op(earlier, (flags, products))
        flags, products = jnp.where(has, new_flags, flags), jnp.where(has, new_products, products)
        return shift + jnp.minimum(shift, size - shift), flags, products  # covers min(2 shift, m): no overflow

    one = jnp.ones((), iota.dtype)
    return lax.while_loop(lambda s: s[0] < size, body, (one, start, values))[2]
