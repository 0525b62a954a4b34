"""The porting guide (docs/guides/porting.md): its Python snippet runs and prints the output it shows."""

import contextlib
import io
import pathlib
import re

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guides" / "porting.md"
SECTION = "# Porting a DirectML operator setup, line by line"


def blocks(language: str) -> list[str]:
    text = PAGE.read_text()
    section = text[text.index(SECTION) :].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def test_porting_snippet_runs_and_prints_the_documented_output():
    (snippet,) = blocks("python")
    (expected,) = blocks("text")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(snippet, str(PAGE), "exec"), {"__name__": "porting"})
    assert printed.getvalue() == expected
