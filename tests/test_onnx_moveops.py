"""ONNX's own node cases for the data-movement operators, and `dmljax.onnx.export` against onnxruntime.

Cases come from the onnx package's generator, as in tests/test_onnx_conformance.py. Cases
DirectML cannot express are listed apart, so that none goes unrun silently.
"""

import importlib
import warnings

import jax.numpy as jnp
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

import dmljax
from dmljax import ValidationError

OP_TYPES = {"pad": "Pad", "tile": "Tile", "spacetodepth": "SpaceToDepth", "depthtospace": "DepthToSpace",
            "reversesequence": "ReverseSequence", "split": "Split", "concat": "Concat"}  # fmt: skip
# Zero-size outputs: every DirectML size is >= 1 (split_tensor refuses a size of 0 by name).
EMPTY_CASES = {"test_split_zero_size_splits_opset13", "test_split_zero_size_splits_opset18"}


def onnx_cases():
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in OP_TYPES:
            importlib.import_module(f"onnx.backend.test.case.node.{module}")
    wanted = set(OP_TYPES.values())
    return [
        c for c in node_cases._NodeTestCases if c.model.graph.node[0].op_type in wanted and "expanded" not in c.name
    ]


def attributes(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def run_pad(node, attrs, x, pads, value=None, axes=None):
    rank = x.ndim
    axes = list(range(rank)) if axes is None else [int(a) % rank for a in axes]
    start, end = [0] * rank, [0] * rank
    for k, axis in enumerate(axes):
        start[axis], end[axis] = int(pads[k]), int(pads[k + len(axes)])
    mode = {"constant": "constant", "edge": "edge", "reflect": "reflection", "wrap": "wrap"}[
        text(attrs.get("mode", "constant"))
    ]
    return [dmljax.pad(x, start, end, mode, value=0 if value is None else value)]


def run_split(attrs, x, split=None):
    axis = attrs.get("axis", 0) % x.ndim
    if split is None:
        count = attrs.get("num_outputs", None)
        if count is None:
            return None
        size = x.shape[axis]
        piece = -(-size // count)  # ONNX: ceil, the last piece smaller
        split = [piece] * (size // piece) + ([size % piece] if size % piece else [])
    return list(dmljax.split_tensor(x, [int(s) for s in split], axis))


def run_dmljax(node, inputs):
    attrs = attributes(node)
    if node.op_type == "Pad":
        return run_pad(node, attrs, *inputs)
    if node.op_type == "Tile":
        return [dmljax.tile(inputs[0], [int(r) for r in inputs[1]])]
    if node.op_type in ("SpaceToDepth", "DepthToSpace"):
        fn = dmljax.space_to_depth if node.op_type == "SpaceToDepth" else dmljax.depth_to_space
        return [fn(inputs[0], attrs["blocksize"], text(attrs.get("mode", "DCR")))]
    if node.op_type == "ReverseSequence":
        x, lens = inputs
        batch, time = attrs.get("batch_axis", 1), attrs.get("time_axis", 0)
        shape = [1] * x.ndim
        shape[batch] = lens.shape[0]
        full = list(x.shape)
        full[time] = 1
        return [dmljax.reverse_subsequences(x, np.broadcast_to(lens.reshape(shape), full), time)]
    if node.op_type == "Split":
        outs = run_split(attrs, inputs[0], inputs[1] if len(inputs) > 1 else None)
        if outs is None:  # equal parts, one per output
            axis = attrs.get("axis", 0) % inputs[0].ndim
            count = len(node.output)
            outs = list(dmljax.split_tensor(inputs[0], [inputs[0].shape[axis] // count] * count, axis))
        return outs
    return [dmljax.concatenate(inputs, attrs["axis"])]


CASES = onnx_cases()


def test_cases_were_found():
    found = {c.model.graph.node[0].op_type for c in CASES}
    assert found == set(OP_TYPES.values())
    assert {"test_reflect_pad", "test_wrap_pad", "test_depthtospace_crd_mode_example"} <= {c.name for c in CASES}


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in EMPTY_CASES], ids=lambda c: c.name)
def test_onnx_node_case(case):
    node = case.model.graph.node[0]
    for inputs, outputs in case.data_sets:
        got = run_dmljax(node, [np.asarray(x) for x in inputs])
        assert len(got) == len(outputs)
        for out, expected in zip(got, outputs, strict=True):
            assert np.asarray(out).dtype == expected.dtype
            np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("case", [c for c in CASES if c.name in EMPTY_CASES], ids=lambda c: c.name)
def test_empty_cases_are_refused_by_name(case):
    with pytest.raises(ValidationError, match=r"split_tensor: (input\.ndim|sizes)"):
        run_dmljax(case.model.graph.node[0], [np.asarray(x) for x in case.data_sets[0][0]])


# ----- dmljax.onnx.export: the model onnxruntime runs gives the same bits ------------------------

X = np.arange(1, 49, dtype=np.float32).reshape(1, 4, 3, 4) - 20.5
LENGTHS = np.array([3, 0, 9, 2, 1, 4, 2, 2, 3, 1, 0, 4], np.int32).reshape(1, 4, 3, 1)
EXPORTS = {
    "pad_constant": lambda x: dmljax.pad(x, [0, 1, 2, 0], [1, 0, 1, 3], value=-2.5),
    "pad_edge": lambda x: dmljax.pad(x, [0, 1, 2, 0], [1, 0, 1, 3], "edge"),
    "pad_reflection": lambda x: dmljax.pad(x, [0, 1, 2, 0], [0, 2, 2, 3], "reflection"),
    "pad_symmetric": lambda x: dmljax.pad(x, [0, 1, 2, 0], [0, 2, 3, 5], "symmetric"),
    "pad_wrap": lambda x: dmljax.pad(x, [0, 1, 2, 0], [0, 2, 4, 5], "wrap"),
    "tile": lambda x: dmljax.tile(x, [2, 1, 3, 2]),
    "join_split": lambda x: dmljax.concatenate(dmljax.split_tensor(x, [1, 3], 1)[::-1], 1),
    "space_to_depth_dcr": lambda x: dmljax.space_to_depth(x[:, :, :2], 2),
    "space_to_depth_crd": lambda x: dmljax.space_to_depth(x[:, :, :2], 2, "CRD"),
    "depth_to_space_dcr": lambda x: dmljax.depth_to_space(x, 2),
    "depth_to_space_crd": lambda x: dmljax.depth_to_space(x, 2, "CRD"),
    "reverse_subsequences": lambda x: dmljax.reverse_subsequences(x, LENGTHS, 3),
    "fill_value_sequence": lambda x: x + dmljax.fill_value_sequence(X.shape, "float32", -3.0, 0.25),
    "slice_grad": lambda x: dmljax.slice_grad(x, [2, 9, 3, 9], [1, 0, 0, 1], [1, 8, 3, 8], [1, -2, 1, 2]),
}  # fmt: skip


@pytest.mark.parametrize("name", EXPORTS)
def test_export_runs_in_onnxruntime_with_equal_bits(name):
    fn = EXPORTS[name]
    pytest.importorskip("jax2onnx")  # the onnx extra (CI lane 2 has only the test extra)
    import dmljax.onnx

    model = dmljax.onnx.export(fn, X)
    onnx.checker.check_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: X})
    expected = np.asarray(fn(jnp.asarray(X)))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
