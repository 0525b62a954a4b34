"""The ordered gather, reached from the families that may not import ``_ops``.

`ordered_take` (``flat[targets]``, 0 where a target is past the end) is
`dmljax._ops.ordered.ordered_add.ordered_take`: a linear primitive whose transpose adds the
cotangent into ``flat`` in the cotangent's row-major order (bit for bit ``np.add.at``), on
every platform and device count. ``_buffers`` may import only ``_core``
(``tests/test_architecture.py``), so ``_ops`` hands it over here when it is imported
(`register_take`); ``import dmljax`` imports ``_ops``, so a user's call always finds it.
`dmljax._buffers.strided` reads overlapping strides through it (docs/design/gather-gradient.md).
"""

from __future__ import annotations

from collections.abc import Callable

import jax

__all__ = ["ordered_take", "register_take"]

# ``fun(flat, targets) -> flat[targets]``: set once by `dmljax._ops.ordered.ordered_add`.
_TAKE: list[Callable[[jax.Array, jax.Array], jax.Array]] = []


def register_take(fun: Callable[[jax.Array, jax.Array], jax.Array]) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """Make ``fun`` the ordered take that `ordered_take` calls; returns ``fun``."""
    _TAKE[:] = [fun]
    return fun


def ordered_take(flat: jax.Array, targets: jax.Array) -> jax.Array:
    """``flat[targets]`` (0 for a target ``>= flat.size``) whose transpose adds in row-major order.

    Args:
      flat: 1-D array.
      targets: unsigned positions into ``flat``, any shape.

    Returns:
      Array of ``targets.shape`` and ``flat``'s type.

    Raises:
      RuntimeError: nothing registered (``dmljax._ops`` not imported).

    Examples:
      >>> import jax.numpy as jnp
      >>> import dmljax  # registers dmljax._ops.ordered.ordered_add.ordered_take
      >>> ordered_take(jnp.array([2.0, 3.0]), jnp.array([1, 1, 0], jnp.uint32))
      Array([3., 3., 2.], dtype=float32)
    """
    if not _TAKE:
        raise RuntimeError(
            "dmljax._core.ordered_hooks: no ordered take is registered; import dmljax "
            "(dmljax._ops.ordered.ordered_add registers it)."
        )
    return _TAKE[0](flat, targets)
