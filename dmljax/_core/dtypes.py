"""DirectML tensor data types (DML_TENSOR_DATA_TYPE) and their NumPy/JAX dtypes."""

from __future__ import annotations

import enum
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["DataType", "as_data_type", "x64_enabled"]


class DataType(enum.Enum):
    """A DirectML tensor data type, plus the extra types ONNX Gather accepts.

    Each member's value is the NumPy dtype name. Every dmljax API that takes a data type
    accepts a `DataType`, a NumPy/JAX dtype (or scalar type) or a name, in any case, with
    or without DirectML's ``DML_TENSOR_DATA_TYPE_`` prefix.

    Examples:
      >>> DataType.FLOAT16.itemsize
      2
      >>> as_data_type("uint32") is DataType.UINT32
      True
      >>> as_data_type(np.dtype("int8")) is DataType.INT8
      True
      >>> as_data_type("DML_TENSOR_DATA_TYPE_FLOAT32") is DataType.FLOAT32
      True
    """

    FLOAT64 = "float64"
    FLOAT32 = "float32"
    FLOAT16 = "float16"
    INT64 = "int64"
    INT32 = "int32"
    INT16 = "int16"
    INT8 = "int8"
    UINT64 = "uint64"
    UINT32 = "uint32"
    UINT16 = "uint16"
    UINT8 = "uint8"
    # Not DirectML buffer types; ONNX Gather accepts them as data (https://onnx.ai/onnx/operators/onnx__Gather.html).
    BOOL = "bool"
    BFLOAT16 = "bfloat16"
    COMPLEX64 = "complex64"
    COMPLEX128 = "complex128"

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype (bfloat16 is ml_dtypes' type, as in JAX)."""
        return np.dtype(jnp.dtype(self.value))

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def is_64bit(self) -> bool:
        """Whether JAX needs ``jax_enable_x64`` to hold this type unchanged."""
        return self in (DataType.FLOAT64, DataType.INT64, DataType.UINT64, DataType.COMPLEX128)

    def __repr__(self) -> str:
        return f"DataType.{self.name}"


_DML_PREFIX = "DML_TENSOR_DATA_TYPE_"
_BY_DTYPE = {member.dtype: member for member in DataType}


def as_data_type(value: Any, op: str = "dmljax", param: str = "dtype") -> DataType:
    """Convert a `DataType`, NumPy/JAX dtype, scalar type or name to a `DataType`.

    Raises:
      TypeError: ``value`` names no supported type; the message names ``op`` and ``param``.
    """
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        name = value.upper().removeprefix(_DML_PREFIX)
        if name in DataType.__members__:
            return DataType[name]
    try:
        dtype = np.dtype(jnp.dtype(value))
    except TypeError:
        dtype = None
    if dtype is not None and dtype in _BY_DTYPE:
        return _BY_DTYPE[dtype]
    names = ", ".join(m.name for m in DataType)
    raise TypeError(f"{op}: {param} must be one of {names}; got {param}={value!r}.")


def x64_enabled() -> bool:
    """Whether 64-bit types are enabled in the current context (``jax.enable_x64`` or the global flag)."""
    return jax.dtypes.canonicalize_dtype(np.int64) == np.dtype(np.int64)
