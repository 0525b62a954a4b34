"""Sphinx configuration: the API reference from the docstrings, the guides in Markdown.

Build (strict, offline): ``sphinx-build -W --keep-going -b html docs /tmp/dmljax-docs``.
No extension here fetches anything (no intersphinx); `dmljax_docs` fails the build when a
public name has no docstring or no entry in the API pages.
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # dmljax from this checkout, installed or not
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

project = "dmljax"
author = "dmljax contributors"
copyright = "dmljax contributors"  # noqa: A001 (Sphinx's name)

extensions = [
    "myst_parser",  # Markdown pages, as JAX and optax write theirs
    "sphinx.ext.autodoc",  # the API reference from the docstrings
    "sphinx.ext.napoleon",  # Google-style Args/Returns/Raises/Examples sections
    "dmljax_docs",  # every public name documented, and listed in the API pages
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
# The design notes (docs/design/, each formulation's measurements) join the table of
# contents when they are there (`dmljax_docs` adds the toctree to index.md).

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Signatures show the alias (linked to its entry), not the union it stands for.
autodoc_type_aliases = {"IndexArray": "dmljax.typing.IndexArray"}
autodoc_default_options = {"members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# Single backticks in the docstrings name Python objects (`jax.jit`, `gather`), as in JAX's.
default_role = "py:obj"

html_theme = "furo"
html_title = "dmljax"
