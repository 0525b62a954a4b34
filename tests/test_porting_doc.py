"""docs/porting.md: its Python snippet runs and prints the output the page shows."""

import contextlib
import io
import pathlib
import re

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "porting.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_porting_snippet_runs_and_prints_the_documented_output():
    (snippet,) = blocks("python")
    (expected,) = blocks("text")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(snippet, str(PAGE), "exec"), {"__name__": "porting"})
    assert printed.getvalue() == expected
