"""What dmljax's public functions do while an ONNX export traces them.

Each wrapper first runs the public function's own validation (the original function under
`jax.eval_shape`, so every error is the one the user knows, raised at trace time), then
binds the operator's primitive (`dmljax.onnx._primitives`) with the index mode resolved to
what the traced computation does:

* ``mode=None``: concrete (constant) indices were checked in range by the validation, so
  the plain ONNX node is exact; traced indices follow dmljax's default, clip for gathers
  and drop for scatter.
* ``"clip"``, ``"fill"``/``"drop"``: exact ONNX subgraphs around the node (`_indexing`);
  constant indices that are all in range need none of them.
* ``"promise_in_bounds"``: the plain node. Out-of-range indices are as undefined in
  ONNX Runtime (an error on CPU) as they are in dmljax.
* ``"checked"``: refused; ONNX has no run-time check that could raise.

The random operators are refused: ONNX's RandomUniform/RandomNormal/Bernoulli are not
Philox 4x32-10 and their bits are implementation-defined.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._core.errors import fail
from dmljax.onnx._primitives import (
    GATHER_ELEMENTS_P,
    GATHER_P,
    ORIGINALS,
    READ_TENSOR_P,
    SCATTER_P,
    SLICE1_P,
    WRITE_TENSOR_P,
)

__all__ = ["EXPORT_CALLS", "RANDOM_NAMES"]

RANDOM_NAMES = ("random_generator", "philox4x32_10", "uniform", "normal", "bernoulli", "dropout", "randint")


def _traced(x: Any) -> bool:
    return isinstance(x, jax.core.Tracer)


def _validate(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run the public function abstractly: its validation, its errors, its output shape.

    Traced arguments become shapes; concrete ones stay concrete (constant indices get
    the eager range check). `jax.disable_jit` keeps the implementation's jitted functions
    from caching a trace made under jax2onnx's patches of `jax.numpy`.
    """
    flags = [_traced(a) for a in args]
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a, t in zip(args, flags, strict=True) if t]

    def call(*traced: Any) -> Any:
        it = iter(traced)
        return ORIGINALS[name](*[next(it) if t else a for a, t in zip(args, flags, strict=True)], **kwargs)

    with jax.disable_jit():
        return jax.eval_shape(call, *specs)


def _in_range(indices: Any, size: int) -> bool:
    """Whether constant indices are all valid ONNX indices (``[-size, size)``)."""
    if _traced(indices):
        return False
    values = np.asarray(indices)
    low = -size if values.dtype.kind == "i" else 0
    return bool(((values >= low) & (values < size)).all())


def _refuse_checked(op: str, mode: Any) -> None:
    if getattr(mode, "value", mode) == "checked":
        rule = (
            "not be 'checked' in an ONNX export (ONNX has no run-time index check that could raise; "
            "pass 'clip', 'fill' or 'promise_in_bounds', or check the indices before the model runs)"
        )
        raise fail(op, "mode", rule, mode)


def _resolve_mode(mode: Any, indices: Any, size: int, default: str) -> str:
    """The mode the traced computation applies, ``"promise_in_bounds"`` for constant in-range indices."""
    name = getattr(mode, "value", mode)
    name = "fill" if name == "drop" else name
    if (name is None and not _traced(indices)) or _in_range(indices, size):
        return "promise_in_bounds"
    return default if name is None else name


def _indexed(name: str, prim, default: str) -> Callable[..., jax.Array]:
    """The export-time call of gather, gather_elements or scatter (arrays, then ``axis`` and ``mode``)."""
    signature = inspect.signature(ORIGINALS[name])

    def call(*args: Any, **kwargs: Any) -> jax.Array:
        bound = signature.bind(*args, **kwargs)  # the original's TypeError for a wrong call
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        reduction = arguments.pop("reduction", "none")
        if reduction != "none":  # ScatterElements 16/18 with a reduction: not exported yet
            raise fail(name, "reduction", "be 'none' in an ONNX export (no reduction is exported yet)", reduction)
        *arrays, axis, mode = arguments.values()
        _refuse_checked(name, mode)
        _validate(name, *arrays, axis=axis, mode=mode)
        data, indices = jnp.asarray(arrays[0]), arrays[1]
        axis = int(axis) % data.ndim
        resolved = _resolve_mode(mode, indices, data.shape[axis], default)
        return prim.bind(data, *map(jnp.asarray, arrays[1:]), axis=axis, mode=resolved)

    call.__name__ = call.__qualname__ = name
    return call


def slice1(input, offsets, sizes, strides, output_sizes=None) -> jax.Array:
    """Export-time `dmljax.slice1`: the window, validated, as static parameters of one primitive."""
    out = _validate("slice1", input, offsets, sizes, strides, output_sizes)
    window = dict(
        offsets=tuple(int(o) for o in offsets),
        sizes=tuple(int(s) for s in sizes),
        strides=tuple(int(t) for t in strides),
        output_sizes=tuple(out.shape),
    )
    return SLICE1_P.bind(jnp.asarray(input), **window)


def read_tensor(buffer, desc) -> jax.Array:
    """Export-time `dmljax.read_tensor`: the descriptor is the primitive's static parameter."""
    _validate("read_tensor", buffer, desc)
    return READ_TENSOR_P.bind(jnp.asarray(buffer), desc=desc)


def write_tensor(buffer, desc, value) -> jax.Array:
    """Export-time `dmljax.write_tensor` (an aliasing descriptor is refused by the validation)."""
    _validate("write_tensor", buffer, desc, value)
    return WRITE_TENSOR_P.bind(jnp.asarray(buffer), jnp.asarray(value), desc=desc)


def _refuse(name: str) -> Callable[..., Any]:
    """A random operator's export-time call: a ValidationError naming it and why."""
    first = next(iter(inspect.signature(ORIGINALS[name]).parameters))

    def call(*args: Any, **kwargs: Any) -> Any:
        value = args[0] if args else kwargs.get(first)
        shown = f"{jnp.result_type(value)}{list(np.shape(value))}" if value is not None else None
        rule = (
            "not reach an ONNX export: ONNX's RandomUniform, RandomNormal and Bernoulli are not Philox 4x32-10 "
            "and their bits are implementation-defined, so the deployed model could not reproduce dmljax's "
            "stream; generate the values in JAX and pass them to the model as an input"
        )
        raise fail(name, first, rule, shown)

    call.__name__ = call.__qualname__ = name
    return call


_gather = _indexed("gather", GATHER_P, "clip")
_gather_elements = _indexed("gather_elements", GATHER_ELEMENTS_P, "clip")
_scatter = _indexed("scatter", SCATTER_P, "fill")

# Public name -> what it does during an export.
EXPORT_CALLS: dict[str, Callable[..., Any]] = {
    "gather": _gather,
    "gather_elements": _gather_elements,
    "scatter": _scatter,
    "scatter_elements": _scatter,  # the same function as scatter
    "slice1": slice1,
    "read_tensor": read_tensor,
    "write_tensor": write_tensor,
    **{name: _refuse(name) for name in RANDOM_NAMES},
}
