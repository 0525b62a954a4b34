"""DirectML's data-movement operators.

- `depth_space` (DepthToSpace, SpaceToDepth), `join_split` (Join, Split), `tile`, `padding`,
  `reverse_subsequences`, `fill_value_sequence`, `one_hot`.
"""
