"""Every JAX name dmljax reaches outside JAX's documented API, in one place, imported defensively.

JAX keeps no promise about ``jax._src``; a JAX release may move or rename what this module
reads. Each name is resolved once, at import, by `_resolve`: where this JAX has moved it, the
name becomes its fallback and `MISSING` records why, so that ``import dmljax`` still works
and only the feature that needs it degrades (as each name's comment says) or raises
`NotImplementedError` naming the JAX version. tests/test_jax_compat.py fails on a JAX where
any name is missing, naming that version, and holds every other module to this one
(no other ``jax._src`` import in the package). Public APIs are used where they exist.

Examples:
  >>> MISSING  # this JAX has every name
  {}
  >>> sorted(NAMES)[:3]
  ['apply_primitive', 'checkify_error_checks', 'clamp_scatter_indices']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import jax

__all__ = [
    "MISSING",
    "NAMES",
    "TESTED_JAX_VERSIONS",
    "apply_primitive",
    "available",
    "checkify_error_checks",
    "clamp_scatter_indices",
    "custom_jvp_call_p",
    "custom_vjp_call_p",
    "dce_jaxpr",
    "default_prng_impl_holder",
    "flat_tree_with_aux",
    "jaxpr_inputs",
    "linear_util",
    "mlir_broadcast_in_dim",
    "prim_requires_devices_during_lowering",
    "prng_table",
    "scan_counts",
    "shard_map_p",
    "symbolic_zero",
    "trace_state_clean",
]

# The JAX versions every name below was checked against here (tests/test_jax_compat.py runs
# on every JAX CI installs, the newest too, and names the version where one is missing).
TESTED_JAX_VERSIONS = ("0.10.2", "0.12.0.1")

# name -> where it was looked for and the error, for each name this JAX lacks.
MISSING: dict[str, str] = {}


def _unavailable(name: str) -> Callable[..., Any]:
    """A stand-in that raises, naming ``name`` and this JAX's version."""

    def unavailable(*args: Any, **kwargs: Any) -> Any:
        tested = ", ".join(TESTED_JAX_VERSIONS)
        raise NotImplementedError(
            f"dmljax: {name} is not available in jax {jax.__version__} ({MISSING.get(name)}); "
            f"dmljax was tested with jax {tested}."
        )

    return unavailable


_RAISE = object()  # `_resolve`'s default fallback: a stand-in that raises


def _resolve(name: str, module: str, attribute: str, fallback: Any = _RAISE) -> Any:
    """``module.attribute``, or ``fallback`` (default: a stand-in that raises) recorded in `MISSING`."""
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        MISSING[name] = f"{module}.{attribute}: {type(error).__name__}: {error}"
        return _unavailable(name) if fallback is _RAISE else fallback


def available(name: str) -> bool:
    """Whether this JAX has ``name`` (one of `NAMES`), not its fallback.

    Examples:
      >>> available("dce_jaxpr")
      True
    """
    return name not in MISSING


# Public (jax.interpreters). The ONNX export's dead-code elimination of rewritten jaxprs.
dce_jaxpr = _resolve("dce_jaxpr", "jax.interpreters.partial_eval", "dce_jaxpr")
# Public (jax.interpreters). The eager implementation of dmljax's primitives (the ordered add).
apply_primitive = _resolve("apply_primitive", "jax.interpreters.xla", "apply_primitive")

# Private. Primitives whose lowering needs the devices (the replicated ordered add holds a
# custom_partitioning). Fallback: a set nobody reads (lowering that primitive then fails in JAX).
prim_requires_devices_during_lowering = _resolve(
    "prim_requires_devices_during_lowering", "jax._src.dispatch", "prim_requires_devices_during_lowering", set()
)
# Private. Whether a call is at the top level (no trace): the wide-vector twin of a random
# program (`dmljax._random.vector_width`). Fallback: never (the default program; same bits).
trace_state_clean = _resolve("trace_state_clean", "jax._src.core", "trace_state_clean", lambda: False)
# Private. A broadcast of a scalar to a symbolic shape in a lowering (Philox's mulhi under jax.export).
mlir_broadcast_in_dim = _resolve("mlir_broadcast_in_dim", "jax._src.interpreters.mlir", "broadcast_in_dim")
# Private. XLA's clamping of clip-mode scatter indices, for the ONNX export's clip scatters.
clamp_scatter_indices = _resolve("clamp_scatter_indices", "jax._src.lax.slicing", "_clamp_scatter_indices")
# Private. Checkify's rule table (`dmljax._ops.common.index_checks`). Fallback: None: JAX's own
# error instead of dmljax's for mode="checked" compiled without checkify.
checkify_error_checks = _resolve("checkify_error_checks", "jax._src.checkify", "error_checks", None)
# Private. JAX's PRNG implementation table and the jax_default_prng_impl option holder
# (`dmljax._random.prng_impl.register`). Fallback: None: the name is not registered with JAX.
prng_table = _resolve("prng_table", "jax._src.random.prng", "prngs", None)
default_prng_impl_holder = _resolve("default_prng_impl_holder", "jax._src.config", "default_prng_impl", None)

# `dmljax.deterministic` (`dmljax._transforms.interpreter`) rebinds the primitives with nested
# programs; none has a public home. Fallback: a stand-in that raises (a program holding that
# primitive and a target cannot be rewritten).
linear_util = _resolve("linear_util", "jax._src", "linear_util")
symbolic_zero = _resolve("symbolic_zero", "jax.custom_derivatives", "SymbolicZero")
custom_jvp_call_p = _resolve("custom_jvp_call_p", "jax._src.custom_derivatives", "custom_jvp_call_p", None)
custom_vjp_call_p = _resolve("custom_vjp_call_p", "jax._src.custom_derivatives", "custom_vjp_call_p", None)
shard_map_p = _resolve("shard_map_p", "jax._src.shard_map", "shard_map_p", None)


def _flat_tree_with_aux() -> Any:
    """``FlatTree.flatten(tree).with_aux(aux)``: a shard_map body's result (jax 0.10: in
    ``jax._src.tree_util``; jax 0.12: the ``flatten`` of ``jax._src.flattree``)."""
    try:
        flatten = importlib.import_module("jax._src.tree_util").FlatTree.flatten
    except (ImportError, AttributeError):
        flatten = _resolve("flat_tree_with_aux", "jax._src.flattree", "flatten")
    return lambda tree, aux: flatten(tree).with_aux(aux)


flat_tree_with_aux = _flat_tree_with_aux()


def jaxpr_inputs(jaxpr: Any) -> list[Any]:
    """A jaxpr's constant variables, then its input variables: what `jax.core.eval_jaxpr`
    binds to ``[*consts, *args]``. From jax 0.12 a jaxpr may carry its constants, and a
    program built without them (a ``custom_vjp`` forward rule's) lists their variables among
    its inputs: ``all_invars`` is that list there."""
    if hasattr(jaxpr, "all_invars"):
        return list(jaxpr.all_invars)
    return [*jaxpr.constvars, *jaxpr.invars]


def scan_counts(params: dict[str, Any]) -> tuple[int, int]:
    """A ``scan`` equation's numbers of constants and carried values: its ``num_consts`` and
    ``num_carry`` up to jax 0.11; from jax 0.12 the leaf counts of its ``ft_in`` trees
    (constants, carry, scanned inputs). Either way the body's outputs are the carry, then the
    stacked outputs the equation itself returns (jax 0.12 forwards the others outside it)."""
    if "num_consts" in params:
        return params["num_consts"], params["num_carry"]
    consts, carry, _ = params["ft_in"].unpack()
    return len(list(consts.vals)), len(list(carry.vals))


NAMES = tuple(name for name in __all__ if name not in ("MISSING", "NAMES", "TESTED_JAX_VERSIONS", "available"))
