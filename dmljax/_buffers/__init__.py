"""Strided buffers: `TensorDesc` (sizes + strides), its layout analysis, `read_tensor`, `write_tensor`.

Imports only `dmljax._core`.
"""
