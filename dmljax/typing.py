"""Types for annotating code that calls dmljax, as `jax.typing` does for JAX.

Examples:
  >>> import jax, dmljax, dmljax.typing
  >>> def first_rows(table: jax.Array, rows: dmljax.typing.IndexArray) -> jax.Array:
  ...     return dmljax.gather(table, rows, axis=0)
  >>> first_rows(jnp.arange(6.0).reshape(3, 2), [0, 2]).tolist()
  [[0.0, 1.0], [4.0, 5.0]]
"""

from dmljax._core.typing import IndexArray as IndexArray

__all__ = ["IndexArray"]
