"""ONNX's own node cases and onnxruntime for CumSum, TopK, ArgMax/ArgMin, OneHot, NonZero.

Each case module of `onnx.backend.test.case.node` records its cases when imported (see
tests/test_onnx_conformance.py); only these operators' modules are imported here.
"""

import importlib
import warnings

import jax
import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

import dmljax

MODULES = {
    "cumsum": "CumSum",
    "topk": "TopK",
    "argmax": "ArgMax",
    "argmin": "ArgMin",
    "onehot": "OneHot",
    "nonzero": "NonZero",
}


def onnx_cases(module_name):
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None  # record every case of the imported module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module(f"onnx.backend.test.case.node.{module_name}")
    return [
        c
        for c in node_cases._NodeTestCases
        if c.model.graph.node[0].op_type == MODULES[module_name] and not c.name.endswith("expanded")
    ]


def attributes(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def run_dmljax(node, inputs):
    """The dmljax call of one ONNX node; returns its outputs as a list."""
    a = attributes(node)
    op = node.op_type
    if op == "CumSum":
        axis = int(np.asarray(inputs[1]).reshape(()))
        return [
            dmljax.cumulative_sum(
                inputs[0], axis, reverse=bool(a.get("reverse", 0)), exclusive=bool(a.get("exclusive", 0))
            )
        ]
    raise NotImplementedError(op)


CASES = {m: onnx_cases(m) for m in ("cumsum",)}


def test_cases_were_found():
    assert {"test_cumsum_1d", "test_cumsum_1d_reverse_exclusive", "test_cumsum_2d_negative_axis"} <= {
        c.name for c in CASES["cumsum"]
    }


@pytest.mark.parametrize("case", [c for cs in CASES.values() for c in cs], ids=lambda c: c.name)
def test_onnx_node_case(case):
    node = case.model.graph.node[0]
    for inputs, outputs in case.data_sets:
        outs = run_dmljax(node, [np.asarray(x) for x in inputs])
        assert len(outs) == len(outputs)
        for out, expected in zip(outs, outputs, strict=True):
            np.testing.assert_array_equal(np.asarray(out), expected)


# ----- onnxruntime on random models -----------------------------------------------------


def run_onnxruntime(op_type, inputs, out_types, opset=18, **attrs):
    names = [f"in{i}" for i in range(len(inputs))]
    n_outputs = len(out_types)
    node = helper.make_node(op_type, names, [f"out{i}" for i in range(n_outputs)], **attrs)
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
            for n, x in zip(names, inputs, strict=True)
        ],
        [
            helper.make_tensor_value_info(f"out{i}", helper.np_dtype_to_tensor_dtype(np.dtype(t)), None)
            for i, t in enumerate(out_types)
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip(names, inputs, strict=True)))


@pytest.mark.parametrize("seed", range(8))
def test_cumsum_equals_onnxruntime_bit_for_bit(seed):
    """onnxruntime's CPU CumSum adds in sequence too: equal bits, where jnp.cumsum is not."""
    rng = np.random.default_rng(seed)
    dtype = ["float32", "float64", "int32", "int64"][seed % 4]
    shape = (int(rng.integers(1, 4)), int(rng.integers(200, 400)))
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    reverse, exclusive = seed & 1, (seed >> 1) & 1
    expected = run_onnxruntime("CumSum", [x, np.array(1, np.int64)], [x.dtype], reverse=reverse, exclusive=exclusive)[0]

    with jax.enable_x64(True):
        out = dmljax.cumulative_sum(x, 1, reverse=bool(reverse), exclusive=bool(exclusive))
        np.testing.assert_array_equal(np.asarray(out), expected)
