"""The JAX internals `dmljax.deterministic` needs, imported in one place.

The primitives with nested programs (``jit``, ``remat2``, ``custom_jvp_call``,
``custom_vjp_call``, ``shard_map``) and the pieces their rebinding takes (``lu.wrap_init``,
``FlatTree``, ``SymbolicZero``) have no public home in jax 0.10. Checked with jax 0.10.2;
tests/test_deterministic.py names the version if they move.
"""

from __future__ import annotations

from jax._src import linear_util as lu
from jax._src.custom_derivatives import SymbolicZero, custom_jvp_call_p, custom_vjp_call_p
from jax._src.shard_map import shard_map_p
from jax._src.tree_util import FlatTree

__all__ = ["FlatTree", "SymbolicZero", "custom_jvp_call_p", "custom_vjp_call_p", "lu", "shard_map_p"]
