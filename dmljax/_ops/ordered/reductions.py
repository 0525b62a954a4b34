"""Scatter reductions combined exactly as ONNX's sequential loop combines them.

ONNX ScatterND (opsets 16/18) and ScatterElements (16/18) define ``reduction`` by a
row-major loop over the updates: ``output[target] = f(output[target], update)``, one update
after the other (https://onnx.ai/onnx/operators/onnx__ScatterND.html,
https://onnx.ai/onnx/operators/onnx__ScatterElements.html). For a float ``"add"`` or
``"mul"`` with duplicate targets the result depends on that order (``(1e8 + 1) - 1e8`` is
0 in float32, ``1e8 + (1 - 1e8)`` is 1), and XLA's scatter-add gives no order (GPU
atomics differ between runs). `combine` therefore never lets a scatter combine float
values in an order it does not control. Formulations, per platform:

* One XLA CPU device (config ``cpu_ordered_scatter``): one XLA scatter, whose loop runs over
  the updates in their order there. Cost: the scatter's, O(M).
* Elsewhere (GPU, TPU, symbolic shapes; `off_cpu`): the sorted fold,
  `dmljax._ops.ordered.sorted_fold`: a stable sort by target, then each target's run folded left
  to right, each step touching only the runs still going (on a CUDA GPU in one Pallas
  kernel, `dmljax._ops.ordered.fold_kernel`). Cost: O(M log M) for two sorts (one with the kernel),
  O(M) for the fold, as many sequential steps as the largest number of updates of one
  element; it does not grow with (largest duplicate count) x M.
* Several devices: `dmljax._ops.ordered.ordered_partition` runs one of the two above on every device,
  on replicated operands (a partitioned scatter would sum per shard, then across). Cost:
  the one-device formulation's on the whole operands, plus gathering them.
* `_rounds` (config ``ordered_rounds``), the previous formulation and the fold's oracle:
  one round per update of the most-updated element, each over all M updates: O(R M).

Integer ``"add"``/``"mul"`` (wrapping arithmetic is associative and commutative) and
integer ``"max"``/``"min"`` are exact in any order: they are one XLA scatter
(``x.at[t].add(u)``...). Float ``"max"``/``"min"`` follow onnxruntime's fold (a NaN update
replaces, a NaN value gives way, the later of equal values wins) in an order-free form,
`dmljax._ops.ordered.extremal`.
Figures, the evidence and the alternatives measured: docs/design/ordered-reductions.md.
Every one of these choices (and ScatterND's layout of the updates) is taken in one place,
`choose_formulation`, whose `Formulation` `combine` and `dmljax._ops.index.nd` follow.

Gradients: the float ``"add"`` is the linear primitive of `dmljax._ops.ordered.ordered_add`, whose
tangent is itself on the tangents (forward mode combines in the loop's order too, bit for
bit on every platform); its transpose passes the cotangent to the input and to every update
(0 to a dropped one);
``"mul"`` gives ``d x = g * prod(u)`` and ``d u_i = g * x * prod(u_j, j != i)`` (no
division: exclusive products within each target's run, from the sorted runs, so they
differentiate again: second order works; the tangent's sum over the updates is the ordered
add); float ``"max"``/``"min"`` give the whole
cotangent to the element the result is taken from (`dmljax._ops.ordered.extremal`), integer ones
have none.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.errors import fail
from dmljax._core.platform import concrete_shape, cpu_or_plain, one_device_shape
from dmljax._ops.common.indices import position_dtype, size_scalar
from dmljax._ops.common.positions import gather_at, scatter_at
from dmljax._ops.ordered import ordered_partition, sorted_fold
from dmljax._ops.ordered.extremal import combine_extremal
from dmljax._ops.ordered.ordered_add import define_formulation, ordered_add

__all__ = [
    "REDUCTIONS",
    "Formulation",
    "check_reduction",
    "choose_formulation",
    "combine",
    "in_order",
    "off_cpu",
]

# ONNX's reduction attribute (ScatterND 16/18, ScatterElements 16/18).
REDUCTIONS = ("none", "add", "mul", "max", "min")


def check_reduction(op: str, reduction: object) -> str:
    """Validate ``reduction``; return it.

    Raises:
      ValidationError: ``reduction`` is none of `REDUCTIONS`.
    """
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        names = ", ".join(repr(r) for r in REDUCTIONS)
        raise fail(op, "reduction", f"be one of {names}", reduction)
    return reduction


@dataclasses.dataclass(frozen=True)
class Formulation:
    """How a scatter reduction combines: the answer of `choose_formulation`.

    Attributes:
      reduction: the ONNX reduction.
      combiner: ``"scatter"`` (one XLA scatter of ``scatter_reduction``: exact in any order:
        integers, bool, integer max/min), ``"extremal"`` (float max/min,
        `dmljax._ops.ordered.extremal`), ``"ordered_add"`` (the linear primitive of
        `dmljax._ops.ordered.ordered_add`) or ``"ordered_mul"`` (`_ordered`).
      scatter_reduction: the XLA scatter's combiner for ``"scatter"`` (bool add/mul: or/and).
      ordered: a float or complex add/mul, whose result depends on the order.
      unique_scatter: the indices are promised distinct and the type is real: one plain
        scatter (one update a target; complex stays in `combine`).
      cpu_scatter: on one XLA CPU device, one in-order XLA scatter may combine (config
        ``cpu_ordered_scatter``, an unpartitioned operand, and the loop's combiner: a complex
        product's roundings differ).
      layout: ScatterND's plain layout of the updates: ``"flat"`` (element positions),
        ``"sorted"`` (sorted tuples, slice element major, so the flat targets stay sorted) or
        ``"rows"`` (one XLA scatter of whole rows, for the ``"scatter"`` combiner: exact in
        any order, so on every platform, as `jax.ops.segment_sum` of integers scatters).
      cpu_layout: ScatterND's layout on one XLA CPU device where it differs from ``layout``:
        ``"rows"`` (one scatter of whole rows, a float add of slices), ``"flat"``, or None.
    """

    reduction: str
    combiner: str
    scatter_reduction: str
    ordered: bool
    unique_scatter: bool
    cpu_scatter: bool
    layout: str
    cpu_layout: str | None


def choose_formulation(
    reduction: str,
    dtype: jax.typing.DTypeLike,
    shape: tuple,
    *,
    window: tuple = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    one_device: bool = True,
    row_ids: bool = False,
) -> Formulation:
    """The formulation of a ``reduction`` into an array of ``dtype`` and ``shape`` (module doc).

    Args:
      reduction: ``"add"``, ``"mul"``, ``"max"`` or ``"min"``.
      dtype, shape: the input's.
      window: ScatterND's slice shape (``input.shape[k:]``); ``()`` for one element a target.
      indices_are_sorted, unique_indices: the caller's promises.
      one_device: False where the caller runs on replicated operands (several devices).
      row_ids: the caller passes its own one-index ids (`scatter_nd_with_policy`'s ``row_ids``),
        which one CPU scatter of rows takes as they are, one element a row too.

    Examples:
      >>> f = choose_formulation("mul", jnp.float32, (3,))
      >>> f.combiner, f.cpu_scatter  # one in-order XLA scatter on one CPU device
      ('ordered_mul', True)
      >>> choose_formulation("mul", jnp.complex64, (3,)).cpu_scatter  # a complex product: not the loop's
      False
      >>> choose_formulation("add", jnp.bool_, (3,)).scatter_reduction  # ONNX on bool: or
      'max'
      >>> f = choose_formulation("add", jnp.float32, (4, 5), window=(5,), indices_are_sorted=True)
      >>> f.layout, f.cpu_layout
      ('sorted', 'rows')
      >>> choose_formulation("add", jnp.int32, (4, 5), window=(5,)).layout  # exact in any order
      'rows'
    """
    real = bool(jnp.issubdtype(dtype, jnp.floating))
    ordered = reduction in ("add", "mul") and bool(jnp.issubdtype(dtype, jnp.inexact))  # bfloat16 included
    if reduction in ("max", "min"):
        combiner = "extremal" if real else "scatter"
    else:
        combiner = "scatter" if not ordered else f"ordered_{reduction}"
    scatter_reduction = reduction
    if np.dtype(dtype) == np.dtype(bool) and reduction in ("add", "mul"):  # ONNX on bool: or / and
        scatter_reduction = {"add": "max", "mul": "min"}[reduction]
    unpartitioned = one_device_shape(shape) or not one_device
    extremal = reduction in ("max", "min") and real  # onnxruntime's fold
    in_order = config.cpu_ordered_scatter and unpartitioned and (real or reduction == "add")
    cpu_scatter = ordered and in_order
    one_element = concrete_shape(window) and math.prod(window) == 1
    sorted_layout = indices_are_sorted and ordered and not unique_indices and not one_element
    # One XLA CPU scatter of whole rows: add with XLA's combiner, mul/max/min with the row fold's
    # (`dmljax._ops.ordered.row_fold`); one element a row only where that needs no flat positions.
    whole_rows = concrete_shape(shape) and concrete_shape(window) and (math.prod(window) > 1 or extremal or row_ids)
    rows = (ordered or extremal) and in_order and whole_rows
    any_order_rows = combiner == "scatter" and whole_rows  # integers, bool: every order, the same bits
    cpu_layout = None
    if rows:
        cpu_layout = "rows"
    elif cpu_scatter and sorted_layout:  # XLA CPU's one scatter needs no sorted layout
        cpu_layout = "flat"
    return Formulation(
        reduction=reduction,
        combiner=combiner,
        scatter_reduction=scatter_reduction,
        ordered=ordered,
        unique_scatter=unique_indices and ordered and real,
        cpu_scatter=cpu_scatter,
        layout="rows" if any_order_rows else "sorted" if sorted_layout else "flat",
        cpu_layout=cpu_layout,
    )


def combine(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str, *, indices_are_sorted: bool = False
) -> jax.Array:
    """Fold ``updates`` into ``flat`` at ``targets`` in the order of ``updates`` (ONNX's loop).

    Args:
      flat: 1-D array, the flattened input.
      targets: 1-D unsigned positions into ``flat``; values ``>= flat.size`` are dropped.
      updates: 1-D array of ``targets.shape`` and ``flat``'s type, in loop order.
      reduction: ``"add"``, ``"mul"``, ``"max"`` or ``"min"``.
      indices_are_sorted: the caller promises ``targets`` ascending (as unsigned, dropped
        ones included): the sorted formulation skips its sort. A broken promise gives
        wrong sums, as in `jax.ops.segment_sum`.

    Returns:
      ``flat`` with every update combined into its target.

    Examples:
      >>> x = jnp.zeros(2, jnp.float32)
      >>> combine(x, jnp.array([0, 0, 0], jnp.uint32), jnp.array([1e8, 1.0, -1e8]), "add")
      Array([0., 0.], dtype=float32)
      >>> combine(x, jnp.array([1, 1, 1], jnp.uint32), jnp.array([1e8, -1e8, 1.0]), "add")
      Array([0., 1.], dtype=float32)
    """
    if concrete_shape(flat.shape) and flat.shape[0] == 0:  # every update dropped; no gather from nothing
        return flat
    formulation = choose_formulation(reduction, flat.dtype, flat.shape)
    if formulation.combiner == "extremal":  # onnxruntime's NaN and zero rules
        return combine_extremal(flat, targets, updates, reduction)
    if formulation.combiner == "scatter":  # exact whatever order it combines in
        return scatter_at(flat, targets, updates, formulation.scatter_reduction)
    if formulation.combiner == "ordered_add":  # linear: a primitive of its own, whose tangent is itself
        return ordered_add(flat, targets, updates, indices_are_sorted)
    return _ordered(flat, targets, updates, reduction, indices_are_sorted)


def off_cpu(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str, indices_are_sorted: bool = False
) -> jax.Array:
    """The formulation of every platform but one XLA CPU device: the sorted fold
    (`dmljax._ops.ordered.sorted_fold`), or the rounds with config ``ordered_rounds``."""
    if config.ordered_rounds:
        return _rounds(flat, targets, updates, reduction)
    return sorted_fold.fold(flat, targets, updates, reduction, indices_are_sorted)


def in_order(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str, indices_are_sorted: bool, one_device: bool
) -> jax.Array:
    """The loop's result on unpartitioned operands: one XLA scatter on XLA CPU where the
    formulation's ``cpu_scatter`` says so, else `off_cpu`."""
    plain = functools.partial(off_cpu, reduction=reduction, indices_are_sorted=indices_are_sorted)
    if not choose_formulation(reduction, flat.dtype, flat.shape, one_device=one_device).cpu_scatter:
        return plain(flat, targets, updates)
    scatter = functools.partial(scatter_at, reduction=reduction)
    return cpu_or_plain(scatter, plain, flat, targets, updates)


@define_formulation
def _ordered_add(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, indices_are_sorted: bool, replicated: bool
) -> jax.Array:
    """The formulation `dmljax._ops.ordered.ordered_add`'s primitives lower to (read when they are lowered):
    `in_order`, through `dmljax._ops.ordered.ordered_partition` when ``replicated``."""
    if replicated:
        return ordered_partition.replicated(in_order, "add", indices_are_sorted, flat, targets, updates)
    return in_order(flat, targets, updates, "add", indices_are_sorted, one_device=True)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4))
def _ordered(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str, indices_are_sorted: bool
) -> jax.Array:
    """The ordered ``"mul"``: `in_order`; in a process with several devices (concrete shapes, config
    ``ordered_replicated_partitions``) through `dmljax._ops.ordered.ordered_partition`, whose
    partitioned program runs it on replicated operands. Its product rule: `_ordered_jvp`."""
    if config.ordered_replicated_partitions and jax.device_count() > 1 and concrete_shape(flat.shape + targets.shape):
        return ordered_partition.replicated_batchable(in_order, reduction, indices_are_sorted, flat, targets, updates)
    return in_order(flat, targets, updates, reduction, indices_are_sorted, one_device=True)


def _rounds(flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    """The rounds (config ``ordered_rounds``; the sorted fold's oracle in the tests): each round
    every target takes its first pending update. O(R M), R the largest duplicate count."""
    m, n = targets.shape[0], flat.shape[0]
    if m == 0:  # a symbolic size (jax.export) is never 0
        return flat
    order = lax.iota(position_dtype(m), m)  # unsigned: m (no pending update) fits, m symbolic too
    last = size_scalar(m, order.dtype)
    dump = size_scalar(n, targets.dtype)  # out of range: dropped by the scatters
    fresh = concrete_shape((n, m)) and n <= m  # a fresh buffer costs no more than a reset of the M positions
    f = sorted_fold.combiner(reduction, updates)

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
def _ordered_jvp(reduction: str, indices_are_sorted: bool, primals: tuple, tangents: tuple) -> tuple:
    flat, targets, updates = primals
    d_flat, _, d_updates = tangents
    out = _ordered(flat, targets, updates, reduction, indices_are_sorted)
    product, others = sorted_fold.run_products(flat.shape[0], targets, updates, indices_are_sorted)
    x = gather_at(flat, targets)
    # the sum over each target's updates in the loop's order (the ordered add): repeatable on every platform
    return out, ordered_add(d_flat * product, targets, d_updates * others * x, indices_are_sorted)
