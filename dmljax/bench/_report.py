"""The benchmark's text table, its summary and JSON record (see `_cli`); every line fits 100 columns.

The JSON record (``SCHEMA_VERSION`` 2) is ``{"schema_version", "info", "checks", "results"}``;
each result holds ``group``, ``name``, ``tensor_bytes`` (the tensor the case timed: its
data, or the values it generates), ``asked_bytes`` (the ``--sizes`` entry it was built for;
a module rounds it to its shapes, e.g. whole rows), ``bytes_moved`` (inputs read + output
written, the numerator of GB/s), ``baseline``, ``rounds`` and, per contender, ``median_s``,
``min_s``, ``max_s``, ``first_call_s`` (compile + one run) and ``ratio`` (median over the baseline's median).
The record's ``summary`` is `summarize`'s dict (counts against the baseline, wall time, load, noisy cases).

Labels longer than their column wrap at spaces onto lines of their own (never cut).
"""

from __future__ import annotations

import dataclasses
import math
import re
import textwrap
from typing import Any

from dmljax.bench._harness import Result

__all__ = [
    "SCHEMA_VERSION",
    "SizedResult",
    "fmt_bytes",
    "print_summary",
    "print_table",
    "result_json",
    "summarize",
    "wrap",
]

SCHEMA_VERSION = 2
WIDTH = 100
# A case's ratio counts as level with the baseline within this fraction either way.
LEVEL = 0.10
# The noise rule: a case whose contender under test or baseline took more than NOISE_SPREAD times
# as long in its slowest round as in its fastest is flagged; its ratio may be off by as much.
NOISE_SPREAD = 2.0


@dataclasses.dataclass(frozen=True)
class SizedResult:
    """A `Result`, the bytes of the tensor its case timed and the ``--sizes`` entry it was built for.

    ``asked_bytes`` defaults to ``tensor_bytes``.
    """

    tensor_bytes: int
    result: Result
    asked_bytes: int | None = None


def fmt_bytes(n: float) -> str:
    """Bytes in binary units, three significant digits.

    Examples:
      >>> fmt_bytes(4096), fmt_bytes(3 * 2**20), fmt_bytes(1.5 * 2**30), fmt_bytes(100)
      ('4 KiB', '3 MiB', '1.5 GiB', '100 B')
      >>> fmt_bytes(4 * 1023 * 256)  # never 1e+03 KiB
      '1023 KiB'
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value >= 999.5 else f"{value:.3g} {unit}"
    return f"{n:.0f} B"


_LABEL = 32
_KEEP = "\N{NO-BREAK SPACE}"  # textwrap breaks at ASCII whitespace only
_SHAPE = re.compile(r"\(\d+(?:, \d+)*,?\)")
_SIZE = re.compile(r"(\d) (B|KiB|MiB|GiB)\b")
_ROW = "  {:<32s} {:>10s} {:>10s} {:>10s} {:>8s} {:>8s} {:>13s}"


def wrap(text: str, indent: str = "", subsequent: str | None = None, width: int = WIDTH) -> list[str]:
    """``text`` as lines of at most ``width`` columns, broken at spaces (a word longer than a line is split).

    Examples:
      >>> wrap("gather: take axis=0 (1, 1024) fwd | tensor 4 KiB", width=24, subsequent="    ")
      ['gather: take axis=0', '    (1, 1024) fwd |', '    tensor 4 KiB']
      >>> wrap("a (bits from a key, 512-bit vectors)", width=20)
      ['a (bits from a key,', '512-bit vectors)']
    """
    subsequent = indent if subsequent is None else subsequent
    # A shape "(1, 1024)" and a size "4 KiB" stay on one line: their spaces are made unbreakable.
    text = _SHAPE.sub(lambda m: m.group(0).replace(" ", _KEEP), _SIZE.sub(rf"\1{_KEEP}\2", text))
    lines = textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=subsequent) or [indent.rstrip()]
    return [line.replace(_KEEP, " ") for line in lines]


def fmt_sig(value: float, digits: int = 4) -> str:
    """A positive number with ``digits`` significant digits, never in exponent form, at most 6 decimals.

    Examples:
      >>> fmt_sig(1234.5678), fmt_sig(0.012345), fmt_sig(3.0), fmt_sig(5.79e-8)
      ('1235', '0.01235', '3.000', '0.000000')
    """
    decimals = digits - 1 - math.floor(math.log10(value)) if value > 0 else 0
    return f"{value:.{min(6, max(0, decimals))}f}"


def fmt_fit(value: float, width: int, digits: int = 3) -> str:
    """`fmt_sig`, or exponent form where that would not fit ``width`` columns.

    Examples:
      >>> fmt_fit(1.234, 8), fmt_fit(45000000005.0, 8)
      ('1.23', '4.50e+10')
    """
    text = fmt_sig(value, digits)
    return text if len(text) <= width else f"{value:.{digits - 1}e}"


def print_table(results: list[SizedResult], rounds: int) -> None:
    """One block per case (its size, bytes moved and baseline), one row per contender."""
    intro = (
        f"Timings in ms per call over {rounds} rounds; each round runs every contender of a case, in a fresh"
        " random order. ratio = median / the baseline's median (below 1: faster than the baseline);"
        " GB/s = bytes moved (inputs read + output written) / median; first call = compile + one run."
    )
    print("\n" + "\n".join(wrap(intro)))
    print(_ROW.format("contender", "median", "min", "max", "ratio", "GB/s", "first call"))
    for sized in results:
        r = sized.result
        case = r.case
        head = (
            f"{case.group}: {case.name} | tensor {fmt_bytes(sized.tensor_bytes)}, bytes moved {fmt_bytes(case.nbytes)}"
        )
        print("\n".join(wrap(head, subsequent="    ")))
        for name in case.contenders:
            label = f"{name} (baseline)" if name == case.reference else name
            *above, last = wrap(label, width=_LABEL)
            for line in above:
                print(f"  {line}")
            print(
                _ROW.format(
                    last,
                    fmt_sig(r.median_s[name] * 1e3),
                    fmt_sig(r.min_s[name] * 1e3),
                    fmt_sig(r.max_s[name] * 1e3),
                    fmt_fit(r.ratio(name), 8),
                    fmt_fit(r.gbps(name), 8),
                    fmt_sig(r.first_call_s[name] * 1e3),
                )
            )


def result_json(sized: SizedResult) -> dict[str, Any]:
    """One result as JSON-ready data (schema in the module docstring)."""
    r = sized.result
    contenders = {
        name: {
            "median_s": r.median_s[name],
            "min_s": r.min_s[name],
            "max_s": r.max_s[name],
            "first_call_s": r.first_call_s[name],
            "ratio": r.ratio(name),
        }
        for name in r.case.contenders
    }
    return {
        "group": r.case.group,
        "name": r.case.name,
        "tensor_bytes": sized.tensor_bytes,
        "asked_bytes": sized.tensor_bytes if sized.asked_bytes is None else sized.asked_bytes,
        "bytes_moved": r.case.nbytes,
        "baseline": r.case.reference,
        "rounds": len(next(iter(r.samples_s.values()))),
        "contenders": contenders,
    }


def _verdict(ratio: float) -> str:
    """Where a ratio to the baseline falls: ``"ahead"``, ``"level"`` (within `LEVEL`) or ``"behind"``.

    Examples:
      >>> _verdict(0.5), _verdict(0.95), _verdict(1.1), _verdict(1.2)
      ('ahead', 'level', 'level', 'behind')
    """
    if ratio < 1 - LEVEL:
        return "ahead"
    return "behind" if ratio > 1 + LEVEL else "level"


def spread(sized: SizedResult) -> float:
    """The wider max/min over the rounds of the two contenders a case's ratio compares.

    The contender under test (the first) and the baseline; the peers' spread does not move
    the ratio.
    """
    r = sized.result
    pair = (next(iter(r.case.contenders)), r.case.reference)
    return max(r.max_s[name] / max(r.min_s[name], 1e-12) for name in pair)


def summarize(
    results: list[SizedResult], wall_s: float, load: tuple[float, float, float] | None, cores: int | None
) -> dict[str, Any]:
    """The run in numbers: cases, the contender under test against its baseline, wall time, noise.

    ``load`` is the 1/5/15-minute load average at the end (``os.getloadavg()``; None where it
    is unknown). A case is noisy by the rule of `NOISE_SPREAD`.

    Examples:
      >>> from dmljax.bench._harness import Case
      >>> r = Result(Case("g", "op", 8, {"a": None, "b": None}, "b"), {"a": [1.0, 3.0], "b": [2.0]}, {})
      >>> s = summarize([SizedResult(8, r)], 5.0, (1.0, 0.5, 0.25), 2)
      >>> s["cases"], s["ahead"], s["level"], s["behind"], s["noisy"]
      (1, 0, 1, 0, ['g: op'])
    """
    verdicts = [_verdict(s.result.ratio()) for s in results]
    noisy = [f"{s.result.case.group}: {s.result.case.name}" for s in results if spread(s) > NOISE_SPREAD]
    return {
        "cases": len(results),
        **{kind: verdicts.count(kind) for kind in ("ahead", "level", "behind")},
        "level_within": LEVEL,
        "wall_s": wall_s,
        "load_average": None if load is None else list(load),
        "cores": cores,
        "noise_spread": NOISE_SPREAD,
        "noisy": noisy,
    }


# The page that names why each case behind its baseline is behind (issue 40).
BEHIND_PAGE = "docs/performance.md, section 'Cases behind their baseline'"


def print_summary(summary: dict[str, Any]) -> None:
    """The summary block: counts against the baseline, wall time, and a warning when rounds spread wide."""
    load = summary["load_average"]
    load_text = "unknown" if load is None else "/".join(f"{x:.2f}" for x in load)
    minutes, seconds = divmod(round(summary["wall_s"]), 60)
    level = f"{summary['level_within']:.0%}"
    lines = [
        f"Summary: {summary['cases']} cases timed in {minutes} min {seconds:02d} s (wall);"
        f" the contender under test (dmljax, or eager in the eager group) is ahead of its baseline in"
        f" {summary['ahead']}, within {level} of it in {summary['level']} and behind it in {summary['behind']}"
        f" (ahead: ratio below {1 - summary['level_within']:.2f}; behind: above {1 + summary['level_within']:.2f}).",
        f"Load average (1/5/15 min) at the end: {load_text} on {summary['cores']} cores.",
    ]
    if summary["behind"]:
        lines.insert(1, f"Why a case is behind its baseline: {BEHIND_PAGE}.")
    print()
    for line in lines:
        print("\n".join(wrap(line)))
    noisy = summary["noisy"]
    if noisy:
        shown = ", ".join(noisy[:3]) + (f" and {len(noisy) - 3} more" if len(noisy) > 3 else "")
        warning = (
            f"WARNING: noisy timings: in {len(noisy)} of {summary['cases']} cases the contender under test"
            f" or the baseline took more than {summary['noise_spread']:g}x as long in its slowest round as in"
            f" its fastest (max/min > {summary['noise_spread']:g}), so their ratios may be off by as much:"
            f" {shown}. A load average above the {summary['cores']} cores, other programs or too few rounds"
            " cause it; rerun on a quiet machine or with more --rounds."
        )
        print("\n".join(wrap(warning, subsequent="  ")))
