"""Marked operators as the export computes them, and the TopK nodes `top_k`'s gradient reads.

`export_marker` gives a marker's value in the exported model: the operator's export-only
primitive (`dmljax.onnx._primitives`), a loop for float16/bfloat16 add/mul scatters
(`dmljax.onnx._sequential`) or `cumulative_product`'s formulation (`dmljax.onnx._products`).

`top_k`'s implementation orders keys made from a float's bits (a bitcast, which ONNX has
from opset 26 only) and its gradient reads the implementation's indices, not the marked
ones. While the rewrite evaluates a call whose output is a marked top_k (`top_k_hints`),
the ``lax.top_k`` of the order keys inside becomes the TopK node's indices
(`hinted_top_k`), so the keys are dead. One TopK node per operand, parameters and output
(`top_k_nodes`) serves the values, the indices and the gradient.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

import jax.numpy as jnp
import numpy as np

from dmljax._core.markers import MARK_P
from dmljax.onnx._primitives import EXPORT_PRIMITIVES
from dmljax.onnx._products import cumulative_product
from dmljax.onnx._sequential import needs_sequential, sequential_scatter

__all__ = ["TOP_K_OPS", "export_marker", "hinted_top_k", "is_exported", "top_k_hints", "top_k_nodes"]


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """A marker's parameters without ``op``, NumPy integers as Python ones (``jax.vmap`` moves an
    axis with NumPy arithmetic; ONNX attributes take Python ints only)."""
    return {k: int(v) if isinstance(v, np.integer) else v for k, v in params.items() if k != "op"}


def export_marker(eqn: Any, operands: list[Any], opset: int) -> Any:
    """The value of a marked operator as the export computes it (``operands``: its inputs), or
    None for the implementation's own."""
    op, params = eqn.params["op"], _plain(eqn.params)
    if op == "cumulative_product":
        return cumulative_product(operands[0], **params)
    if op in TOP_K_OPS:
        return _top_k(op, operands[0], params)
    if needs_sequential(op, operands, params):  # float16/bfloat16 add/mul: rounded per update
        return sequential_scatter(op, operands, params, opset)
    return EXPORT_PRIMITIVES[op].bind(*operands, **params)


def is_exported(eqn: Any) -> bool:
    """Whether a marker equation becomes the export's own formulation (`export_marker`)."""
    return eqn.primitive is MARK_P and (
        eqn.params["op"] in EXPORT_PRIMITIVES or eqn.params["op"] == "cumulative_product"
    )


TOP_K_OPS = ("top_k_values", "top_k_indices")
# The TopK nodes of this export, per (operand, k, axis, largest) and output: one node serves
# the values, the indices and the gradient (`_top_k_hints`).
_TOP_K_NODES: contextvars.ContextVar[dict[Any, Any]] = contextvars.ContextVar("top_k_nodes")
# While a top_k's implementation is evaluated: (k, moved shape, the TopK node's indices moved
# last) for the ``lax.top_k`` of its order keys (`_bind`).
_TOP_K_HINTS: contextvars.ContextVar[tuple[Any, ...]] = contextvars.ContextVar("top_k_hints", default=())


def _top_k(op: str, x: Any, params: dict[str, Any]) -> Any:
    """The TopK node's values or indices for ``x`` (one node per operand and parameters)."""
    nodes = _TOP_K_NODES.get()
    key = (id(x), op, tuple(sorted(params.items())))
    if key not in nodes:
        nodes[key] = (x, EXPORT_PRIMITIVES[op].bind(x, **params))  # x kept alive: its id stays unique
    return nodes[key][1]


def _top_k_hints(eqn: Any, marks: dict[Any, Any], read: Callable[[Any], Any]) -> tuple[Any, ...]:
    """Hints for a call that computes a marked top_k: the ``lax.top_k`` of its order keys is the
    TopK node's indices, so a gradient that reads those indices reads the node's, and the keys'
    float -> int bitcast is dead."""
    hints = []
    for v in eqn.outvars:
        mark = marks.get(v)
        if mark is None or mark.params["op"] not in TOP_K_OPS:
            continue
        params = _plain(mark.params)
        indices = _top_k("top_k_indices", read(mark.invars[1]), params)
        moved = jnp.moveaxis(indices, params["axis"], -1)
        hints.append((params["k"], tuple(moved.shape), moved))
    return tuple(hints)


def hinted_top_k(eqn: Any, invals: list[Any], params: dict[str, Any]) -> list[Any] | None:
    """A ``lax.top_k`` of order keys as the hinted TopK node's indices (the keys there: its values), else None."""
    for k, shape, moved in _TOP_K_HINTS.get():
        if params["k"] == k and tuple(eqn.outvars[1].aval.shape) == shape and moved.dtype == eqn.outvars[1].aval.dtype:
            return [jnp.take_along_axis(invals[0], moved, axis=-1), moved]
    return None


@contextlib.contextmanager
def top_k_nodes() -> Iterator[None]:
    """One export's cache of TopK nodes."""
    token = _TOP_K_NODES.set({})
    try:
        yield
    finally:
        _TOP_K_NODES.reset(token)


@contextlib.contextmanager
def top_k_hints(eqn: Any, marks: dict[Any, Any], read: Callable[[Any], Any]) -> Iterator[None]:
    """While a call equation is evaluated: `_top_k_hints` of its marked top_k outputs."""
    token = _TOP_K_HINTS.set(_TOP_K_HINTS.get() + _top_k_hints(eqn, marks, read))
    try:
        yield
    finally:
        _TOP_K_HINTS.reset(token)
