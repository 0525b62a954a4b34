"""The package's layering, read from its import statements, and the operator registry.

``_core`` imports nothing else of dmljax; each family (``_ops``, ``_buffers``,
``_random``) imports only ``_core`` and itself; the descriptor layer sits above the
families, the program transformations (``_transforms``) above ``_ops``; ``onnx``,
``bench`` and the public ``dmljax`` namespace sit above everything, and nothing below
imports them. No module imports another in a cycle.
"""

import ast
import dataclasses
import pathlib

import pytest

import dmljax
import dmljax.descriptors
from dmljax._descriptors.registry import registered

PACKAGE = pathlib.Path(dmljax.__file__).parent
FAMILIES = ("_ops", "_buffers", "_random")
# What each private package may import, besides itself.
ALLOWED = {
    "_core": set(),
    **{family: {"_core"} for family in FAMILIES},
    "_descriptors": {"_core", *FAMILIES},
    # whole-program transformations (dmljax.deterministic): rewrite programs into the ordered operators
    "_transforms": {"_core", "_ops"},
}


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: pathlib.Path, modules: set[str]) -> set[str]:
    """The dmljax modules ``path`` imports (``from a import b`` counts ``a.b`` when it is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "dmljax"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dmljax":
            submodules = {f"{node.module}.{alias.name}" for alias in node.names}
            found |= (submodules & modules) or {node.module}
    return found


GRAPH = {
    module_name(path): imported_modules(path, {module_name(p) for p in PACKAGE.rglob("*.py")})
    for path in PACKAGE.rglob("*.py")
}


def layer(module: str) -> str | None:
    """The private package a module belongs to (``_core``, ``_ops``, ...), or None above them."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else None


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if layer(m)))
def test_a_private_package_imports_only_the_layers_below_it(module):
    own = layer(module)
    crossing = sorted(m for m in GRAPH[module] if layer(m) != own and layer(m) not in ALLOWED[own])
    assert not crossing, f"{module} ({own}) may import only {sorted(ALLOWED[own]) or 'nothing'} besides {own}"


def test_the_tree_has_every_layer():
    assert {layer(m) for m in GRAPH} - {None} == set(ALLOWED)


def test_no_import_cycle():
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path[path.index(module) :], module))
        if module in done:
            return
        for imported in sorted(GRAPH.get(module, ())):
            if imported != module and imported in GRAPH:
                visit(imported, (*path, module))
        done.add(module)

    for module in sorted(GRAPH):
        visit(module, ())


PUBLIC_STRUCTS = sorted(
    {getattr(dmljax.descriptors, name) for name in dmljax.descriptors.__all__ if name.endswith("OperatorDesc")},
    key=lambda c: c.__name__,
)


def test_every_public_operator_struct_is_registered_once():
    structs = [operator.desc for operator in registered()]
    assert sorted(structs, key=lambda c: c.__name__) == PUBLIC_STRUCTS
    assert len(set(structs)) == len(structs)


@pytest.mark.parametrize("operator", registered(), ids=lambda o: o.name)
def test_a_registration_names_input_tensors_of_its_struct_in_struct_order(operator):
    fields = [f.name for f in dataclasses.fields(operator.desc)]
    assert all(member in fields and member.endswith(("_tensor", "_tensors")) for member in operator.inputs)
    assert sorted(operator.inputs, key=fields.index) == list(operator.inputs)
    levels = [row.level for row in operator.support]
    assert levels == sorted(set(levels))
