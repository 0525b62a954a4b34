"""Prose:code ratio of the library: docstring and comment lines against code lines.

Re-run: ``python scripts/prose_ratio.py [REV]`` from the repository root; with a git
revision (``a125927``, ``HEAD~3``) it counts that commit's files instead of the working
tree. Counts every ``dmljax/**/*.py`` but ``dmljax/bench/``. A line is prose when it lies
in a docstring (module, class or function: the first statement's string) or starts
with ``#``; code when it holds anything else; blank lines count as neither.
"""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys


def _files(rev: str | None) -> dict[str, str]:
    if rev is None:
        paths = sorted(pathlib.Path("dmljax").rglob("*.py"))
        return {str(p): p.read_text() for p in paths if "dmljax/bench/" not in str(p)}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "dmljax"], capture_output=True, text=True)
    out = {}
    for name in names.stdout.split():
        if name.endswith(".py") and not name.startswith("dmljax/bench/"):
            out[name] = subprocess.run(["git", "show", f"{rev}:{name}"], capture_output=True, text=True).stdout
    return out


def count(source: str) -> tuple[int, int]:
    """``(prose, code)`` lines of one module."""
    docstring_lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docstring_lines.update(range(first.lineno, first.end_lineno + 1))
        # attribute docstrings (a string statement after an assignment) are prose too
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstring_lines.update(range(node.lineno, node.end_lineno + 1))
    prose = code = 0
    for number, line in enumerate(source.splitlines(), 1):
        text = line.strip()
        if not text:
            continue
        if number in docstring_lines or text.startswith("#"):
            prose += 1
        else:
            code += 1
    return prose, code


def main() -> None:
    rev = sys.argv[1] if len(sys.argv) > 1 else None
    totals: dict[str, list[int]] = {}
    for name, source in _files(rev).items():
        package = "/".join(name.split("/")[:2]) if name.count("/") > 1 else "dmljax"
        p, c = count(source)
        for key in (package, "all"):
            entry = totals.setdefault(key, [0, 0])
            entry[0], entry[1] = entry[0] + p, entry[1] + c
    for key, (prose, code) in sorted(totals.items()):
        print(f"{rev or 'working tree'} {key}: prose {prose}, code {code}, prose:code {prose / code:.2f}")


if __name__ == "__main__":
    main()
