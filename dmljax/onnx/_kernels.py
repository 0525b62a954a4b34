"""lax equations re-formulated for the nodes onnxruntime can run, with the same bits.

`dmljax.onnx._rewrite` binds every equation again; `reformulate` gives it the chance to
bind an equivalent formulation first, where jax2onnx's own lowering would write a node
onnxruntime's CPU provider has no kernel for, or a node the model's opset lacks:

* ``bitcast_convert_type`` between integers of one width (the wrapping sequences of
  `dmljax.fill_value_sequence`) is a wrapping ``convert_element_type`` (a ``Cast``): ONNX's
  BitCast exists only from opset 26, and for integers of one width the two are the same
  map. A float <-> integer bitcast has no such stand-in: `refuse_bitcasts` names it.
* ``pad`` of int16/uint16 (no Pad kernel) runs in int32 and is cast back: exact, a pad
  only moves values.
* ``tile`` of bfloat16 (no Tile kernel) is a ``Concat`` of copies: bit for bit.
* bfloat16 ``add``/``sub``/``mul``/``div``/``max``/``min`` (no kernels) run in float32
  and round once to bfloat16. float32 holds more than ``2p + 2`` bits of bfloat16's ``p =
  8``, so the rounded float32 result is the correctly rounded bfloat16 one: XLA's
  (which computes these in float32 too). bfloat16 comparisons (no kernels either) compare
  the float32 values, which hold every bfloat16 exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail

__all__ = ["BITCAST_OPSET", "check_name", "reformulate", "refuse_bitcasts"]

BITCAST_OPSET = 26
"""The first opset with ONNX's BitCast (https://onnx.ai/onnx/operators/onnx__BitCast.html)."""

_BF16, _F32, _I32 = np.dtype(jnp.bfloat16), np.dtype(np.float32), np.dtype(np.int32)
_PAD_CARRIER = {np.dtype(np.int16): _I32, np.dtype(np.uint16): _I32}
_BF16_ARITHMETIC = {"add", "sub", "mul", "div", "max", "min"}
# Comparisons of bfloat16 (onnxruntime has no bfloat16 Equal/Less/...) compare the exact float32 values.
_BF16_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def _bitcast(x: Any, new_dtype: Any) -> Any:
    old, new = np.dtype(x.dtype), np.dtype(new_dtype)
    if old.kind in "iu" and new.kind in "iu" and old.itemsize == new.itemsize:
        return lax.convert_element_type(x, new)  # two's complement: the wrapping conversion
    return None


def _pad(x: Any, value: Any, padding_config: Any) -> Any:
    carrier = _PAD_CARRIER.get(np.dtype(x.dtype))
    if carrier is None:
        return None
    wide, fill = (lax.convert_element_type(v, carrier) for v in (x, value))
    return lax.convert_element_type(lax.pad(wide, fill, padding_config), x.dtype)


def _tile(x: Any, reps: tuple[int, ...]) -> Any:
    if np.dtype(x.dtype) != _BF16:
        return None
    reps = tuple(reps)
    x = lax.expand_dims(x, tuple(range(len(reps) - x.ndim))) if len(reps) > x.ndim else x
    reps = (1,) * (x.ndim - len(reps)) + reps
    for axis, r in enumerate(reps):
        if r != 1:
            x = lax.concatenate([x] * r, axis) if r else lax.slice_in_dim(x, 0, 0, axis=axis)
    return x


def reformulate(name: str, invals: list[Any], params: dict[str, Any]) -> list[Any] | None:
    """The outputs of an equivalent formulation of ``name`` (bound now), or None to bind it as it is."""
    out = None
    if name == "bitcast_convert_type":
        out = _bitcast(invals[0], params["new_dtype"])
    elif name == "pad" and not any(interior for _, _, interior in params["padding_config"]):
        out = _pad(invals[0], invals[1], params["padding_config"])
    elif name == "tile":
        out = _tile(invals[0], params["reps"])
    elif name in _BF16_ARITHMETIC and any(np.dtype(getattr(x, "dtype", _F32)) == _BF16 for x in invals):
        wide = [lax.convert_element_type(x, _F32) for x in invals]
        out = lax.convert_element_type(getattr(lax, f"{name}_p").bind(*wide, **params), _BF16)
    elif name in _BF16_COMPARISONS and any(np.dtype(getattr(x, "dtype", _F32)) == _BF16 for x in invals):
        out = getattr(lax, f"{name}_p").bind(*(lax.convert_element_type(x, _F32) for x in invals), **params)
    return None if out is None else [out]


def refuse_bitcasts(eqns: Iterable[Any], opset: int) -> None:
    """Refuse a float <-> integer ``bitcast_convert_type`` left in the exported jaxpr below `BITCAST_OPSET`."""
    if opset >= BITCAST_OPSET:
        return
    for eqn in eqns:
        if eqn.primitive.name == "bitcast_convert_type":
            old, new = np.dtype(eqn.invars[0].aval.dtype), np.dtype(eqn.params["new_dtype"])
            rule = (
                f"reach an ONNX export only from opset {BITCAST_OPSET} (ONNX's BitCast; opset {opset} has none, and "
                "a float's bits have no exact stand-in in other nodes)"
            )
            raise fail("jax.lax.bitcast_convert_type", "operand", rule, f"{old} -> {new}")


_OP_NAME = re.compile(r"'([A-Za-z_][\w.]*): ")


def check_name(eqn: Any) -> str:
    """The operator a ``checkify.check`` equation belongs to (its message's ``op:`` prefix), else checkify's."""
    found = _OP_NAME.search(str(eqn.params.get("err_tree", "")))
    return found.group(1) if found else "jax.experimental.checkify.check"
