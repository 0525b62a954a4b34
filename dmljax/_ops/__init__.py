"""The index operators on logical arrays: scatter, gather, gather_elements, gather_nd, scatter_nd, slice1.

Each operator's semantics live in one jitted array function (its ``_impl``), reached through
one checked public function and, for the descriptor layer, a ``*_validated`` twin that skips
the argument checks. Shared by them: index types, modes and argument checks (`indices`),
range checks of concrete indices (`index_checks`; across processes, `processes`), flat
positions (`positions`), the XLA CPU formulations (`formulation`), the ordered scatter reductions (`reductions`) and the
markers' `jax.vmap` rules (`marker_rules`). Imports only `dmljax._core`.
"""

from dmljax._ops import marker_rules as marker_rules  # noqa: E402  (registers the markers' vmap rules)
from dmljax._ops import order_marker_rules as order_marker_rules  # noqa: E402  (their rules for the order operators)
