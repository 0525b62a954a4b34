"""The index operators: gathers, scatters, the ND pair, segments and slices.

- `gather` (Gather, GatherElements, GatherND), `gather_blocked` (its blocked CPU form),
  `gather_grad` (its gradient); `scatter` (ScatterElements with ONNX's reductions);
  `nd` (GatherND/ScatterND); `segment` (the segment reductions on sorted or unsorted ids)
  and `segment_ids` (their arguments, validated once);
  `slice1` (Slice1, negative strides) and `slice_grad` (SliceGrad).
"""
