"""`dmljax.deterministic`: every float scatter-add of a program combined in the updates' order."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import numpy as np

from dmljax._core.errors import fail
from dmljax._transforms.interpreter import evaluate_closed

__all__ = ["deterministic"]

F = TypeVar("F", bound=Callable[..., Any])
OPTIONS: dict[str, Any] = {}  # no option yet: every keyword is refused by name


def deterministic(fun: F, **options: Any) -> F:
    """``fun`` with every float scatter-add of its program combined in the updates' row-major order.

    A function transformation in the manner of `jax.checkpoint`: ``deterministic(fun)``
    traces ``fun`` to a jaxpr on each call and evaluates it again with every float (and
    complex) ``scatter-add``, ``scatter-sub`` and ``scatter-mul`` replaced by dmljax's ordered
    reductions, which combine duplicates one after the other in the row-major order of the
    updates, as ``np.add.at`` (and ONNX's ScatterND/ScatterElements loop) does: the same
    bits on every platform, device count and run. That covers ``x.at[i].add``,
    ``jax.ops.segment_sum``, ``jnp.bincount``-style sums and every transpose JAX makes of a
    gather inside ``fun``; every float ``gather`` becomes the same gather with an ordered
    transpose, so ``jax.grad`` may be applied inside or outside ``deterministic``. It follows
    nested programs (``jit``, ``scan``, ``cond``, ``while_loop``, ``checkpoint``,
    ``custom_jvp``/``custom_vjp`` and their rules, ``shard_map``) and composes with `jax.jit`,
    `jax.vmap`, `jax.grad` and sharding. A program with none of those scatters or gathers
    is bound again unchanged: the same bits and the same compiled program.

    Not rewritten: integer scatters (exact in any order), scatters with
    ``unique_indices=True`` (no duplicate), ``scatter-max``/``scatter-min`` (their order
    shows only in NaN payloads and signed zeros; kept as XLA computes them), overwriting
    scatters, ``select_and_scatter_add`` (max-pooling gradients) and reductions that are
    not scatters (``jnp.sum`` over a sharded axis, matmuls: their partial sums follow the
    partitioning). Design note: docs/design/deterministic.md.

    Arguments of ``fun`` that are JAX or NumPy arrays are traced; every other leaf of its
    arguments (Python numbers, strings, callables) is a static value, as if closed over.

    Args:
      fun: the function to transform; its arguments and results are pytrees.
      **options: none is defined yet; any keyword is refused.

    Returns:
      A function of ``fun``'s arguments returning ``fun``'s results, ordered.

    Raises:
      TypeError: ``fun`` is not callable.
      ValidationError: an unknown option; or (when called) ``fun``'s program holds a
        scatter or gather inside a construct ``deterministic`` cannot follow (e.g. a
        ``pallas_call``), named in the message.

    Examples:
      >>> import dmljax
      >>> x, t = jnp.zeros(2), jnp.array([1, 1, 1])
      >>> u = jnp.array([1e8, 1.0, -1e8], jnp.float32)
      >>> dmljax.deterministic(lambda x, u: x.at[t].add(u))(x, u)  # (1e8 + 1) - 1e8 in float32
      Array([0., 0.], dtype=float32)
      >>> w = jnp.array([1e8, -1e8, 1.0], jnp.float32)
      >>> jax.grad(dmljax.deterministic(lambda x: x[t] @ w))(x)  # the gather's transpose, in order
      Array([0., 1.], dtype=float32)
      >>> dmljax.deterministic(lambda x: x, order="fast")
      Traceback (most recent call last):
      ...
      dmljax.ValidationError: deterministic: options must be empty (no option yet); got options=['order'].
    """
    if not callable(fun):
        raise TypeError(f"deterministic: fun must be callable; got fun={fun!r} of type {type(fun).__name__}.")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise fail("deterministic", "options", "be empty (no option yet)", unknown)

    @functools.wraps(fun)
    def ordered(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        traced = [i for i, leaf in enumerate(leaves) if _traced(leaf)]

        def flat_fun(*values: Any) -> Any:
            full = list(leaves)
            for i, v in zip(traced, values, strict=True):
                full[i] = v
            a, k = jax.tree_util.tree_unflatten(tree, full)
            return fun(*a, **k)

        values = [leaves[i] for i in traced]
        traced_fun = jax.jit(flat_fun).trace(*values)  # jit's trace: the arguments' mesh is in context
        outs = evaluate_closed(traced_fun.jaxpr, values)
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(traced_fun.out_info), outs)

    return ordered  # type: ignore[return-value]


def _traced(leaf: Any) -> bool:
    """Whether an argument leaf is traced: a JAX array (or tracer) or a NumPy array."""
    return isinstance(leaf, jax.Array | np.ndarray | np.generic)
