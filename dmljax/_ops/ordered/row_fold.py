"""Float ``"mul"``, ``"max"`` and ``"min"`` of whole rows on one XLA CPU device: one scatter, the loop's fold.

XLA CPU's scatter runs over the updates in their order, each row's elements inside
(docs/design/ordered-reductions.md; guarded by
``test_xla_cpu_row_scatter_combines_in_the_loops_order``). A scatter whose combiner is the
loop's own ``f`` therefore computes ONNX's fold bit for bit: for ``"mul"`` XLA's multiply,
for ``"max"``/``"min"`` onnxruntime's ``out = (out > u) ? out : u`` (``<`` for min; a NaN
update replaces, a NaN value gives way, of equal values the later wins). That comparison is
taken on the bits (XLA CPU may flush subnormals in a float comparison): both operands are
numbers and their `dmljax._ops.ordered.extremal.order_key` values compare (``+0.0`` and
``-0.0`` one key: equal). A float16/bfloat16 max/min scatter runs on the bits as integers
altogether, so no value passes through XLA CPU's float32 arithmetic (which would make a
NaN the canonical one). One scatter of ``(rows, w)``
windows, as ``jax.ops.segment_max`` scatters, instead of the flat elements' three scatters
(`dmljax._ops.ordered.extremal`) or a flat scatter of ``w`` times as many elements.

Gradients (`jax.custom_jvp`): ``"mul"``: the product rule of the flat form
(`dmljax._ops.ordered.reductions.combine` at the rows' element positions: no division, the
tangent summed in loop order). ``"max"``/``"min"``: the tangent of each output element's
winner, the update it was last taken from, or the input's own where none was taken. The
winner is the last update whose bits equal the result's: an update after the last one
taken is strictly worse than the result, so not equal to it; the one taken is. As
`dmljax._ops.ordered.extremal`: ties are not shared, every other element gets exactly zero.

Only for one XLA CPU device (`dmljax._ops.ordered.reductions.cpu_scatter_in_order`, under
`dmljax._core.platform.cpu_or_plain`): elsewhere a scatter combines in no defined order.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._ops.common.indices import position_dtype
from dmljax._ops.common.positions import scatter_at
from dmljax._ops.ordered.extremal import key_of_bits, order_key
from dmljax._ops.ordered.reductions import combine

__all__ = ["fold_rows"]

ROW_FOLDS = ("mul", "max", "min")


def fold_rows(table: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    """Fold the rows of ``updates`` into ``table``'s rows at ``targets``, in loop order (one XLA CPU device only).

    Args:
      table: ``(n, w)`` real float array.
      targets: ``(m,)`` integer row positions; values outside ``[0, n)`` are dropped.
      updates: ``(m, w)``, ``table``'s type, in loop order.
      reduction: ``"mul"``, ``"max"`` or ``"min"``.

    Returns:
      ``table`` with every row of ``updates`` folded into its target row.

    Examples:
      >>> nan = float("nan")
      >>> table = jnp.array([[nan, 1.0], [-0.0, 2.0]])
      >>> t = jnp.array([0, 0, 1, 5], jnp.uint32)  # 5: dropped
      >>> u = jnp.array([[2.0, nan], [0.5, 0.5], [0.0, 2.0], [9.0, 9.0]])
      >>> fold_rows(table, t, u, "max")  # NaN: replaced, then replacing; +0.0 after -0.0 wins
      Array([[2. , 0.5],
             [0. , 2. ]], dtype=float32)
    """
    return _fold(table, targets, updates, reduction)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _fold(table: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    if reduction == "mul":
        return scatter_at(table, targets, updates, "mul")
    # float16/bfloat16 on the bits as integers: XLA CPU computes them in float32 and back,
    # which would make every NaN the canonical one. float32/float64 as they are (bitcasting
    # the updates would write a copy of them).
    dtype = np.dtype(table.dtype)
    operand = np.dtype(f"int{8 * dtype.itemsize}") if dtype.itemsize == 2 else dtype
    window = tuple(range(1, table.ndim))
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=window, inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    combiner = _combiner(operand, _infinity_key(dtype), reduction)
    out = lax.scatter_p.bind(
        lax.bitcast_convert_type(table, operand),
        targets[:, None],
        lax.bitcast_convert_type(updates, operand),
        update_jaxpr=combiner.jaxpr,
        update_consts=tuple(combiner.consts),
        dimension_numbers=dnums,
        indices_are_sorted=False,
        unique_indices=False,
        mode=lax.GatherScatterMode.FILL_OR_DROP,
    )
    return lax.bitcast_convert_type(out, table.dtype)


@_fold.defjvp
def _fold_jvp(reduction: str, primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
    table, targets, updates = primals
    d_table, _, d_updates = tangents
    out = _fold(table, targets, updates, reduction)  # itself: differentiable again
    n, w = table.shape
    if reduction == "mul":
        flat_targets = _element_targets(targets, n, w)

        def flat(x: jax.Array, u: jax.Array) -> jax.Array:
            return combine(x.reshape(-1), flat_targets, u.reshape(-1), "mul")

        _, d_out = jax.jvp(flat, (table, updates), (d_table, d_updates))
        return out, d_out.reshape(table.shape)
    return out, _winners_tangent(out, targets, updates, d_table, d_updates)


def _winners_tangent(
    out: jax.Array, targets: jax.Array, updates: jax.Array, d_table: jax.Array, d_updates: jax.Array
) -> jax.Array:
    """Per output element the tangent of its winner: the last update whose bits equal the result's, else the input's."""
    m, w = updates.shape
    dtype = position_dtype(m)  # 0: the input; i + 1: update row i
    rows = lax.broadcasted_iota(dtype, (m, w), 0) + np.asarray(1, dtype)
    unsigned = np.dtype(f"uint{8 * np.dtype(out.dtype).itemsize}")
    taken = lax.bitcast_convert_type(_gather_rows(out, targets), unsigned)  # dropped targets: clipped, dropped again
    same = lax.bitcast_convert_type(updates, unsigned) == taken
    winners = scatter_at(jnp.zeros(out.shape, dtype), targets, jnp.where(same, rows, 0), "max")
    column = lax.broadcasted_iota(dtype, winners.shape, 1)
    index = jnp.stack([winners - np.asarray(1, dtype), column], axis=-1)  # 0 - 1 wraps: clipped, not selected
    dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    picked = lax.gather(d_updates, index, dnums, (1, 1), mode=lax.GatherScatterMode.CLIP)
    return jnp.where(winners == 0, d_table, picked)


def _gather_rows(table: jax.Array, targets: jax.Array) -> jax.Array:
    """``table[targets]`` by rows, targets clipped."""
    dnums = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    return lax.gather(table, targets[:, None], dnums, (1, table.shape[1]), mode=lax.GatherScatterMode.CLIP)


def _element_targets(targets: jax.Array, n: int, w: int) -> jax.Array:
    """The flat element positions ``t * w + c`` of the rows' elements; ``n * w`` (dropped) for dropped rows."""
    dtype = position_dtype(n * w)
    info = np.iinfo(targets.dtype)
    kept = targets < np.asarray(n, targets.dtype) if n <= info.max else jnp.ones(targets.shape, bool)
    if info.min < 0:
        kept = kept & (targets >= 0)
    row = lax.convert_element_type(jnp.where(kept, targets, 0), dtype)
    column = lax.broadcasted_iota(dtype, (targets.shape[0], w), 1)
    flat = row[:, None] * np.asarray(w, dtype) + column
    return jnp.where(kept[:, None], flat, np.asarray(n * w, dtype)).reshape(-1)


def _infinity_key(dtype: np.dtype) -> int:
    """The order key of ``+inf`` in ``dtype``: every key of a larger magnitude is a NaN's."""
    signed = np.dtype(f"int{8 * dtype.itemsize}")
    return int(np.asarray(np.inf, dtype).view(signed))


@functools.cache
def _combiner(operand: np.dtype, infinity: int, reduction: str) -> jax.extend.core.ClosedJaxpr:
    """The combiner on floats or their bits (signed integers): ``out`` if strictly better than ``u``, else ``u``."""
    scalar = jax.ShapeDtypeStruct((), operand)
    keep_or_take = functools.partial(_keep_or_take, infinity=infinity, reduction=reduction)
    return jax.make_jaxpr(keep_or_take)(scalar, scalar)


def _keep_or_take(out: jax.Array, u: jax.Array, infinity: int, reduction: str) -> jax.Array:
    """onnxruntime's ``(out > u) ? out : u`` (``<`` for min) on the bits: never flushed, NaN payloads kept."""
    key = key_of_bits if jnp.issubdtype(out.dtype, jnp.integer) else order_key
    key_a, key_b = key(out), key(u)
    limit = np.asarray(infinity, key_a.dtype)
    numbers = (jnp.abs(key_a) <= limit) & (jnp.abs(key_b) <= limit)  # no NaN
    better = key_a > key_b if reduction == "max" else key_a < key_b
    return lax.select(numbers & better, out, u)
