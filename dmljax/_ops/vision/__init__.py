"""The vision operators: resampling, and (from other modules of this family) pooling and folds.

- `resample_plan`: Resample's arguments checked and its coordinate mapping inverted per
  output element, per axis (NumPy, at trace time: the indices and weights are constants).
- `resample`: Resample (DML_RESAMPLE1/2, ONNX Resize in the modes DirectML expresses) and
  its gradient ResampleGrad, combined in output row-major order by the ordered add.
- `windows`: the sliding-window arguments of pooling and folds, checked once.
- `pooling`: MaxPooling2 with its indices (ONNX MaxPool) and MaxUnpooling (ONNX MaxUnpool).
- `fold`: Unfold and Fold (DML_UNFOLD/DML_FOLD, ONNX Col2Im), the sums in the loop's order.
"""
