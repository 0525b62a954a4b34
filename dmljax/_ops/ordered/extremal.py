"""Float scatter ``"max"``/``"min"``: onnxruntime's sequential loop, in an order-free form.

ONNX ScatterND and ScatterElements (opset 18) fold ``output[t] = f(output[t], u)`` over the
updates in row-major order. onnxruntime's CPU kernels (``Func_Max``/``Func_Min`` in
``onnxruntime/core/providers/cpu/tensor/scatter.cc`` and ``scatter_nd.cc``) define ``f`` as
``out = (out > u) ? out : u`` for max (``<`` for min): the current value stays only where it
is strictly better, so a NaN update replaces it, a NaN current value is replaced by the next
update, and of equal values (``+0.0``/``-0.0``) the later one wins. Checked exhaustively
against onnxruntime (docs/semantics.md, "Scatter max and min").

That fold needs no order once it is read backwards. For one target, take the sequence
``x, u0, u1, ...`` (the input's value, then its updates in loop order) and let ``p`` be the
position of its last NaN. If ``p`` is the last position, the result is that NaN; otherwise it
is the last of the elements after ``p`` that equal their maximum (after ``p`` there is no NaN,
and the fold takes every value that is not strictly worse). `combine_extremal` computes the
position of that element, the *winner*, with

1. a scatter-max of the loop positions of NaN updates (the last NaN update of each target);
2. a scatter-max (min) of the values after it, the *contenders* (NaN-free), as integer
   `order_key` values: ``+0.0`` and ``-0.0`` one key, as the fold compares them, and no
   subnormal flushed (XLA CPU may flush subnormals in a float comparison or max);
3. a scatter-max of the positions of contenders whose key equals that extreme's;

then gathers the winner's value, bit for bit (a NaN's payload included). Two unsigned integer
scatter-maxes and one scatter of signed keys: exact in any order, so on any device count and
under any partitioning; O(M + N) for M updates into N elements.

Gradients (`jax.custom_jvp`): the tangent of each output element is the tangent of its
winner, the element its value is taken from. Every other element, the input's value
included, gets exactly zero, and ties are not shared: the last of equal extremes in loop
order takes the whole cotangent (``jnp``'s ``.at[].max`` and torch's ``scatter_reduce``
share it among ties).

Integer and bool data are not for this module: one XLA scatter is exact for them
(`dmljax._ops.ordered.reductions.combine`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.platform import in_onnx_export
from dmljax._ops.common.indices import position_dtype
from dmljax._ops.common.positions import gather_at, scatter_at

__all__ = ["combine_extremal", "key_of_bits", "order_key"]

_UNSIGNED = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def combine_extremal(flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    """Fold float ``updates`` into ``flat`` at ``targets`` with onnxruntime's max or min, in loop order.

    Args:
      flat: 1-D float array (float16, bfloat16, float32, float64), the flattened input.
      targets: 1-D unsigned positions into ``flat``; values ``>= flat.size`` are dropped.
      updates: 1-D array of ``targets.shape`` and ``flat``'s type, in loop order.
      reduction: ``"max"`` or ``"min"``.

    Returns:
      ``flat`` with every update folded into its target.

    Examples:
      >>> nan = float("nan")
      >>> x = jnp.array([nan, 1.0, -0.0])
      >>> t = jnp.array([0, 1, 1, 2, 7], jnp.uint32)  # 7: dropped
      >>> combine_extremal(x, t, jnp.array([2.0, nan, 0.5, 0.0, 9.0]), "max")  # NaN: replaced, then replacing
      Array([2. , 0.5, 0. ], dtype=float32)
    """
    if targets.shape[0] == 0:  # a symbolic size (jax.export) is never 0
        return flat
    return _extremal(flat, targets, updates, reduction)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _extremal(flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    return _take(flat, updates, _winners(flat, targets, updates, reduction))


@_extremal.defjvp
def _extremal_jvp(reduction: str, primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
    """The winner's tangent: exactly zero for every element the result is not taken from."""
    flat, targets, updates = primals
    d_flat, _, d_updates = tangents
    out = _extremal(flat, targets, updates, reduction)  # itself: differentiable again (second order)
    return out, _take(d_flat, d_updates, _winners(flat, targets, updates, reduction), bits=False)


def _winners(flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str) -> jax.Array:
    """Per output element, the loop position (0: the input's value, ``i + 1``: update ``i``) its value comes from."""
    m = targets.shape[0]
    dtype = position_dtype(m)  # holds m: the positions are 0 (the input) to m
    positions = lax.iota(dtype, m) + np.asarray(1, dtype)
    none = jnp.zeros_like(flat, dtype)

    def nan_free() -> tuple[jax.Array, jax.Array]:
        return none, jnp.ones(positions.shape, bool)

    def with_nan() -> tuple[jax.Array, jax.Array]:
        last_nan = scatter_at(none, targets, jnp.where(jnp.isnan(updates), positions, 0), "max")
        return last_nan, positions > gather_at(last_nan, targets)  # after the target's last NaN: never NaN

    # NaN-free updates (the usual case) skip a scatter and a gather (under vmap both branches run).
    last_nan, contends = lax.cond(jnp.any(jnp.isnan(updates)), with_nan, nan_free)
    if in_onnx_export():  # onnxruntime compares floats without flushing subnormals; no BitCast there
        keys, flat_keys = updates, flat
        worst = np.asarray(-np.inf if reduction == "max" else np.inf, flat.dtype)
    else:
        keys, flat_keys = order_key(updates), order_key(flat)
        info = np.iinfo(keys.dtype)
        worst = np.asarray(info.min if reduction == "max" else info.max, keys.dtype)
    first = (last_nan == 0) & ~jnp.isnan(flat)  # the input's value contends: no NaN at all in its sequence
    best = scatter_at(jnp.where(first, flat_keys, worst), targets, jnp.where(contends, keys, worst), reduction)
    wins = contends & (keys == gather_at(best, targets))
    return scatter_at(last_nan, targets, jnp.where(wins, positions, 0), "max")  # none: the last NaN, else the input


def order_key(x: jax.Array) -> jax.Array:
    """Signed integers ordered as the float numbers of ``x`` (NaN aside), ``+0.0`` and ``-0.0`` one key.

    ``key = +-(bits & magnitude)``, the sign the float's: the fold's ``>``/``<`` on numbers
    is the keys' (each key has one value but the zeros), decided on the bits, so a subnormal
    is never flushed (XLA CPU may flush them in a float comparison). NaNs get keys above
    ``+inf``'s (or below ``-inf``'s): the caller keeps them apart.

    Examples:
      >>> order_key(jnp.array([-1.0, -0.0, 0.0, 1e-45, 1.0]))
      Array([-1065353216,           0,           0,           1,  1065353216], dtype=int32)
    """
    signed = np.dtype(f"int{8 * np.dtype(x.dtype).itemsize}")
    return key_of_bits(lax.bitcast_convert_type(x, signed))


def key_of_bits(bits: jax.Array) -> jax.Array:
    """`order_key` of floats given as their bits, a signed integer array of their width."""
    magnitude = bits & np.asarray(np.iinfo(bits.dtype).max, bits.dtype)
    return jnp.where(bits < 0, -magnitude, magnitude)


def _take(flat: jax.Array, updates: jax.Array, winners: jax.Array, bits: bool = True) -> jax.Array:
    """The winners' values: ``flat`` where the winner is 0, else ``updates[winner - 1]``.

    ``bits``: gather and select the bits as unsigned integers. A partitioned gather reads each
    shard's own elements, zeros elsewhere, and sums the shards: ``-0.0 + 0.0`` is ``+0.0``;
    and XLA CPU selects float16/bfloat16 in float32, which makes every NaN the canonical one.
    Tangents (``bits=False``) stay floats, differentiable again.
    """
    where = winners - np.asarray(1, winners.dtype)  # 0 - 1 wraps: clipped, not selected
    if not bits:
        return jnp.where(winners == 0, flat, gather_at(updates, where))
    unsigned = _UNSIGNED[np.dtype(updates.dtype).itemsize]
    taken = gather_at(lax.bitcast_convert_type(updates, unsigned), where)
    chosen = jnp.where(winners == 0, lax.bitcast_convert_type(flat, unsigned), taken)
    return lax.bitcast_convert_type(chosen, updates.dtype)
