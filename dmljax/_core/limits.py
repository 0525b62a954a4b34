"""The limits every family shares, each defined once.

DirectML's tensor limits come from `DML_BUFFER_TENSOR_DESC
<https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_buffer_tensor_desc>`_
(sizes and strides are ``UINT``; "the total size of a buffer tensor may not exceed
(2^32 - 1) elements") and ``DML_TENSOR_DIMENSION_COUNT_MAX1`` (1 to 8 dimensions).

Examples:
  >>> MAX_DIMENSIONS, MAX_TENSOR_ELEMENTS == UINT32_MAX == 2**32 - 1
  (8, True)
"""

from __future__ import annotations

__all__ = ["INT32_MAX", "MAX_DIMENSIONS", "MAX_TENSOR_ELEMENTS", "UINT32_MAX"]

# DML_TENSOR_DIMENSION_COUNT_MAX1: DirectML tensors have 1 to 8 dimensions.
MAX_DIMENSIONS = 8
# The largest int32 and uint32 values.
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
# DML_BUFFER_TENSOR_DESC: a tensor (and so one operator output, or one call's stream of
# Philox words) has at most 2^32 - 1 elements.
MAX_TENSOR_ELEMENTS = UINT32_MAX
