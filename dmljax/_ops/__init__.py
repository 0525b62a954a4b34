"""The operators on logical arrays, one family a subpackage; each imports only `dmljax._core`.

Each operator's semantics live in one jitted array function (its ``_impl``), reached through
one checked public function and, for the descriptor layer, a ``*_validated`` twin that skips
the argument checks. The families:

- `common`: index types, modes and argument checks, positions, range checks of concrete
  indices, the XLA CPU formulation rule, the markers' ``jax.vmap`` rules;
- `ordered`: the ordered reductions (``combine``, the ordered add, the sorted fold and its
  kernel, max/min's fold, cumulative sums and products);
- `index`: gather, scatter, the ND pair, segments, Slice1 and SliceGrad;
- `movement`: DirectML's data-movement operators (pad, tile, join/split, depth/space, ...);
- `selection`: top-k, arg-max/min, non-zero coordinates and their order keys.
"""

from dmljax._ops.common import marker_rules as marker_rules  # noqa: E402  (registers the markers' vmap rules)
