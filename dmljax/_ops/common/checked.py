"""`IndexMode.CHECKED` on traced indices: a `checkify.check` naming the first bad index.

`checkify_in_bounds` adds the check, with the one routine and message of every index check
(`dmljax._ops.common.index_checks.first_bad`, `out_of_bounds`). Its predicate passes through
`needs_checkify_p`, an identity that `jax.experimental.checkify.checkify` removes and that,
compiled without it, raises dmljax's `ValidationError` naming the operator.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.extend
import jax.numpy as jnp
from jax.experimental import checkify
from jax.interpreters import ad, batching, mlir

from dmljax._core import jax_compat
from dmljax._core.errors import fail
from dmljax._core.platform import concrete_shape
from dmljax._ops.common.index_checks import first_bad, index_low, out_of_bounds, valid_bounds

__all__ = ["checkify_in_bounds", "needs_checkify_p"]


def checkify_in_bounds(
    op: str, indices: jax.Array, axis_size: Any, axis: int, param: str = "indices", low: int | None = None
) -> None:
    """Add a `checkify.check` that every (traced) index lies in ``[low, axis_size)`` (``low``:
    `index_low` by default); its error is `out_of_bounds` of the first bad one.

    Examples:
      >>> def f(i):
      ...     checkify_in_bounds("gather", i, 3, 0)
      ...     return i
      >>> err, _ = checkify.checkify(f)(jnp.array([[0, 1], [5, 2]]))
      >>> print(err.get().split(" (`check`")[0])
      gather: index 5 is out of bounds for axis 0 with size 3 (indices[1, 0]; valid range [-3, 2]).
    """
    low = index_low(indices.dtype, axis_size) if low is None else low
    found, first, value = first_bad(indices, *valid_bounds(indices.dtype, axis_size, low))
    if concrete_shape(indices.shape):
        names = tuple(f"p{d}" for d in range(indices.ndim))
        coordinates = dict(zip(names, jnp.unravel_index(first, indices.shape), strict=True))
    else:  # symbolic sizes: the flat position
        coordinates, param = {"p0": first}, f"{param}.ravel()"
    where = ", ".join(f"{{{name}}}" for name in coordinates)
    message = out_of_bounds(op, param, "{value}", where, axis, axis_size, low)
    checkify.check(_needs_checkify(op, ~found), message, value=value, **coordinates)  # type: ignore[arg-type]


# An identity on the checked predicate (`checkify_in_bounds`). Under `checkify.checkify` its
# rule removes it; compiled without, its lowering raises dmljax's error naming the operator,
# before JAX's "Cannot abstractly evaluate a checkify.check which was not functionalized"
# (which names none). Where this JAX's checkify has no rule table, it is not bound.
needs_checkify_p = jax.extend.core.Primitive("dmljax_needs_checkify")
needs_checkify_p.def_impl(lambda pred, *, op: pred)
needs_checkify_p.def_abstract_eval(lambda pred, *, op: pred)


def _needs_checkify_lowering(ctx: Any, pred: Any, *, op: str) -> Any:
    rule = (
        "run under jax.experimental.checkify.checkify when the indices are traced (wrap the jitted "
        "function: checkify.checkify(jax.jit(f)), then err.throw()), or be another mode: None or "
        '"clip" / "fill" / "promise_in_bounds"'
    )
    raise fail(op, "mode", rule, "checked", "traced indices compiled without checkify")


def _needs_checkify_jvp(primals: tuple, tangents: tuple, *, op: str) -> tuple:
    return needs_checkify_p.bind(primals[0], op=op), tangents[0]


def _needs_checkify_batch(args: tuple, dims: tuple, *, op: str) -> tuple:
    return needs_checkify_p.bind(args[0], op=op), dims[0]


mlir.register_lowering(needs_checkify_p, _needs_checkify_lowering)
ad.primitive_jvps[needs_checkify_p] = _needs_checkify_jvp
batching.primitive_batchers[needs_checkify_p] = _needs_checkify_batch


def _register_checkify_rule() -> bool:
    """Tell checkify to drop the primitive; False where this jax keeps its rules elsewhere."""
    if not jax_compat.available("checkify_error_checks"):  # pragma: no cover - JAX's own error instead
        return False
    jax_compat.checkify_error_checks[needs_checkify_p] = _drop_under_checkify
    return True


def _drop_under_checkify(*args: Any, op: str) -> tuple[Any, jax.Array]:
    """Checkify's rule: ``(error, pred)`` unchanged. The arguments are ``(error,
    enabled_errors, pred)``, after a ``ctx`` in newer jax (0.12), so they are read from the end."""
    error, _, pred = args[-3:]
    return error, pred


_CHECKIFY_RULE = _register_checkify_rule()


def _needs_checkify(op: str, pred: jax.Array) -> jax.Array:
    return needs_checkify_p.bind(pred, op=op) if _CHECKIFY_RULE else pred
