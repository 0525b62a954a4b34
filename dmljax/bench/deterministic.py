"""Benchmark cases for `deterministic`: training programs plain and wrapped.

Two programs as users write them, in ``jnp`` and ``jax.ops``:

* ``message passing step``: one SGD step of a two-layer graph convolution (the nodes'
  features times a weight, gathered at the senders, summed at the receivers with
  ``jax.ops.segment_sum``, ReLU, again), ``jax.value_and_grad`` of a squared error; its
  backward holds the transposes of both gathers and of both sums;
* ``embedding gradient``: ``jax.grad`` of ``sum(table[ids] * w)`` with Zipf token ids.

Contenders: ``dmljax`` (``jax.jit(dmljax.deterministic(program))``), ``plain`` (the
reference: ``jax.jit(program)``, XLA's scatter-add in no defined order), and ``dmljax
(sorted fold)``: the wrapped program with config ``cpu_ordered_scatter`` off, the
formulation of GPUs, TPUs and several devices, forced on the CPU. The case is labelled
with the edges' (tokens') gathered features' bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench._harness import Case, sized

__all__ = ["cases", "embedding_gradient", "message_passing_step"]

GROUP = "deterministic"
FEATURES = 16
EDGES_PER_NODE = 8
VOCAB_FRACTION = 16  # tokens per vocabulary row


def message_passing_step(nodes: int) -> Callable[..., Any]:
    """``step(params, x, senders, receivers, target) -> (params, loss)``: SGD on a two-layer graph convolution."""

    def loss(params: tuple[jax.Array, jax.Array], x, senders, receivers, target) -> jax.Array:
        w1, w2 = params
        h = jax.nn.relu(jax.ops.segment_sum((x @ w1)[senders], receivers, nodes))
        out = jax.ops.segment_sum((h @ w2)[senders], receivers, nodes)
        return jnp.mean((out - target) ** 2)

    def step(params, x, senders, receivers, target):
        value, grads = jax.value_and_grad(loss)(params, x, senders, receivers, target)
        return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads), value

    return step


def embedding_gradient(table: jax.Array, ids: jax.Array, w: jax.Array) -> jax.Array:
    """The gradient of ``sum(table[ids] * w)`` with respect to ``table``."""
    return jax.grad(lambda t: jnp.sum(t[ids] * w))(table)


def _contenders(fun: Callable[..., Any], args: tuple) -> dict[str, Callable[[], Any]]:
    ordered, plain = jax.jit(dmljax.deterministic(fun)), jax.jit(fun)

    def folded() -> Any:  # the option is part of jit's cache key: set at each call
        with dmljax.config.override(cpu_ordered_scatter=False):
            return ordered(*args)

    return {"dmljax": lambda: ordered(*args), "plain": lambda: plain(*args), "dmljax (sorted fold)": folded}


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Both programs at each size."""
    return [case for nbytes in sizes_bytes for case in _sized_cases(nbytes)]


def _sized_cases(nbytes: int) -> list[Case]:
    edges = max(EDGES_PER_NODE, nbytes // 4 // FEATURES)
    nodes = max(1, edges // EDGES_PER_NODE)
    rng = np.random.default_rng(nbytes)
    x = rng.standard_normal((nodes, FEATURES), dtype=np.float32)
    params = tuple(jnp.asarray(rng.standard_normal((FEATURES, FEATURES), dtype=np.float32) / 4) for _ in range(2))
    senders = ((rng.zipf(1.5, edges) - 1) % nodes).astype(np.int32)
    receivers = rng.integers(0, nodes, edges, dtype=np.int32)
    target = rng.standard_normal((nodes, FEATURES), dtype=np.float32)
    graph = tuple(jnp.asarray(a) for a in (x, senders, receivers, target))
    step = message_passing_step(nodes)
    moved = 4 * edges * FEATURES * 4  # two gathers and two sums, forward and backward: a lower bound
    vocab = max(1, edges // VOCAB_FRACTION)
    ids = ((rng.zipf(1.3, edges) - 1) % vocab).astype(np.int32)
    table = rng.standard_normal((vocab, FEATURES), dtype=np.float32)
    w = rng.standard_normal((edges, FEATURES), dtype=np.float32)
    embed_args = tuple(jnp.asarray(a) for a in (table, ids, w))
    built = [
        Case(
            GROUP,
            f"deterministic message passing step {nodes} nodes {edges} edges",
            moved,
            _contenders(step, (params, *graph)),
            "plain",
        ),  # fmt: skip
        Case(
            GROUP,
            f"deterministic embedding gradient {vocab} rows {edges} ids",
            2 * edges * FEATURES * 4,
            _contenders(embedding_gradient, embed_args),
            "plain",
        ),  # fmt: skip
    ]
    return sized(built, edges * FEATURES * 4)
