"""The documentation: every public name documented, every plain ``python`` block of docs/ run, every path named exists.

``>>>`` blocks of README.md and docs/ run as doctests (``--doctest-glob`` in pyproject.toml).
Here each fenced ``python`` block without ``>>>`` runs in a fresh namespace; if the page
shows its output (an ``Output:`` line, then a ``text`` block), what it prints must equal
that. A block that imports an optional package that is not installed is skipped. The pages
of docs/design/ are left to their own checks.
"""

import ast
import contextlib
import doctest
import importlib.util
import io
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import dmljax_docs  # noqa: E402

# Pages whose blocks set the CPU device count, which must happen before JAX's first
# computation: each of their blocks runs in a fresh interpreter.
FRESH_PROCESS = {"guides/sharding.md", "guides/segments.md"}
FENCE = re.compile(r"^```(\w+)\n(.*?)^```\n(?:\nOutput:\n\n```text\n(.*?)^```\n)?", re.S | re.M)


def pages() -> list[pathlib.Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "design" not in p.relative_to(DOCS).parts[:1])


def python_blocks() -> list[tuple[str, int, str, str | None]]:
    """``(page, index, code, expected output or None)`` for each plain python block."""
    found = []
    for page in pages():
        name = page.relative_to(DOCS).as_posix()
        blocks = [m for m in FENCE.finditer(page.read_text()) if m[1] == "python" and ">>>" not in m[2]]
        found += [(name, i, m[2], m[3]) for i, m in enumerate(blocks)]
    return found


def skip_unless_importable(code: str) -> None:
    for node in ast.walk(ast.parse(code)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        names += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        for name in names:  # imported, so a module that needs an extra (dmljax.onnx: jax2onnx) counts too
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as error:
                pytest.skip(f"needs {error.name}, not installed")


BLOCKS = [pytest.param(*block, id=f"{block[0]}-{block[1]}") for block in python_blocks()]


@pytest.mark.parametrize("page, index, code, expected", BLOCKS)
def test_python_block_runs_and_prints_what_the_page_shows(page, index, code, expected):
    skip_unless_importable(code)
    if page in FRESH_PROCESS:
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=path)
        env.pop("XLA_FLAGS", None)
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        printed = done.stdout
    else:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"docs/{page}", "exec"), {"__name__": f"docs_{index}"})
        printed = out.getvalue()
    if expected is not None:
        assert printed == expected


def test_the_blocks_are_found():
    found = {(page, index) for page, index, _, _ in python_blocks()}
    assert {("guides/porting.md", 0), ("guides/onnx.md", 0), ("guides/randomness.md", 2)} <= found
    assert {("guides/segments.md", 0), ("guides/segments.md", 1)} <= found
    assert sum(expected is not None for *_, expected in python_blocks()) == 4


# --- the API reference covers the public names ------------------------------------------------


def api_entries() -> set[str]:
    """Names the API pages document with an ``auto*`` directive, qualified by their module."""
    entries = set()
    for page in (DOCS / "api").glob("*.md"):
        module = "dmljax"
        for line in page.read_text().splitlines():
            if m := re.match(r"\.\. currentmodule:: (\S+)", line):
                module = m[1]
            elif m := re.match(r"\.\. auto(?:function|class|exception|data):: (\S+)", line):
                entries.add(m[1] if m[1].startswith("dmljax.") else f"{module}.{m[1]}")
    return entries


def test_every_public_name_has_a_docstring_of_its_own():
    assert dmljax_docs.undocumented() == []


def test_every_public_name_is_in_the_api_pages():
    public = {f"{m}.{n}" for m, n in dmljax_docs.public_names()}
    assert public - api_entries() == set()


def test_a_missing_docstring_is_noticed(monkeypatch):
    import dmljax

    def undocumented(x):
        return x

    monkeypatch.setattr(dmljax, "gather", undocumented)
    assert dmljax_docs.undocumented() == ["dmljax.gather"]


@pytest.mark.parametrize(
    "module, name", [("dmljax.random", "prng_impl"), ("dmljax.onnx", "DEFAULT_OPSET"), ("dmljax.onnx", "MIN_OPSET")]
)
def test_attribute_docstring_examples_run(module, name):
    """Values document themselves in attribute docstrings, which ``--doctest-modules`` does not run."""
    if module == "dmljax.onnx":
        pytest.importorskip("jax2onnx")
    import jax
    import jax.numpy as jnp
    import numpy as np

    import dmljax

    text = dmljax_docs.attribute_docstring(module, name)
    namespace = {"jax": jax, "jnp": jnp, "np": np, "dmljax": dmljax}
    test = doctest.DocTestParser().get_doctest(text, namespace, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0


# A repository path as the pages and the code name them: a module or test file, a page, a script.
REPO_PATH = re.compile(r"(?<![\w./-])((?:dmljax|tests)/[\w/]+\.py|docs/[\w/.-]+\.md|scripts/[\w.-]*\w)")


def named_paths() -> dict[str, set[str]]:
    """Repository path -> the files that name it: README, docs/ (design notes too) and every module, test or script.

    The CHANGELOG names paths as they were then and is left out.
    """
    texts = [ROOT / "README.md", *DOCS.rglob("*.md")]
    texts += [p for folder in ("dmljax", "tests", "scripts") for p in (ROOT / folder).rglob("*.py")]
    named: dict[str, set[str]] = {}
    for path in texts:
        for match in REPO_PATH.finditer(path.read_text()):
            named.setdefault(match[1], set()).add(path.relative_to(ROOT).as_posix())
    return named


def test_every_repository_path_a_page_or_docstring_names_exists():
    named = named_paths()
    assert len(named) > 20 and "tests/reference.py" in named  # the scan finds what it should
    missing = {path: sorted(files) for path, files in named.items() if not (ROOT / path).exists()}
    assert not missing, f"paths named but absent from the repository: {missing}"


def test_api_functions_sit_under_their_family_heading():
    """Issue 39 class 15: the ``## Data movement`` heading sat between the segment text and the
    ``segment_*`` list, so those rendered under it and pad/tile/join under the next heading."""
    heading, under = None, {}
    for line in (DOCS / "api" / "array.md").read_text().splitlines():
        if line.startswith("## "):
            heading = line[3:]
        elif line.startswith(".. autofunction:: "):
            under[line.removeprefix(".. autofunction:: ")] = heading
    from dmljax._ops.index import segment
    from dmljax._ops.movement import depth_space, fill_value_sequence, join_split, padding, reverse_subsequences, tile

    for name in segment.__all__:
        assert under[name] == "Segment reductions", name
    movement = (padding, tile, join_split, depth_space, reverse_subsequences, fill_value_sequence)
    public = [n for module in movement for n in module.__all__ if n in under]
    assert len(public) >= 7 and all(under[name] == "Data movement" for name in public), public
    assert under["slice_grad"] == under["pad"] == under["concatenate"] == "Data movement"
    assert {under[n] for n in ("top_k", "argmax", "one_hot", "cumulative_sum")} == {
        "Order- and tie-sensitive operators"
    }


def test_no_page_quotes_a_test_count():
    """Issue 39 class 18: the README's "3,308 tests" went stale; no test keeps such a count
    true, so README.md and docs/ quote none (durations and dates are fine)."""
    count = re.compile(r"\b\d[\d,]*\s+(?:tests\b|passed\b|skipped\b)")
    for page in [ROOT / "README.md", *pages()]:
        found = count.findall(page.read_text())
        assert not found, (page.relative_to(ROOT), found)


def test_the_page_the_benchmark_summary_names_for_cases_behind_exists():
    from dmljax.bench._report import BEHIND_PAGE  # noqa: PLC0415

    path, section = re.fullmatch(r"(\S+), section '(.+)'", BEHIND_PAGE).groups()
    assert f"\n### {section}\n" in (ROOT / path).read_text()
