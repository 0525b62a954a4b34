"""Sphinx extension: every public name of dmljax has a docstring of its own and an API entry.

The public names are the ``__all__`` of ``dmljax``, ``dmljax.descriptors``, ``dmljax.random``,
``dmljax.typing`` and ``dmljax.onnx``. A function, class or enum must carry its own
``__doc__`` (not one inherited from a base class); any other value (a PRNG implementation
object, an ``int`` constant) either is an instance of a dmljax class with its own
docstring, or has an attribute docstring (a string literal right after the assignment) in
the module that defines it. After reading the pages, the build fails
(`sphinx.errors.ExtensionError`, whatever ``-W`` says) for every public name without such
a docstring or without a ``py`` object entry (``autofunction``, ``autoclass``,
``autodata``...) in the pages. ``tests/test_docs.py`` checks the same rule without Sphinx.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pathlib
import re
from typing import Any

PUBLIC_MODULES = ("dmljax", "dmljax.descriptors", "dmljax.random", "dmljax.typing", "dmljax.onnx")


def public_names() -> list[tuple[str, str]]:
    """``(module, name)`` for every name in the public modules' ``__all__`` that imports here.

    ``dmljax.onnx`` needs the optional extra (jax2onnx); without it only ``dmljax`` counts.
    """
    names = []
    for module_name in PUBLIC_MODULES:
        if module_name == "dmljax.onnx" and importlib.util.find_spec("jax2onnx") is None:
            continue
        module = importlib.import_module(module_name)
        names += [(module_name, name) for name in module.__all__]
    return names


def _defining_module(module_name: str, name: str) -> str:
    """The module a re-exported name comes from (``from dmljax._x import name as name``)."""
    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            if any((alias.asname or alias.name) == name for alias in node.names):
                return node.module
    return module_name


def attribute_docstring(module_name: str, name: str) -> str:
    """The docstring written after ``name = ...`` in the module that defines ``module_name.name``.

    Read with `ast`, as Sphinx reads attribute docstrings, so the tests need no Sphinx.
    """
    source = _defining_module(module_name, name)
    body = ast.parse(inspect.getsource(importlib.import_module(source))).body
    for node, following in zip(body, body[1:], strict=False):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if not any(isinstance(target, ast.Name) and target.id == name for target in targets):
            continue
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
            if isinstance(following.value.value, str):
                return inspect.cleandoc(following.value.value).strip()
    return ""


def own_docstring(module_name: str, name: str) -> str:
    """The docstring that documents ``module_name.name`` itself, or ``""``."""
    obj: Any = getattr(importlib.import_module(module_name), name)
    if inspect.isclass(obj):
        return (obj.__dict__.get("__doc__") or "").strip()
    if inspect.isroutine(obj):
        return (obj.__doc__ or "").strip()
    kind = type(obj)
    if kind.__module__.split(".")[0] == "dmljax":
        return (kind.__dict__.get("__doc__") or "").strip()
    return attribute_docstring(module_name, name)


def undocumented() -> list[str]:
    """Public names without a docstring of their own."""
    return [f"{m}.{n}" for m, n in public_names() if not own_docstring(m, n)]


def _fill_data_docstrings(app, what, name, obj, options, lines) -> None:
    """Give ``autodata`` of a re-exported constant the attribute docstring of its definition."""
    module_name, _, short = name.rpartition(".")
    if what == "data" and module_name in PUBLIC_MODULES and type(obj).__module__.split(".")[0] != "dmljax":
        doc = attribute_docstring(module_name, short)
        if doc:
            lines[:] = doc.splitlines()


def _check_coverage(app, env) -> None:
    from sphinx.errors import ExtensionError

    documented = set(env.get_domain("py").objects)
    missing_doc = undocumented()
    missing_entry = [f"{m}.{n}" for m, n in public_names() if f"{m}.{n}" not in documented]
    if missing_doc or missing_entry:
        raise ExtensionError(
            "API coverage: public names without a docstring of their own: "
            f"{missing_doc or 'none'}; public names without an entry in the API pages: {missing_entry or 'none'}"
        )


_DESIGN_TOCTREE = """

```{toctree}
:caption: Design notes
:maxdepth: 1

design/index
```
"""


def _add_design_notes(app, docname, source) -> None:
    """List ``docs/design/index.md`` in the index's table of contents when the checkout has it."""
    if docname == "index" and (pathlib.Path(app.srcdir) / "design" / "index.md").is_file():
        source[0] += _DESIGN_TOCTREE


# A design note named in a docstring (``docs/design/NAME.md``, plain or as a literal), which
# ``help()`` shows as the path in the repository.
_DESIGN_NOTE = re.compile(r"(``)?docs/design/([\w-]+)\.md(``)?")


def _link_design_notes(app, what, name, obj, options, lines) -> None:
    """Make every design note a docstring names a link to its page in the rendered reference."""
    for k, line in enumerate(lines):
        lines[k] = _DESIGN_NOTE.sub(lambda m: f":doc:`docs/design/{m.group(2)}.md </design/{m.group(2)}>`", line)


def setup(app) -> dict[str, Any]:
    app.connect("source-read", _add_design_notes)
    app.connect("autodoc-process-docstring", _fill_data_docstrings)
    app.connect("autodoc-process-docstring", _link_design_notes)
    app.connect("env-check-consistency", _check_coverage)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
