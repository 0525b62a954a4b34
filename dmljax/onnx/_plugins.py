"""dmljax's operators as jax2onnx plugins: one leaf plugin per primitive.

Importing this module registers them in jax2onnx's plugin registry, so both
`dmljax.onnx.export` and a plain ``jax2onnx.to_onnx`` lower dmljax's primitives to ONNX's
own nodes. While jax2onnx traces a function, each plugin's binding swaps dmljax's public
functions for their export-time calls (`dmljax.onnx._calls.EXPORT_CALLS`) wherever a
``dmljax`` module holds them (``dmljax.gather``, the defining module, modules that
imported them such as the descriptor layer's), and restores them afterwards.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from jax2onnx.plugins._patching import AssignSpec, MonkeyPatchSpec
from jax2onnx.plugins.plugin_system import PrimitiveLeafPlugin, register_primitive

from dmljax.onnx._calls import EXPORT_CALLS
from dmljax.onnx._indexing import lower_gather, lower_gather_elements, lower_scatter
from dmljax.onnx._layouts import lower_read_tensor, lower_slice1, lower_write_tensor
from dmljax.onnx._primitives import (
    GATHER_ELEMENTS_P,
    GATHER_P,
    ORIGINALS,
    READ_TENSOR_P,
    SCATTER_P,
    SLICE1_P,
    WRITE_TENSOR_P,
)

__all__ = ["patch_specs", "patch_targets"]


def patch_targets(namespace: dict[str, Any] | None = None) -> list[tuple[Any, str, str]]:
    """Every ``(module or dict, attribute, public name)`` that holds an original public function.

    Scans the loaded ``dmljax`` modules (``dmljax.onnx`` excepted) and, when given, one
    more namespace (the exported function's globals).
    """
    by_id: dict[int, str] = {}
    for name, fn in ORIGINALS.items():  # scatter_elements is scatter: the first name wins
        by_id.setdefault(id(fn), name)
    found: list[tuple[Any, str, str]] = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "dmljax" or module_name.startswith("dmljax.")):
            continue
        if module_name.startswith("dmljax.onnx"):
            continue
        for attr, value in list(vars(module).items()):
            if id(value) in by_id:
                found.append((module, attr, by_id[id(value)]))
    for attr, value in list((namespace or {}).items()):
        if id(value) in by_id:
            found.append((namespace, attr, by_id[id(value)]))
    return found


def patch_specs() -> list[AssignSpec | MonkeyPatchSpec]:
    """jax2onnx patch specs that install the export-time calls on every module holding an operator."""
    return [
        AssignSpec(module, attr, EXPORT_CALLS[name], delete_if_missing=False) for module, attr, name in patch_targets()
    ]


def _plugin(prim, lower, component: str, onnx_ops: tuple[str, ...], bindings: bool = False):
    """Register one leaf plugin that lowers ``prim`` with ``lower``."""

    class Plugin(PrimitiveLeafPlugin):
        _PRIM: ClassVar = prim

        def lower(self, ctx: Any, eqn: Any) -> None:
            lower(ctx, eqn)

        @classmethod
        def binding_specs(cls) -> list[AssignSpec | MonkeyPatchSpec]:
            return patch_specs() if bindings else []

    Plugin.__name__ = Plugin.__qualname__ = f"Dmljax{component.title().replace('_', '')}Plugin"
    register_primitive(
        jaxpr_primitive=prim.name,
        jax_doc=f"dmljax.{component}",
        onnx=[{"component": op, "doc": f"https://onnx.ai/onnx/operators/onnx__{op}.html"} for op in onnx_ops],
        since="dmljax 0.1.0",
        context="primitives.dmljax",
        component=component,
        testcases=[],
    )(Plugin)
    return Plugin


# The gather plugin carries the bindings of every operator (one set of patches per export).
PLUGINS = (
    _plugin(GATHER_P, lower_gather, "gather", ("Gather", "Clip", "Where"), bindings=True),
    _plugin(GATHER_ELEMENTS_P, lower_gather_elements, "gather_elements", ("GatherElements", "Clip", "Where")),
    _plugin(SCATTER_P, lower_scatter, "scatter", ("ScatterElements", "Clip", "Pad", "Slice")),
    _plugin(SLICE1_P, lower_slice1, "slice1", ("Slice",)),
    _plugin(READ_TENSOR_P, lower_read_tensor, "read_tensor", ("Reshape", "Transpose", "Slice", "Pad", "Expand")),
    _plugin(WRITE_TENSOR_P, lower_write_tensor, "write_tensor", ("Reshape", "Transpose", "Concat", "Slice")),
)
