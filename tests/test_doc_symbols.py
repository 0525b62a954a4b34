"""The pages name what exists, and the design notes read as decisions with dated figures, not run logs.

Every dotted ``dmljax.`` name in README.md and docs/ (design notes included) must resolve
to a module or attribute that exists now, without a deprecation warning (a page names
the 0.2.0 place, never an alias); the repository paths they name are checked in
``tests/test_docs.py``. A design note gives the date of its figures, never the time of day
or the machine's load average (docs/performance.md keeps those with its runs).
"""

import importlib
import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# A dotted dmljax name: ``dmljax.random.split``, ``dmljax.config.update``, not ``dmljax_docs`` or a path.
DOTTED = re.compile(r"(?<![\w./-])dmljax(?:\.[A-Za-z_]\w*)+")
CLOCK = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?\b|\bUTC\b")
LOAD = re.compile(r"\bload(?: averages?)?\b", re.I)


def pages() -> list[pathlib.Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def resolve(dotted: str) -> str | None:
    """Why ``dotted`` does not name a thing that exists (None when it does)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for i, name in enumerate(parts[end:], end):
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                try:
                    value = getattr(value, name)
                except DeprecationWarning as warning:
                    return str(warning)
                except AttributeError:
                    return f"{'.'.join(parts[:i])} has no {name!r}"
        return None
    return "no such module"


def named_symbols() -> dict[str, set[str]]:
    named: dict[str, set[str]] = {}
    for page in pages():
        for match in DOTTED.finditer(page.read_text()):
            named.setdefault(match[0], set()).add(page.relative_to(ROOT).as_posix())
    return named


def test_every_dotted_dmljax_name_a_page_names_exists():
    pytest.importorskip("jax2onnx")  # the pages name dmljax.onnx's functions
    named = named_symbols()
    assert {"dmljax.random.split", "dmljax.descriptors.compile_operator", "dmljax.onnx.export"} <= set(named)
    missing = {name: (why, sorted(files)) for name, files in named.items() if (why := resolve(name))}
    assert not missing, f"names the pages give that do not exist: {missing}"


def test_the_resolver_refuses_what_is_gone_and_the_old_names():
    assert resolve("dmljax.random.split") is None and resolve("dmljax.bench._harness.run_case") is None
    assert resolve("dmljax.config.update") is None  # an attribute of an object
    assert resolve("dmljax.cumulative_products") == "dmljax has no 'cumulative_products'"
    assert resolve("dmljax._ops.nd.combine") == "dmljax._ops has no 'nd'"  # moved in the family split
    assert "use dmljax.random.split" in resolve("dmljax.split")  # deprecated: a page names the new place


@pytest.mark.parametrize("note", sorted((DOCS / "design").glob("*.md")), ids=lambda p: p.name)
def test_a_design_note_gives_no_time_of_day_and_no_load(note):
    text = note.read_text()
    lines = [f"{i}: {line}" for i, line in enumerate(text.splitlines(), 1) if CLOCK.search(line) or LOAD.search(line)]
    assert not lines, f"{note.name} logs times of day or loads (keep dates; runs go to docs/performance.md): {lines}"


def test_the_patterns_find_times_and_loads():
    assert CLOCK.search("2026-11-27 05:42 UTC") and CLOCK.search("two runs at 05:10 and 05:11")
    assert CLOCK.search("at 14:35") and not CLOCK.search("x[6:0:-2, 1:9:3]") and not CLOCK.search("2^21 (16 MiB)")
    assert LOAD.search("load average 1.1-1.2") and LOAD.search("Under this load torch") and LOAD.search("(load 9-10)")
    assert not LOAD.search("each loop iteration loads 8 updates") and not LOAD.search("a busy machine")
