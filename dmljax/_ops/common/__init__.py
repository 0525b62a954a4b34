"""Rules every index operator shares: arguments, index types and modes, positions, range checks.

- `indices`: index types, the index modes and the argument checks of every operator.
- `static_args`: static (hashable) arguments for the jitted implementations.
- `positions`: flat and row positions, the row-offset batching rule, and whether the flat
  XLA CPU formulation may be used (`use_flat`).
- `index_checks`: the range checks of concrete indices and their ``jit`` modes;
  `processes`: the same across processes.
- `marker_rules`: the ``jax.vmap`` rules of the ONNX export markers.
"""
