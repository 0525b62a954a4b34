"""The benchmark's text table and JSON record (see `_cli`); every printed line fits 120 columns.

The JSON record (``SCHEMA_VERSION`` 2) is ``{"schema_version", "info", "checks", "results"}``;
each result holds ``group``, ``name``, ``tensor_bytes`` (the tensor the case timed: its
data, or the values it generates), ``asked_bytes`` (the ``--sizes`` entry it was built for;
a module rounds it to its shapes, e.g. whole rows), ``bytes_moved`` (inputs read + output
written, the numerator of GB/s), ``baseline``, ``rounds`` and, per contender, ``median_s``,
``min_s``, ``max_s``, ``first_call_s`` (compile + one run) and ``ratio`` (median over the baseline's median).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from dmljax.bench._harness import Result

__all__ = ["SCHEMA_VERSION", "SizedResult", "fmt_bytes", "print_table", "result_json"]

SCHEMA_VERSION = 2
WIDTH = 120


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


_ROW = "  {:<32s} {:>10s} {:>10s} {:>10s} {:>8s} {:>8s} {:>13s}"


def fmt_sig(value: float, digits: int = 4) -> str:
    """A positive number with ``digits`` significant digits, never in exponent form, at most 6 decimals.

    Examples:
      >>> fmt_sig(1234.5678), fmt_sig(0.012345), fmt_sig(3.0), fmt_sig(5.79e-8)
      ('1235', '0.01235', '3.000', '0.000000')
    """
    decimals = digits - 1 - math.floor(math.log10(value)) if value > 0 else 0
    return f"{value:.{min(6, max(0, decimals))}f}"


def print_table(results: list[SizedResult], rounds: int) -> None:
    """One block per case (its size, bytes moved and baseline), one row per contender."""
    print(
        f"\nTimings in ms per call over {rounds} rounds; each round runs every contender of a case, in a fresh"
        "\nrandom order. ratio = median / the baseline's median (below 1: faster than the baseline);"
        "\nGB/s = bytes moved (inputs read + output written) / median; first call = compile + one run."
    )
    print(_ROW.format("contender", "median", "min", "max", "ratio", "GB/s", "first call"))
    for sized in results:
        r = sized.result
        case = r.case
        head = f"{case.group}: {case.name}"
        tail = f" | tensor {fmt_bytes(sized.tensor_bytes)}, bytes moved {fmt_bytes(case.nbytes)}"
        print(f"{head[: WIDTH - len(tail)]}{tail}")
        for name in case.contenders:
            label = f"{name} (baseline)" if name == case.reference else name
            print(
                _ROW.format(
                    label[:32],
                    fmt_sig(r.median_s[name] * 1e3),
                    fmt_sig(r.min_s[name] * 1e3),
                    fmt_sig(r.max_s[name] * 1e3),
                    fmt_sig(r.ratio(name), 3),
                    fmt_sig(r.gbps(name), 3),
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
