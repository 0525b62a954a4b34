"""A lax gather whose transpose combines the cotangent in the updates' row-major order.

`ordered_gather_p` is ``lax.gather_p`` with the same parameters, abstract evaluation and
lowering (the compiled forward is the same gather, bit for bit and op for op), and other
rules:

* JVP: the primitive itself on the operand's tangent (a gather is linear in its operand);
* transpose: the scatter-add JAX's own rule builds (``update_window_dims`` from
  ``offset_dims``, ``inserted_window_dims`` from ``collapsed_slice_dims``...), combined
  in the cotangent's row-major order by `dmljax._transforms.flat_scatter.ordered_scatter`;
  with ``unique_indices`` (no duplicate, so no order) JAX's own scatter-add;
* batching: JAX's gather batching rule, traced and evaluated again with its gathers as
  this primitive (`set_rewriter` gives the evaluator), so a batched gather keeps the
  ordered transpose.

`deterministic` puts it in place of every float gather, so ``jax.grad`` applied outside
the transformed function scatters in order too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.extend.core
from jax import lax
from jax._src import dispatch
from jax.interpreters import ad, batching, mlir

from dmljax._transforms.flat_scatter import ordered_scatter

__all__ = ["ordered_gather", "ordered_gather_p", "set_rewriter"]

ordered_gather_p = jax.extend.core.Primitive("dmljax_deterministic_gather")

# ``fun(closed_jaxpr, args) -> outs``: the rewriting evaluator (`dmljax._transforms.interpreter`).
_REWRITER: list[Callable[[Any, list[Any]], list[Any]]] = []


def set_rewriter(fun: Callable[[Any, list[Any]], list[Any]]) -> None:
    """Give the batching rule the evaluator that rewrites a traced program (set at import)."""
    _REWRITER[:] = [fun]


def ordered_gather(operand: jax.Array, indices: jax.Array, **params: Any) -> jax.Array:
    """``lax.gather_p.bind(operand, indices, **params)`` with an ordered transpose.

    Examples:
      >>> dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
      >>> params = dict(dimension_numbers=dnums, slice_sizes=(1,), indices_are_sorted=False,
      ...               unique_indices=False, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)
      >>> idx = jnp.array([[1], [1], [1]])
      >>> grad = jax.grad(lambda x, w: ordered_gather(x, idx, **params) @ w)
      >>> grad(jnp.zeros(2), jnp.array([1e8, 1.0, -1e8]))  # 1e8 + 1 - 1e8, in this order, in float32
      Array([0., 0.], dtype=float32)
    """
    return ordered_gather_p.bind(operand, indices, **params)


def _abstract_eval(operand: Any, indices: Any, **params: Any) -> Any:
    return lax.gather_p.abstract_eval(operand, indices, **params)


def _gather(operand: jax.Array, indices: jax.Array, **params: Any) -> jax.Array:
    return lax.gather_p.bind(operand, indices, **params)


def _jvp(primals: tuple, tangents: tuple, **params: Any) -> tuple[jax.Array, jax.Array]:
    operand, indices = primals
    out = ordered_gather_p.bind(operand, indices, **params)
    tangent = ad.instantiate_zeros(tangents[0])
    return out, ordered_gather_p.bind(tangent, indices, **params)


def _transpose(ct: Any, operand: Any, indices: Any, *, dimension_numbers: Any, **params: Any) -> list[Any]:
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), None]
    d = dimension_numbers
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=d.offset_dims,
        inserted_window_dims=d.collapsed_slice_dims,
        scatter_dims_to_operand_dims=d.start_index_map,
        operand_batching_dims=d.operand_batching_dims,
        scatter_indices_batching_dims=d.start_indices_batching_dims,
    )
    zeros = lax.full(operand.aval.shape, 0, ct.dtype)
    if params["unique_indices"]:  # no duplicates: any order is the order
        mode = params["mode"]
        return [lax.scatter_add(zeros, indices, ct, dnums, unique_indices=True, mode=mode), None]
    return [ordered_scatter("add", zeros, indices, ct, dnums, params["mode"]), None]


def _batch(args: tuple, dims: tuple, **params: Any) -> tuple[jax.Array, int]:
    rule = batching.primitive_batchers[lax.gather_p]  # type: ignore[index]  # a proxy to the dict at run time
    out_dim: list[int] = []

    def batched(*xs: jax.Array) -> jax.Array:
        out, dim = rule(xs, dims, **params)
        out_dim.append(dim)
        return out

    closed = jax.jit(batched).trace(*args).jaxpr
    return _REWRITER[0](closed, list(args))[0], out_dim[0]


ordered_gather_p.def_impl(functools.partial(dispatch.apply_primitive, ordered_gather_p))
ordered_gather_p.def_effectful_abstract_eval(_abstract_eval)
mlir.register_lowering(ordered_gather_p, mlir.lower_fun(_gather, multiple_results=False))
ad.primitive_jvps[ordered_gather_p] = _jvp
ad.primitive_transposes[ordered_gather_p] = _transpose
batching.primitive_batchers[ordered_gather_p] = _batch
