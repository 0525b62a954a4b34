"""jax2onnx's plugins for exactly the primitives a jaxpr holds, without importing all ~500.

jax2onnx fills its registry (``PLUGIN_REGISTRY``, primitive name -> plugin) as a side
effect of importing its plugin modules; ``to_onnx`` imports every module of the
``jax2onnx.plugins`` tree first (about 1,500 modules with their dependencies). Here the
plugin sources are scanned once for ``jaxpr_primitive=`` and the expression resolved to
a primitive name (a string, or ``jax.lax.<name>_p.name``), and for second names
(``PLUGIN_REGISTRY.setdefault("stack", ...)``), and only the modules that
register a needed name are imported. A primitive the scan cannot place falls back to
jax2onnx's full import, so the result is never worse than ``to_onnx``'s.
"""

from __future__ import annotations

import functools
import importlib
import pathlib
import re
from collections.abc import Iterable

import jax
import jax2onnx.plugins
from jax2onnx.plugins.plugin_system import PLUGIN_REGISTRY, import_all_plugins

__all__ = ["ensure_plugins"]

_REGISTERS = re.compile(r"jaxpr_primitive\s*=\s*([^,\n)]+)")
_LAX_NAME = re.compile(r"(?:jax\.)?lax\.(?:linalg\.)?(\w+_p)\.name")
# A second name for a plugin, e.g. jax.numpy.stack's for JAX's own ``stack`` primitive.
_ALIASES = re.compile(r"PLUGIN_REGISTRY\.setdefault\(\s*[\"'](\w+)[\"']")


def _resolve(expr: str) -> str | None:
    """The primitive name a ``jaxpr_primitive=`` expression stands for, or None."""
    expr = expr.strip()
    if expr[:1] in "\"'" and expr[-1:] == expr[:1]:
        return expr[1:-1]
    match = _LAX_NAME.fullmatch(expr)
    if match is None:
        return None
    prim = getattr(jax.lax, match.group(1), None) or getattr(jax.lax.linalg, match.group(1), None)
    return getattr(prim, "name", None)


@functools.cache
def _index() -> dict[str, tuple[str, ...]]:
    """Primitive name -> the plugin modules that register it (the file system's order)."""
    root = pathlib.Path(jax2onnx.plugins.__file__).parent
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.name in {"plugin_system.py", "__init__.py"}:
            continue
        module = ".".join(("jax2onnx.plugins", *path.relative_to(root).with_suffix("").parts))
        text = path.read_text(encoding="utf-8")
        names = [_resolve(expr) for expr in _REGISTERS.findall(text)] + _ALIASES.findall(text)
        for name in names:
            if name is not None:
                found.setdefault(name, []).append(module)
    return {name: tuple(modules) for name, modules in found.items()}


def ensure_plugins(names: Iterable[str]) -> None:
    """Import jax2onnx's plugins for ``names`` (all of them if one cannot be placed)."""
    missing = [name for name in names if name not in PLUGIN_REGISTRY]
    index = _index()
    for name in missing:
        for module in index.get(name, ()):
            importlib.import_module(module)
    if any(name not in PLUGIN_REGISTRY for name in missing):
        import_all_plugins()
