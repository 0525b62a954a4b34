"""ONNX's own node test cases and onnxruntime on random models: Gather, GatherElements, ScatterElements.

The conformance cases come from the onnx package's generator (`onnx.backend.test.case.node`,
what ``collect_testcases`` walks): importing one op's case module runs its ``export_*``
functions, which record each case in ``_NodeTestCases``. ``collect_testcases`` itself
imports every operator's module (about 10 s and numerous warnings), so only the modules of
these operators are imported here. ScatterElements cases with ``reduction`` other than
``"none"`` are a different DirectML operator and are listed apart here; they run in
tests/test_scatter_reduction.py (``dmljax.scatter(..., reduction=...)``).
"""

import importlib
import warnings

import jax.numpy as jnp
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dmljax
from tests._util import onnx_session

# ScatterElements with reduction != "none" (add, mul, min, max) is DML_SCATTER's sibling with
# a reduction, not DML_SCATTER: listed here so that no case goes unrun silently (they run in
# tests/test_scatter_reduction.py).
REDUCTION_CASES = {
    "test_scatter_elements_with_duplicate_indices",
    "test_scatter_elements_with_reduction_max",
    "test_scatter_elements_with_reduction_min",
    "test_scatter_elements_with_reduction_mul",
}


def onnx_cases(module_name):
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None  # record every case of the imported module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = importlib.import_module(f"onnx.backend.test.case.node.{module_name}")
    prefix = {"gather": "test_gather_", "gatherelements": "test_gather_elements", "scatterelements": "test_scatter_"}
    op_types = {"gather": "Gather", "gatherelements": "GatherElements", "scatterelements": "ScatterElements"}
    cases = [
        c
        for c in node_cases._NodeTestCases
        if c.model.graph.node[0].op_type == op_types[module_name] and not c.name.endswith("expanded")
    ]
    assert module is not None and cases and all(c.name.startswith(prefix[module_name]) for c in cases)
    return cases


def attributes(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def run_dmljax(node, inputs):
    attrs = attributes(node)
    axis = attrs.get("axis", 0)
    if node.op_type == "Gather":
        return dmljax.gather(inputs[0], inputs[1], axis)
    if node.op_type == "GatherElements":
        return dmljax.gather_elements(inputs[0], inputs[1], axis)
    assert attrs.get("reduction", b"none") in (b"none", "none")
    return dmljax.scatter(inputs[0], inputs[1], inputs[2], axis)


CASES = [c for m in ("gather", "gatherelements", "scatterelements") for c in onnx_cases(m)]


def test_conformance_cases_were_found():
    names = {c.name for c in CASES}
    assert {"test_gather_0", "test_gather_negative_indices", "test_gather_elements_negative_indices"} <= names
    assert {"test_scatter_elements_with_negative_indices", "test_scatter_elements_without_axis"} <= names
    reducing = {c.name for c in CASES if attributes(c.model.graph.node[0]).get("reduction", b"none") != b"none"}
    assert reducing == REDUCTION_CASES


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in REDUCTION_CASES], ids=lambda c: c.name)
def test_onnx_node_case(case):
    node = case.model.graph.node[0]
    for inputs, outputs in case.data_sets:
        out = run_dmljax(node, [np.asarray(x) for x in inputs])
        np.testing.assert_allclose(np.asarray(out), outputs[0], rtol=case.rtol, atol=case.atol)


# ----- onnxruntime on random models -----------------------------------------------------

ONNX_TYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "int32": TensorProto.INT32,
              "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL,
              "int64": TensorProto.INT64}  # fmt: skip


def output_shape(op_type, inputs, axis):
    data, indices = inputs[0], inputs[1]
    if op_type == "Gather":
        axis %= data.ndim
        return data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    return indices.shape if op_type == "GatherElements" else data.shape


def run_onnxruntime(op_type, inputs, axis):
    names = ["data", "indices", "updates"][: len(inputs)]
    node = helper.make_node(op_type, names, ["out"], axis=axis)
    graph = helper.make_graph(
        [node],
        "random",
        [
            helper.make_tensor_value_info(n, ONNX_TYPES[str(x.dtype)], x.shape)
            for n, x in zip(names, inputs, strict=True)
        ],
        [helper.make_tensor_value_info("out", ONNX_TYPES[str(inputs[0].dtype)], output_shape(op_type, inputs, axis))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return onnx_session(model).run(None, dict(zip(names, inputs, strict=True)))[0]


def random_model_inputs(rng, op_type, dtype):
    rank = int(rng.integers(1, 5))
    shape = tuple(int(s) for s in rng.integers(1, 5, rank))
    axis = int(rng.integers(-rank, rank))
    size = shape[axis]
    data = (rng.standard_normal(shape) * 10).astype(dtype)
    if op_type == "Gather":
        index_shape = tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3))))
        return [data, rng.integers(-size, size, index_shape)], axis
    index_shape = list(shape)
    index_shape[axis] = int(rng.integers(1, size + 1))
    if op_type == "GatherElements":
        return [data, rng.integers(-size, size, index_shape)], axis
    lines = np.moveaxis(np.empty(index_shape, np.int64), axis, -1)  # no duplicate targets
    for p in np.ndindex(*lines.shape[:-1]):
        lines[p] = rng.permutation(size)[: index_shape[axis]] - size * rng.integers(0, 2)
    updates = (rng.standard_normal(index_shape) * 10).astype(dtype)
    return [data, np.moveaxis(lines, -1, axis), updates], axis


@pytest.mark.parametrize("op_type", ["Gather", "GatherElements", "ScatterElements"])
@pytest.mark.parametrize("seed", range(6))
def test_onnxruntime_random_model(op_type, seed):
    rng = np.random.default_rng(seed)
    dtype = ["float32", "float16", "int32", "int8", "uint8", "bool"][seed]
    inputs, axis = random_model_inputs(rng, op_type, dtype)
    if seed % 2:
        inputs[1] = inputs[1].astype(np.int32)
    expected = run_onnxruntime(op_type, inputs, axis)
    fn = {"Gather": dmljax.gather, "GatherElements": dmljax.gather_elements, "ScatterElements": dmljax.scatter}[op_type]
    out = fn(*inputs, axis)
    assert out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), expected)
