"""The vision operators: resampling, and (from other modules of this family) pooling and folds.

- `resample_plan`: Resample's arguments checked and its coordinate mapping inverted per
  output element, per axis (NumPy, at trace time: the indices and weights are constants).
- `resample`: Resample (DML_RESAMPLE1/2, ONNX Resize in the modes DirectML expresses) and
  its gradient ResampleGrad, combined in output row-major order by the ordered add.
"""
