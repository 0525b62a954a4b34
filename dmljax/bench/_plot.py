"""``--plot``: dmljax's time over its baseline's, against tensor size, one small panel per operator group.

The y axis is logarithmic and shared (a ratio of 0.5 is as far below the baseline as 2 is
above it), with the baseline drawn as a line at 1; each panel has at most a handful of
series (one per operation and direction: a colour per operation, backward dashed).
"""

from __future__ import annotations

import math
import re

from dmljax.bench._report import SizedResult, fmt_bytes

__all__ = ["plot_ratios", "series_label"]

_TICKS = (0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50)
_TICKS_WIDE = (0.001, 0.01, 0.1, 0.5, 1, 2, 10, 100, 1000)


def series_label(name: str) -> str:
    """A case's name without its shapes (parentheses) and ``n=...``, so sizes share a series.

    Examples:
      >>> series_label("gather axis=1 (64, 1024) bwd"), series_label("bits n=1024 (2^10)")
      ('gather axis=1 bwd', 'bits')
    """
    return " ".join(re.sub(r"\s*\([^)]*\)|\s*n=\d+", "", name).split())


def _operation(group: str, label: str) -> str:
    """The series' operation: forward and backward of one operation share a colour."""
    return label.removesuffix(" fwd").removesuffix(" bwd")


def _series(results: list[SizedResult]) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """group -> series label -> sorted (tensor bytes, dmljax / baseline) points."""
    groups: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for sized in results:
        case = sized.result.case
        points = groups.setdefault(case.group, {}).setdefault(series_label(case.name), [])
        points.append((sized.tensor_bytes, sized.result.ratio()))
    for series in groups.values():
        for points in series.values():
            points.sort()
    return groups


def plot_ratios(results: list[SizedResult], path: str) -> object:
    """Write the PNG to ``path`` and return the matplotlib figure (closed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _series(results)
    columns = min(4, len(groups))
    rows = math.ceil(len(groups) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.0 * rows), sharey=True, squeeze=False)
    ratios = [ratio for series in groups.values() for points in series.values() for _, ratio in points]
    low, high = min(min(ratios), 0.5) / 1.2, max(max(ratios), 2.0) * 1.2
    sizes = sorted({sized.tensor_bytes for sized in results})
    colors = [plt.get_cmap("tab10")(i) for i in range(10)]
    for ax, (group, series) in zip(axes.flat, sorted(groups.items()), strict=False):
        ax.axhline(1.0, color="black", linewidth=1)
        operations = sorted({_operation(group, label) for label in series})
        for label, points in sorted(series.items()):
            style = "--" if label.endswith("bwd") else "-"
            color = colors[operations.index(_operation(group, label)) % 10]
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, style, marker="o", markersize=3, color=color, label=label.removeprefix(group).strip())
        ax.set(xscale="log", yscale="log", ylim=(low, high), title=group)
        ax.set_xticks(sizes, [fmt_bytes(s) for s in sizes], fontsize=7)
        ticks = (
            [t for t in _TICKS_WIDE if low <= t <= high] if high / low > 50 else [t for t in _TICKS if low <= t <= high]
        )
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.legend(fontsize=6, loc="best")
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes.flat[len(groups) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("dmljax time / baseline time")
    for ax in axes[-1, :]:
        ax.set_xlabel("tensor size")
    fig.suptitle("dmljax against the fastest hand-written baseline (below 1: dmljax faster)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig
