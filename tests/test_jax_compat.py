"""JAX internals enter dmljax through one module, `dmljax._core.jax_compat`, and all resolve.

If `test_every_compat_name_resolves` fails after a JAX upgrade, the message names the JAX
version and each name it moved: find the new home in that JAX, update
`dmljax._core.jax_compat` (and `TESTED_JAX_VERSIONS`), and keep the fallback for the older one.
"""

import ast
import pathlib

import jax
import pytest

import dmljax
from dmljax._core import jax_compat

PACKAGE = pathlib.Path(dmljax.__file__).parent
COMPAT = PACKAGE / "_core" / "jax_compat.py"


def _private_jax_imports(path):
    """``(line, module)`` of every import of ``jax._src`` (or of ``_src`` from ``jax``) in ``path``,
    and of every call that takes a ``"jax._src..."`` module name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("jax._src")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            src = node.module == "jax" and any(a.name == "_src" for a in node.names)
            if node.module.startswith("jax._src") or src:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call):  # importlib.import_module("jax._src..."), __import__, a resolver
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            found += [(node.lineno, n) for n in names if n.startswith("jax._src")]
    return found


def test_only_the_compat_module_imports_jax_internals():
    offenders = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != COMPAT and (lines := _private_jax_imports(path))
    }
    assert offenders == {}


def test_the_scan_sees_every_import_form(tmp_path):
    lines = ("import jax._src.core", "from jax._src import core", "from jax import _src", "m.import_module('jax._src')")
    source = "\n".join(lines)
    (tmp_path / "m.py").write_text(source)
    assert [line for line, _ in _private_jax_imports(tmp_path / "m.py")] == [1, 2, 3, 4]
    assert len(_private_jax_imports(COMPAT)) >= 6  # the compat module's own


def test_every_compat_name_resolves():
    assert jax_compat.MISSING == {}, (
        f"jax {jax.__version__} moved JAX internals dmljax uses (tested with jax "
        f"{', '.join(jax_compat.TESTED_JAX_VERSIONS)}): {jax_compat.MISSING}"
    )
    assert all(jax_compat.available(name) for name in jax_compat.NAMES)


def test_public_names_where_jax_has_them():
    from jax.interpreters import partial_eval, xla

    assert jax_compat.dce_jaxpr is partial_eval.dce_jaxpr
    assert jax_compat.apply_primitive is xla.apply_primitive


def test_a_missing_name_falls_back_and_names_the_jax_version():
    missing = jax_compat._resolve("nothing_here", "jax", "no_such_attribute")
    try:
        assert not jax_compat.available("nothing_here")
        assert "jax.no_such_attribute: AttributeError" in jax_compat.MISSING["nothing_here"]
        with pytest.raises(NotImplementedError, match=f"nothing_here is not available in jax {jax.__version__}"):
            missing()
        assert jax_compat._resolve("nothing_either", "jax._src.no_such_module", "x", None) is None
    finally:
        jax_compat.MISSING.pop("nothing_here", None)
        jax_compat.MISSING.pop("nothing_either", None)
