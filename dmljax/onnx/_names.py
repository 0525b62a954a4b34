"""The model's input and output names (`dmljax.onnx.export`'s ``input_names``/``output_names``).

jax2onnx names the graph's inputs ``in_0, in_1...`` and its outputs ``out_0...``. `rename_io`
renames them in place, in the main graph and in every subgraph (Loop and If bodies read
outer values by name). A requested name that an inner value already has moves that value
to a fresh name first; an output that is also an input (or an initializer, or an earlier
output) gets an Identity node, since one value has one name.
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from onnx import helper

__all__ = ["rename_io"]


def _graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """``graph`` and every subgraph in its nodes' attributes, depth first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _graphs(sub)


def _names(graph: onnx.GraphProto) -> set[str]:
    """Every value name in ``graph`` and its subgraphs."""
    found: set[str] = set()
    for g in _graphs(graph):
        found.update(v.name for v in (*g.input, *g.output, *g.value_info))
        found.update(t.name for t in g.initializer)
        for node in g.node:
            found.update(node.input)
            found.update(node.output)
    found.discard("")
    return found


def _apply(graph: onnx.GraphProto, mapping: dict[str, str]) -> None:
    """Rename every value of ``graph`` and its subgraphs by ``mapping``."""
    for g in _graphs(graph):
        for v in (*g.input, *g.output, *g.value_info, *g.initializer):
            v.name = mapping.get(v.name, v.name)
        for node in g.node:
            node.input[:] = [mapping.get(n, n) for n in node.input]
            node.output[:] = [mapping.get(n, n) for n in node.output]


def rename_io(model: onnx.ModelProto, inputs: list[str] | None, outputs: list[str] | None) -> None:
    """Name ``model``'s graph inputs ``inputs`` and outputs ``outputs`` (None: keep), in place."""
    graph = model.graph
    existing = _names(graph)
    wanted = [*(inputs or ()), *(outputs or ())]
    mapping: dict[str, str] = dict(zip((v.name for v in graph.input), inputs or (), strict=False))
    fixed = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    identities: list[tuple[str, str]] = []  # (value, new output name)
    seen: set[str] = set()
    for value, new in zip((v.name for v in graph.output), outputs or (), strict=False):
        if value in fixed or value in seen:
            identities.append((value, new))
        else:
            mapping[value] = new
        seen.add(value)
    taken = existing | set(wanted)
    for name in sorted(set(wanted) & (existing - mapping.keys())):  # an inner value holds a wanted name
        k = 0
        while f"{name}_{k}" in taken:
            k += 1
        mapping[name] = f"{name}_{k}"
        taken.add(mapping[name])
    _apply(graph, mapping)
    for value, new in identities:
        graph.node.append(helper.make_node("Identity", [mapping.get(value, value)], [new], name=f"identity_{new}"))
    for output, new in zip(graph.output, outputs or (), strict=False):
        output.name = new
