"""`dropout`: TensorFlow's ``stateless_dropout`` on the Philox stream, bit for bit.

The mask is `dmljax.random.uniform` in ``x``'s dtype compared with the rate; the scale is formed
as TensorFlow forms it: ``1 / (1 - rate)`` in double, rounded once, for a rate given as a
Python number or NumPy array (TensorFlow's Python-rate path), ``x / (1 - rate)`` in
``x``'s dtype for a JAX array rate (its tensor-rate path).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding

from dmljax._core.errors import fail
from dmljax._core.markers import mark
from dmljax._random import shard_local, vector_width
from dmljax._random.checks import FLOATS, check_broadcast, check_dtype, check_stream_shape, concrete_value
from dmljax._random.distributions import _uniform
from dmljax._random.generator import check_state

__all__ = ["dropout"]


def dropout(
    state: jax.typing.ArrayLike,
    x: jax.typing.ArrayLike,
    rate: jax.typing.ArrayLike,
    *,
    out_sharding: NamedSharding | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Inverted dropout as TensorFlow's ``stateless_dropout``: keep where ``uniform >= rate``, scale by ``1/(1-rate)``.

    The uniform values have ``x``'s dtype and shape (one word per element; two for
    float64), compared with ``rate`` in ``x``'s dtype. Dropped elements are exactly zero.
    Kept ones are scaled as TensorFlow scales them, bit for bit:

    * a rate given as a Python number or NumPy array (host values): ``x * scale`` with
      ``scale = 1 / (1 - rate)`` computed in double and rounded to ``x``'s dtype once, as
      TensorFlow does for a Python rate;
    * a rate given as a JAX array (traced under `jax.jit`, or concrete): ``x / (1 - rate)``
      in ``x``'s dtype, as TensorFlow does for a tensor rate. A traced rate is not checked:
      one of 1 or more (or NaN) drops every element, one below 0 keeps every element.

    Differentiable in ``x`` (the mask is not); the gradient is finite for every rate,
    also one that rounds to 1 in ``x``'s dtype (every element dropped).

    Args:
      state: uint32[6] Philox state.
      x: float16, bfloat16, float32 or float64 array.
      rate: drop probability in [0, 1): a scalar or an array broadcasting to ``x``'s
        shape (values checked when concrete).
      out_sharding: optional `jax.sharding.NamedSharding` of the result (see `uniform`).

    Returns:
      ``(dropped x, next_state)``.

    Raises:
      TypeError: bad ``state`` or ``x`` dtype.
      dmljax.ValidationError: bad ``state`` shape or ``out_sharding``, a ``rate`` that
        does not broadcast to ``x``, or a concrete ``rate`` outside [0, 1).

    Examples:
      >>> from dmljax.random import make_state
      >>> dropout(make_state(0), jnp.ones(4), 0.5)[0]
      Array([0., 2., 2., 0.], dtype=float32)
    """
    state = check_state("dropout", state)
    x = jnp.asarray(x)
    dtype = check_dtype("dropout", x.dtype, FLOATS)
    check_broadcast("dropout", "rate", rate, x.shape)
    known = concrete_value(rate)
    if known is not None and not np.all((known >= 0) & (known < 1)):
        bad = rate if known.ndim == 0 else known[~((known >= 0) & (known < 1))].flat[0]
        raise fail("dropout", "rate", "be in [0, 1)", bad, f"x shape {x.shape}")
    shape = check_stream_shape("dropout", x.shape, 2 if dtype.itemsize == 8 else 1)
    out_sharding = shard_local.check_out_sharding("dropout", out_sharding, shape)
    if known is not None and not isinstance(rate, jax.Array):  # TensorFlow's Python-rate path
        wide = np.asarray(known, np.float64)
        threshold, scale = wide.astype(dtype), (1 / (1 - wide)).astype(dtype)
        args: tuple[Any, ...] = (_dropout_scaled, _dropout_scaled_wide, state, x, threshold, scale, out_sharding)
    else:
        args = (_dropout, _dropout_wide, state, x, rate, out_sharding)
    values, new_state = vector_width.call(*args)
    return mark(values, state, op="dropout"), new_state


def _dropout_scaled_fn(state, x, threshold, scale, out_sharding=None):
    """Keep where ``u >= threshold``, times ``scale`` (both already in ``x``'s dtype)."""
    u, next_state = _uniform(state, x.shape, x.dtype, 0.0, 1.0, out_sharding)
    keep = u >= jnp.broadcast_to(threshold, x.shape)
    scale = jnp.where(keep, jnp.broadcast_to(scale, x.shape), jnp.zeros((), x.dtype))  # no inf * 0 in the gradient
    return jnp.where(keep, x * scale, jnp.zeros((), x.dtype)), next_state


def _dropout_fn(state, x, rate, out_sharding=None):
    """Keep where ``u >= rate``, divided by ``1 - rate``, all in ``x``'s dtype (TensorFlow's tensor-rate path)."""
    u, next_state = _uniform(state, x.shape, x.dtype, 0.0, 1.0, out_sharding)
    rate = jnp.broadcast_to(jnp.asarray(rate, x.dtype), x.shape)
    keep = u >= rate
    one = jnp.ones((), x.dtype)
    return jnp.where(keep, x / jnp.where(keep, one - rate, one), jnp.zeros((), x.dtype)), next_state


_dropout, _dropout_wide = vector_width.twin_jit(_dropout_fn, static_argnums=3)
_dropout_scaled, _dropout_scaled_wide = vector_width.twin_jit(_dropout_scaled_fn, static_argnums=4)
