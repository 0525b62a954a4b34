"""Reductions that combine duplicates in one fixed order, on every platform and device count.

- `reductions`: ``combine``, the entry point, and ``choose_formulation``, the one place
  that chooses a reduction's formulation (per platform, type and layout).
- `ordered_add`: the ordered float add as a linear JAX primitive (its JVP and transpose).
- `sorted_fold`: the sorted fold (stable sort, then an in-order fold per run);
  `fold_kernel`: its Pallas kernel for CUDA.
- `ordered_partition`: a reduction in a partitioned program, each device folding the
  replicated operands.
- `extremal`: max/min with onnxruntime's NaN and signed-zero fold.
- `cumulative`: cumulative sums and products in the loop's order.
"""
