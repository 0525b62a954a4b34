"""Order- and tie-sensitive selection: top-k, arg-max/min, non-zero coordinates.

- `order_keys`: integer and float keys with the IEEE total order the operators share.
- `topk` (TopK), `arg_reduce` (ArgMax, ArgMin), `nonzero` (NonZeroCoordinates).
"""
