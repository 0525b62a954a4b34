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
        reverse, exclusive = bool(a.get("reverse", 0)), bool(a.get("exclusive", 0))
        return [dmljax.cumulative_sum(inputs[0], axis, reverse=reverse, exclusive=exclusive)]
    if op == "TopK":
        k = int(np.asarray(inputs[1]).reshape(()))
        assert a.get("sorted", 1) == 1
        return list(dmljax.top_k(inputs[0], k, a.get("axis", -1), largest=bool(a.get("largest", 1))))
    if op in ("ArgMax", "ArgMin"):
        fn = dmljax.argmax if op == "ArgMax" else dmljax.argmin
        keep, last = bool(a.get("keepdims", 1)), bool(a.get("select_last_index", 0))
        return [fn(inputs[0], a.get("axis", 0), keepdims=keep, select_last_index=last)]
    if op == "OneHot":  # ONNX casts non-integer indices and depth to integers
        indices, depth = inputs[0], int(np.asarray(inputs[1]).reshape(()))
        if indices.dtype.kind not in "iu":
            indices = indices.astype(np.int64)
        return [dmljax.one_hot(indices, depth, values=inputs[2], axis=a.get("axis", -1))]
    if op == "NonZero":  # ONNX's output: the first `count` coordinates, transposed, int64
        count, coordinates = dmljax.nonzero_coordinates(inputs[0])
        return [np.asarray(coordinates)[: int(count)].T.astype(np.int64)]
    raise NotImplementedError(op)


CASES = {m: onnx_cases(m) for m in MODULES}


def test_cases_were_found():
    names = {c.name for cs in CASES.values() for c in cs}
    assert {"test_cumsum_1d", "test_cumsum_1d_reverse_exclusive", "test_cumsum_2d_negative_axis"} <= names
    assert {"test_top_k", "test_top_k_smallest", "test_top_k_negative_axis", "test_top_k_same_values"} <= names
    assert {"test_argmax_default_axis_random_select_last_index", "test_argmin_negative_axis_keepdims_random"} <= names
    assert {"test_onehot_negative_indices", "test_onehot_with_axis", "test_nonzero_example"} <= names


@pytest.mark.parametrize("case", [c for cs in CASES.values() for c in cs], ids=lambda c: c.name)
def test_onnx_node_case(case, x64):
    node = case.model.graph.node[0]
    for inputs, outputs in case.data_sets:
        outs = run_dmljax(node, [np.asarray(x) for x in inputs])
        assert len(outs) == len(outputs)
        for out, expected in zip(outs, outputs, strict=True):
            if node.op_type not in ("TopK", "ArgMax", "ArgMin"):  # dmljax's indices are int32, ONNX's int64
                assert np.asarray(out).dtype == expected.dtype
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


@pytest.mark.parametrize("seed", range(8))
def test_top_k_equals_onnxruntime(seed):
    """Ties, signed zeros and NaN: the same values and indices as onnxruntime's TopK."""
    rng = np.random.default_rng(seed)
    dtype = ["float32", "float16", "int32", "int8"][seed % 4]
    shape = tuple(int(s) for s in rng.integers(1, 9, int(rng.integers(1, 4))))
    x = rng.integers(-3, 4, shape).astype(dtype)
    if dtype.startswith("float"):
        x[rng.random(shape) < 0.2] = np.nan
        x[rng.random(shape) < 0.3] = -0.0
    axis = int(rng.integers(-x.ndim, x.ndim))
    k, largest = int(rng.integers(1, shape[axis] + 1)), seed & 1
    values, indices = run_onnxruntime(
        "TopK", [x, np.array([k], np.int64)], [x.dtype, np.int64], axis=axis, largest=largest
    )
    v, i = dmljax.top_k(x, k, axis, largest=bool(largest))
    np.testing.assert_array_equal(np.asarray(i), indices)
    np.testing.assert_array_equal(np.asarray(v).view(np.uint8), values.view(np.uint8))


@pytest.mark.parametrize("seed", range(8))
def test_arg_reduce_equals_onnxruntime_without_nan(seed):
    rng = np.random.default_rng(seed)
    dtype = ["float32", "float16", "int32", "uint8"][seed % 4]
    shape = tuple(int(s) for s in rng.integers(1, 6, int(rng.integers(1, 4))))
    x = rng.integers(0, 3, shape).astype(dtype)
    axis, keep, last = int(rng.integers(-x.ndim, x.ndim)), (seed >> 1) & 1, seed & 1
    for op, fn in (("ArgMax", dmljax.argmax), ("ArgMin", dmljax.argmin)):
        expected = run_onnxruntime(op, [x], [np.int64], axis=axis, keepdims=keep, select_last_index=last)[0]
        np.testing.assert_array_equal(
            np.asarray(fn(x, axis, keepdims=bool(keep), select_last_index=bool(last))), expected
        )


def test_onnxruntime_argmax_nan_rule_differs():
    """onnxruntime's ArgMax skips a NaN unless it comes first; dmljax's NaN is above every number (as in TopK)."""
    x = np.array([1.0, np.nan, 5.0], np.float32)
    assert run_onnxruntime("ArgMax", [x], [np.int64], axis=0, keepdims=0)[0] == 2
    assert (
        dmljax.argmax(x, 0)
        == 1
        == int(run_onnxruntime("TopK", [x, np.array([1], np.int64)], [x.dtype, np.int64])[1][0])
    )
    first = np.array([np.nan, 1.0, 5.0], np.float32)
    assert run_onnxruntime("ArgMax", [first], [np.int64], axis=0, keepdims=0)[0] == 0
    assert run_onnxruntime("ArgMin", [first], [np.int64], axis=0, keepdims=0)[0] == 0
    assert dmljax.argmin(first, 0) == 1


@pytest.mark.parametrize("seed", range(4))
def test_one_hot_equals_onnxruntime(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(1, 4))))
    depth = int(rng.integers(1, 6))
    indices = rng.integers(-depth - 2, depth + 2, shape)  # int64: onnxruntime has no int32 OneHot kernel here
    values = np.array([-1.5, 2.5], np.float32)
    axis = int(rng.integers(-len(shape) - 1, len(shape) + 1))
    expected = run_onnxruntime("OneHot", [indices, np.array(depth, np.int64), values], [values.dtype], axis=axis)[0]
    np.testing.assert_array_equal(np.asarray(dmljax.one_hot(indices, depth, values=values, axis=axis)), expected)
