"""Argument checks of the Philox distributions: dtypes, shapes, and the values of scalar or array arguments.

Every rule is checked at trace time from what is static: the dtype and shape of an
argument always, its values only when they are concrete (a Python number or a NumPy or
JAX array outside a trace). Messages follow the house template and name the public
function, the argument, the rule and the offending value.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import export

from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_TENSOR_ELEMENTS

__all__ = [
    "FLOATS",
    "INTS",
    "check_broadcast",
    "check_dtype",
    "check_int_bounds",
    "check_numeric",
    "check_probability",
    "check_stream_shape",
    "check_static",
    "concrete_value",
]

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int32", "uint32", "int64", "uint64")


def check_dtype(op: str, dtype: Any, allowed: tuple[str, ...]) -> np.dtype:
    """``dtype`` as a NumPy dtype, one of ``allowed``; 64-bit ones only with x64 on."""
    name = jnp.dtype(dtype).name
    if name not in allowed:
        raise TypeError(f"{op}: dtype must be one of {', '.join(allowed)}; got dtype={name}.")
    if jnp.dtype(dtype).itemsize == 8 and not x64_enabled():
        raise TypeError(f"{op}: dtype must be 32-bit or narrower unless x64 is on; got dtype={name} (jax.enable_x64).")
    return jnp.dtype(dtype)


def check_static(op: str, shape: Any, dims: tuple[Any, ...]) -> None:
    """An output shape must be known at trace time: a traced size gets a message that says how."""
    if any(isinstance(d, jax.core.Tracer) for d in dims):
        raise fail(op, "shape", "be static (mark it static: jax.jit(..., static_argnums=...))", shape)


def check_stream_shape(op: str, shape: Any, words_per_value: int) -> tuple[int, ...]:
    """An output shape: non-negative ints (or `jax.export` symbolic sizes), at most 2^32 - 1 stream words in all."""
    try:
        dims = tuple(shape)
    except TypeError:
        raise fail(op, "shape", "be a tuple of non-negative ints", shape) from None
    check_static(op, shape, dims)
    if not all(export.is_symbolic_dim(d) or _non_negative_int(d) for d in dims):
        raise fail(op, "shape", "be a tuple of non-negative ints", shape)
    dims = tuple(d if export.is_symbolic_dim(d) else int(d) for d in dims)
    if all(isinstance(d, int) for d in dims) and math.prod(dims) * words_per_value > MAX_TENSOR_ELEMENTS:
        raise fail(op, "shape", f"need at most 2**32 - 1 stream words ({words_per_value} per value)", dims)
    return dims


def _non_negative_int(d: Any) -> bool:
    return hasattr(d, "__index__") and not isinstance(d, bool) and d >= 0


def concrete_value(value: Any) -> np.ndarray | None:
    """``value`` as a NumPy array when it is known at trace time, else None."""
    try:
        return np.asarray(value)
    except OverflowError:  # a Python int beyond 64 bits
        return np.asarray(value, dtype=object)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        return None


def check_numeric(op: str, name: str, value: Any) -> None:
    """``value`` must be a real number or array (bool, integer or float; a tracer by its dtype).

    Examples:
      >>> check_numeric("uniform", "minval", "0")
      Traceback (most recent call last):
      ...
      TypeError: uniform: minval must be a real number or array (bool, integer or float); got minval='0' (type str).
    """
    if isinstance(value, bool | int | float):
        return
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(value).dtype
        except (TypeError, ValueError, OverflowError):
            dtype = None
    real = dtype is not None and (jnp.issubdtype(dtype, jnp.integer) or jnp.issubdtype(dtype, jnp.floating))
    if not (real or dtype == np.bool_):
        context = f"type {type(value).__name__}" if getattr(value, "dtype", None) is None else f"dtype {dtype}"
        rule = "be a real number or array (bool, integer or float)"
        raise TypeError(str(fail(op, name, rule, value, context)))


def check_probability(op: str, name: str, value: Any, context: str) -> None:
    """A concrete probability must lie in [0, 1] (NaN refused); a traced one is not checked.

    Examples:
      >>> check_probability("bernoulli", "p", np.array([0.5, np.nan]), "shape (2,)")
      Traceback (most recent call last):
      ...
      dmljax.ValidationError: bernoulli: p must be in [0, 1]; got p=np.float64(nan) (shape (2,)).
    """
    known = concrete_value(value)
    if known is None:
        return
    bad = ~((known >= 0) & (known <= 1))  # NaN compares False both ways: bad
    if np.any(bad):
        raise fail(op, name, "be in [0, 1]", value if known.ndim == 0 else known[bad].flat[0], context)


def check_broadcast(op: str, name: str, value: Any, shape: tuple[int, ...]) -> None:
    """``value`` must be a real number or array (`check_numeric`) broadcasting to ``shape`` (``shape`` unchanged)."""
    check_numeric(op, name, value)
    value_shape = tuple(jnp.shape(value))
    try:
        ok = tuple(jnp.broadcast_shapes(value_shape, shape)) == shape
    except (ValueError, TypeError):
        ok = False
    if not ok:
        raise fail(op, f"{name}.shape", f"broadcast to the output shape {shape}", value_shape)


def check_int_bounds(op: str, minval: Any, maxval: Any, dtype: np.dtype, shape: tuple[int, ...]) -> None:
    """Integer bounds of ``dtype``'s range with ``minval < maxval`` (values checked when concrete).

    Examples:
      >>> check_int_bounds("randint", -5, 3, np.dtype(np.uint32), (2,))
      Traceback (most recent call last):
      ...
      dmljax.ValidationError: randint: minval must be in [0, 4294967295] for uint32; got minval=-5 (shape (2,)).
    """
    info = np.iinfo(dtype)
    values = {}
    for name, value in (("minval", minval), ("maxval", maxval)):
        check_broadcast(op, name, value, shape)
        kind = jnp.result_type(value).kind if not isinstance(value, int | float | bool) else type(value).__name__
        if kind not in ("i", "u", "int") or isinstance(value, bool):
            raise fail(op, name, "be an integer scalar or integer array", value, f"dtype {jnp.result_type(value)}")
        known = concrete_value(value)
        if known is not None:
            lo, hi = (int(known.min()), int(known.max())) if known.size else (0, 0)
            if lo < info.min or hi > info.max:
                bad = lo if lo < info.min else hi
                rule = f"be in [{info.min}, {info.max}] for {dtype.name}"
                raise fail(op, name, rule, bad if known.ndim else value, f"shape {shape}")
            values[name] = known
    if len(values) == 2 and not np.all(values["minval"].astype(object) < values["maxval"].astype(object)):
        raise fail(op, "maxval", "exceed minval", maxval, f"minval={minval!r}")
