"""ONNX's own node test cases for MaxPool (with Indices), MaxUnpool, Col2Im and EyeLike, and
dmljax's diagonal_matrix / fill_value_constant (DML_DIAGONAL_MATRIX(1), FILL_VALUE_CONSTANT).

Each case's node attributes become dmljax's arguments; outputs are compared exactly.
"""

import importlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from onnx import helper

import dmljax
from dmljax import TensorDesc, ValidationError
from dmljax.descriptors import (
    DiagonalMatrix1OperatorDesc,
    DiagonalMatrixOperatorDesc,
    FillValueConstantOperatorDesc,
    compile_operator,
)


def _cases(op_type, *modules):
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in modules:
            importlib.import_module(f"onnx.backend.test.case.node.{module}")
    found = {c.name: c for c in node_cases._NodeTestCases if c.model.graph.node[0].op_type == op_type}
    return [found[name] for name in sorted(found)]


def _attrs(case):
    node = case.model.graph.node[0]
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _windows(attrs, rank):
    pads = list(attrs.get("pads", [0] * 2 * rank))
    return dict(
        strides=tuple(attrs.get("strides", [1] * rank)),
        dilations=tuple(attrs.get("dilations", [1] * rank)),
        start_padding=tuple(pads[:rank]),
        end_padding=tuple(pads[rank:]),
    )


MAXPOOL = [c for c in _cases("MaxPool", "maxpool") if len(c.model.graph.output) == 2]


@pytest.mark.parametrize("case", MAXPOOL, ids=lambda c: c.name)
def test_maxpool_with_indices_node_cases(case):
    attrs = _attrs(case)
    if attrs.get("ceil_mode") or attrs.get("auto_pad", b"NOTSET") != b"NOTSET" or attrs.get("storage_order"):
        pytest.skip("ceil_mode, auto_pad and storage_order=1 are not DirectML's")
    (x,), (values, indices) = case.data_sets[0]
    w = _windows(attrs, x.ndim - 2)
    got_v, got_i = dmljax.max_pool_with_indices(
        x, tuple(attrs["kernel_shape"]), w["strides"], w["start_padding"], w["end_padding"], w["dilations"]
    )
    np.testing.assert_array_equal(np.asarray(got_v), values)
    np.testing.assert_array_equal(np.asarray(got_i).astype(np.int64), indices)


UNPOOL = _cases("MaxUnpool", "maxunpool")


@pytest.mark.parametrize("case", UNPOOL, ids=lambda c: c.name)
def test_maxunpool_node_cases(case):
    inputs, (want,) = case.data_sets[0]
    x, indices = inputs[0], inputs[1]
    shape = tuple(int(n) for n in inputs[2]) if len(inputs) > 2 else want.shape
    got = np.asarray(dmljax.max_unpool(x, indices, shape))
    if case.name != "test_maxunpool_export_with_output_shape":
        np.testing.assert_array_equal(got, want)
        return
    # This case's expected output keeps each index's (h, w) in the 4x4 source and moves it
    # into the 5x5 output; onnxruntime's kernel (and DirectML's page) use the index as a flat
    # offset into the whole output, as dmljax does: equal to onnxruntime, not to the case.
    from tests._util import onnx_session

    session = onnx_session(case.model)
    ort = session.run(None, {i.name: v for i, v in zip(session.get_inputs(), inputs, strict=True)})[0]
    np.testing.assert_array_equal(got, ort)
    assert not np.array_equal(got, want)


COL2IM = _cases("Col2Im", "col2im")


@pytest.mark.parametrize("case", COL2IM, ids=lambda c: c.name)
def test_col2im_node_cases(case):
    attrs = _attrs(case)
    (cols, image_shape, block_shape), (want,) = case.data_sets[0]
    w = _windows(attrs, len(block_shape))
    got = dmljax.fold(
        cols,
        tuple(int(n) for n in image_shape),
        tuple(int(n) for n in block_shape),
        w["strides"],
        w["dilations"],
        w["start_padding"],
        w["end_padding"],
    )
    assert np.asarray(got).tobytes() == want.astype(got.dtype).tobytes()


EYELIKE = _cases("EyeLike", "eyelike")


@pytest.mark.parametrize("case", EYELIKE, ids=lambda c: c.name)
def test_eyelike_node_cases(case):
    attrs = _attrs(case)
    (x,), (want,) = case.data_sets[0]
    dtype = want.dtype if want.dtype.itemsize < 8 or jax.config.jax_enable_x64 else np.dtype(want.dtype.kind + "4")
    got = dmljax.diagonal_matrix(x.shape, dtype, attrs.get("k", 0))
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_the_diagonal_matrix_pages_examples_and_matrix1_span():
    eye = dmljax.diagonal_matrix((1, 1, 3, 3), "float32")
    np.testing.assert_array_equal(eye[0, 0], np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(dmljax.diagonal_matrix((1, 1, 3, 3), "float32", 1)[0, 0], np.eye(3, k=1))
    np.testing.assert_array_equal(dmljax.diagonal_matrix((1, 1, 3, 2), "float32", -1)[0, 0], np.eye(3, 2, k=-1))
    assert not np.asarray(dmljax.diagonal_matrix((1, 1, 3, 2), "float32", -3)).any()
    band = dmljax.diagonal_matrix((3, 4), "int32", -1, 7, diagonal_fill_end=2)  # -1 <= j - i < 2
    d = np.arange(4)[None, :] - np.arange(3)[:, None]  # column - row
    want = np.where((d >= -1) & (d < 2), 7, 0)
    np.testing.assert_array_equal(band, want)
    inverted = dmljax.diagonal_matrix((3, 4), "int32", 2, 7, diagonal_fill_end=-1, x=np.ones((3, 4), np.int32))
    np.testing.assert_array_equal(inverted, np.where(want == 7, 1, 7))
    with pytest.raises(ValidationError, match="diagonal_matrix: value"):
        dmljax.diagonal_matrix((2, 2), "uint8", 0, 300)
    with pytest.raises(ValidationError, match="diagonal_matrix: shape"):
        dmljax.diagonal_matrix((2,), "float32")


def test_fill_value_constant():
    np.testing.assert_array_equal(dmljax.fill_value_constant((2, 3), "float16", 0.1), np.full((2, 3), 0.1, np.float16))
    with pytest.raises(ValidationError, match="fill_value_constant: value"):
        dmljax.fill_value_constant((2,), "int8", 200)


def test_generator_descriptors():
    out = TensorDesc("int32", (1, 1, 3, 3))
    got = compile_operator(DiagonalMatrixOperatorDesc(out, 1, 10.6), "2.1")()
    np.testing.assert_array_equal(np.asarray(got).reshape(3, 3), np.eye(3, k=1, dtype=np.int32) * 10)
    with pytest.raises(ValidationError, match="output_tensor.dtype"):
        compile_operator(DiagonalMatrixOperatorDesc(out, 1, 1.0), "2.0")
    x = TensorDesc("float32", (2, 3))
    run = compile_operator(DiagonalMatrix1OperatorDesc(x, x, "float32", -2.5, 0, 1), "5.1")
    got = run(jnp.arange(6, dtype=jnp.float32))
    np.testing.assert_array_equal(np.asarray(got).reshape(2, 3), [[-2.5, 1, 2], [3, -2.5, 5]])
    page = compile_operator(FillValueConstantOperatorDesc(TensorDesc("float32", (1, 1, 2, 4)), "float32", 13.0))()
    assert np.asarray(page).tolist() == [13.0] * 8  # the page's example
    fill = compile_operator(FillValueConstantOperatorDesc(TensorDesc("uint8", (1, 1, 2, 2)), "uint8", 255), "2.1")()
    assert np.asarray(fill).tolist() == [255] * 4
    with pytest.raises(ValidationError, match="value_data_type"):
        compile_operator(FillValueConstantOperatorDesc(TensorDesc("uint8", (1, 1, 2, 2)), "int8", 1))


def test_diagonal_matrix_exports_equal_to_onnxruntime():
    pytest.importorskip("jax2onnx")
    import dmljax.onnx
    from tests._util import onnx_session

    def fn(x):
        return x + dmljax.diagonal_matrix(x.shape, x.dtype, 1, 3.0)

    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    model = dmljax.onnx.export(fn, x)
    session = onnx_session(model)
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    assert got.tobytes() == np.asarray(fn(x)).tobytes()


def test_the_generator_pages_later_rows():
    """DIAGONAL_MATRIX takes 2 to 4 dimensions from 4.0 and the 64-bit types from 5.1,
    DIAGONAL_MATRIX1 the 64-bit types, FILL_VALUE_CONSTANT 1 to 8 dimensions from 4.0 and the
    64-bit types from 4.1."""
    eye = DiagonalMatrixOperatorDesc(TensorDesc("float32", (2, 3)), 0, 1.0)
    np.testing.assert_array_equal(np.asarray(compile_operator(eye, "4.0")()).reshape(2, 3), np.eye(2, 3))
    with pytest.raises(ValidationError, match=r"output_tensor.dimension_count must be 4 at feature level 3.1"):
        compile_operator(eye, "3.1")
    fill = FillValueConstantOperatorDesc(TensorDesc("int16", (6,)), "int16", -7)
    assert np.asarray(compile_operator(fill, "4.0")()).tolist() == [-7] * 6
    with pytest.raises(ValidationError, match=r"output_tensor.dimension_count must be 4 at feature level 3.1"):
        compile_operator(fill, "3.1")
    with jax.enable_x64(True):
        wide = DiagonalMatrixOperatorDesc(TensorDesc("float64", (1, 1, 2, 2)), 0, 0.1)
        np.testing.assert_array_equal(np.asarray(compile_operator(wide, "5.1")()), [0.1, 0, 0, 0.1])
        with pytest.raises(ValidationError, match=r"output_tensor.dtype must be .* at feature level 5.0"):
            compile_operator(wide, "5.0")
        big = TensorDesc("int64", (2, 2))
        one = DiagonalMatrix1OperatorDesc(None, big, "int64", 2**40, 0, 1)
        assert np.asarray(compile_operator(one, "5.1")()).tolist() == [2**40, 0, 0, 2**40]
        fill64 = FillValueConstantOperatorDesc(TensorDesc("uint64", (3,)), "uint64", 2**63)
        assert np.asarray(compile_operator(fill64, "4.1")()).tolist() == [2**63] * 3
        with pytest.raises(ValidationError, match=r"output_tensor.dtype must be .* at feature level 4.0"):
            compile_operator(fill64, "4.0")
