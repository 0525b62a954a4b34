"""dmljax.onnx.export, the fifth adversarial round (issue 39, the export classes).

Every model `dmljax.onnx.export` writes runs in onnxruntime with the JAX result's bits, or
is refused by name before it is written. Each case exports, checks the model
(``full_check``), runs it on onnxruntime's CPU provider and compares bits with ``jax.jit``
(or, where the jit side is another class's defect, with a NumPy oracle); refusals expect a
`dmljax.ValidationError` naming the operator. Skipped without the ``dmljax[onnx]`` extra.
"""

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("jax2onnx")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import dmljax  # noqa: E402
import dmljax.onnx  # noqa: E402
from tests.test_onnx_export import all_node_types, run  # noqa: E402

F16, F32, BF16 = np.float16, np.float32, jnp.bfloat16
INT_TYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")


def exported(fn, *args, opset=None):
    """Export, check the model, run it; return (model, onnxruntime's outputs, jit's outputs as NumPy)."""
    model = dmljax.onnx.export(fn, *args, opset=opset)
    onnx.checker.check_model(model, full_check=True)
    got = run(model, *args)
    want = [np.asarray(w) for w in jax.tree.leaves(jax.jit(fn)(*args))]
    return model, got, want


def same_bits(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        assert g.tobytes() == w.tobytes(), (g, w)


def check_all(fn, *args, opset=None):
    """Export and compare every output's bits with jit's; return the model."""
    model, got, want = exported(fn, *args, opset=opset)
    same_bits(got, want)
    return model


# --- class 1, the export side: subnormals are ordered by their bits -----------------------------


def _oracle_order(x, largest):
    """Stable order of ``x``'s values as float64 (which no CPU flushes), ties by the lower index."""
    keys = np.asarray(x, np.float64)
    return np.argsort(-keys if largest else keys, kind="stable")


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_exported_top_k_and_arg_reductions_order_subnormals_ahead_of_zero(dtype):
    """docs/design/top-k-keys.md: a subnormal is a number above zero; the model orders it so."""
    tiny = jnp.finfo(dtype).smallest_subnormal
    x = np.array([0.0, tiny, -tiny, 2 * tiny, -0.0], dtype)
    for largest in (True, False):
        model = dmljax.onnx.export(lambda v, largest=largest: dmljax.top_k(v, 5, largest=largest)[1], x)
        (got,) = run(model, x)
        np.testing.assert_array_equal(got, _oracle_order(x, largest))
    for fn, want in ((dmljax.argmax, 3), (dmljax.argmin, 2)):
        (got,) = run(dmljax.onnx.export(lambda v, fn=fn: fn(v, 0), x), x)
        assert int(got) == want
    (got,) = run(dmljax.onnx.export(lambda v: dmljax.argmax(v, 0), x[:2]), x[:2])
    assert int(got) == 1  # the case: [0.0, 1e-45]


# --- class 4: checked segment reductions ------------------------------------------------------


@pytest.mark.parametrize("op", ["segment_sum", "segment_max", "segment_min", "segment_prod", "segment_mean"])
def test_a_checked_segment_reduction_is_refused_by_name(op):
    fn = lambda d, i: getattr(dmljax, op)(d, i, 3, mode="checked")  # noqa: E731
    with pytest.raises(dmljax.ValidationError, match=rf"{op}: mode must not be 'checked' in an ONNX export"):
        dmljax.onnx.export(fn, np.ones(4, F32), np.array([0, 1, 2, 2], np.int32))


# --- class 5: a symbolic number of segments ---------------------------------------------------


@pytest.mark.parametrize("op", ["segment_sum", "segment_max", "segment_min", "segment_prod", "segment_mean"])
@pytest.mark.parametrize("mode", [None, "clip"])
def test_a_symbolic_number_of_segments_exports_as_jax_export_takes_it(op, mode):
    """``segment_sum(d, i, nodes.shape[0])`` with a symbolic N: jax.export takes it, and so does the model."""
    (n,) = jax.export.symbolic_shape("N")
    fn = lambda nodes, d, i: getattr(dmljax, op)(d, i, nodes.shape[0], mode=mode)  # noqa: E731
    specs = jax.ShapeDtypeStruct((n, 2), F32), jax.ShapeDtypeStruct((5, 2), F32), jax.ShapeDtypeStruct((5,), np.int32)
    assert str(jax.export.export(jax.jit(fn))(*specs).out_avals[0].shape) == "(N, 2)"
    model = dmljax.onnx.export(fn, *specs)
    onnx.checker.check_model(model, full_check=True)
    rng = np.random.default_rng(390)
    for rows in (1, 3, 6):
        args = np.zeros((rows, 2), F32), rng.standard_normal((5, 2)).astype(F32), np.array([0, 1, 2, 2, -1], np.int32)
        same_bits(run(model, *args), [np.asarray(jax.jit(fn)(*args))])


# --- class 6: types onnxruntime has no kernel for ---------------------------------------------


def test_tile_of_bfloat16_is_a_concat_with_every_bit():
    x = np.array([[1.5, -0.0, np.inf], [np.nan, -np.nan, 3e-39]], BF16)
    x = np.concatenate([x.view(np.uint16), np.array([[0x7FC5, 0xFF81, 0x0001]], np.uint16)]).view(BF16)  # NaN payloads
    for repeats in ((2, 3), (1, 2), (3, 1)):
        model = check_all(lambda v, r=repeats: dmljax.tile(v, r), x)
        assert "Tile" not in all_node_types(model.graph)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_constant_pad_of_int16_and_uint16_runs_in_int32(dtype):
    info = np.iinfo(dtype)
    x = np.array([[info.min, 1, info.max], [7, info.max, 0]], dtype)
    for value in (info.min, info.max, 3):
        check_all(lambda v, value=value: dmljax.pad(v, (1, 2), (2, 0), value=value), x)
    check_all(lambda v: dmljax.pad(v, (0, 1), (1, 1), "edge"), x)


def test_segment_mean_of_bfloat16_divides_in_float32_rounded_once():
    rng = np.random.default_rng(391)
    data = (rng.standard_normal((7, 3)) * 10).astype(BF16)
    ids = np.array([0, 1, 1, 2, 2, 2, 5], np.int32)
    check_all(lambda d, i: dmljax.segment_mean(d, i, 6), data, ids)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum"])
def test_bfloat16_arithmetic_is_rounded_once_from_float32(op):
    """Correctly rounded either way (float32 holds more than 2p + 2 bits of bfloat16), as XLA computes it."""
    rng = np.random.default_rng(392)
    a, b = (rng.standard_normal(64) * 100).astype(BF16), (rng.standard_normal(64) * 0.01).astype(BF16)
    a[:5], b[:5] = [np.nan, -np.nan, 1.0, np.inf, -0.0], [1.0, 2.0, np.nan, -np.inf, 2.0]  # NaN signs kept
    check_all(getattr(jnp, op), a, b)


# --- class 7: gradients -----------------------------------------------------------------------


@pytest.mark.parametrize(("axis", "reverse", "exclusive"), [(0, False, False), (1, True, False), (1, False, True)])
def test_the_gradient_of_cumulative_product_exports(axis, reverse, exclusive):
    """Its transpose is a reverse scan, exported as a forward scan of the reversed sequence. The
    gradient's sums of products are XLA's to contract (fused multiply-adds): float32 rounding apart."""
    x = (np.random.default_rng(393).standard_normal((3, 5)) + 1).astype(F32)
    fn = functools.partial(dmljax.cumulative_prod, axis=axis, reverse=reverse, exclusive=exclusive)
    _, (got,), (want,) = exported(jax.grad(lambda v: (fn(v) * jnp.arange(15.0).reshape(3, 5)).sum()), x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_reverse_scan_exports_in_every_float_type():
    def fn(x):
        return jax.lax.scan(lambda c, v: (c * v, c - v), x[0], x[1:], reverse=True)  # nothing to contract

    for dtype in (F32, F16):
        check_all(fn, (np.random.default_rng(394).standard_normal((6, 3)) + 1).astype(dtype))


@pytest.mark.parametrize(("axis", "largest"), [(-1, True), (0, False), (1, True)])
def test_the_gradient_of_top_k_values_reads_the_topk_node(axis, largest):
    """No BitCast (opset 26) in an opset-23 model: the gradient reads the TopK node's indices."""
    x = np.random.default_rng(395).standard_normal((4, 5)).astype(F32)
    grad = jax.grad(lambda v: (dmljax.top_k(v, 2, axis=axis, largest=largest)[0] ** 2).sum())
    types = all_node_types(check_all(grad, x).graph)
    assert "BitCast" not in types and types.count("TopK") == 2, types  # the values' and the indices' nodes


# --- class 8: vmap ----------------------------------------------------------------------------


def test_vmap_of_reverse_subsequences_exports():
    x = np.arange(24, dtype=F32).reshape(2, 4, 3)
    lengths = np.array([[[1, 2, 3]], [[0, 4, 2]]], np.int32)
    check_all(jax.vmap(lambda a, n: dmljax.reverse_subsequences(a, n, 0)), x, lengths)


# --- class 20: uint64 ordering ----------------------------------------------------------------


@pytest.mark.parametrize("largest", [True, False])
def test_uint64_top_k_and_arg_reductions_order_as_unsigned(largest):
    with jax.enable_x64(True):
        x = np.array([[5, 2**63 + 3, 1, 0, 2**64 - 1, 2**63, 2**63 - 1]], np.uint64)
        model = check_all(lambda v: dmljax.top_k(v, 4, largest=largest), x)
        assert "BitwiseXor" in all_node_types(model.graph)
        check_all(dmljax.argmax if largest else dmljax.argmin, x)
        check_all(lambda v: (dmljax.argmax if largest else dmljax.argmin)(v, 1, select_last_index=True), x)


def test_uint64_top_k_below_opset_18_is_refused_by_name():
    with jax.enable_x64(True), pytest.raises(dmljax.ValidationError, match=r"top_k_values: x.dtype must be exportable"):
        dmljax.onnx.export(lambda v: dmljax.top_k(v, 2), np.arange(4, dtype=np.uint64), opset=17)


# --- class 21: cumulative_product in every type -----------------------------------------------


@pytest.mark.parametrize("dtype", [*INT_TYPES, "float16", "bfloat16", "float32"])
@pytest.mark.parametrize(("axis", "reverse", "exclusive"), [(0, False, False), (1, False, False), (1, True, True)])
def test_cumulative_product_exports_in_every_type_along_every_axis(dtype, axis, reverse, exclusive):
    rng = np.random.default_rng(396)
    if np.dtype(dtype).kind in "iu":
        x = rng.integers(-3 if np.dtype(dtype).kind == "i" else 0, 5, (4, 6)).astype(dtype)  # wraps around
        x[0, 0] = np.iinfo(dtype).max
    else:
        x = (rng.standard_normal((4, 6)) * 3).astype(dtype)
    fn = functools.partial(dmljax.cumulative_prod, axis=axis, reverse=reverse, exclusive=exclusive)
    check_all(fn, x)


def test_cumulative_product_of_64_bit_types_exports():
    with jax.enable_x64(True):
        rng = np.random.default_rng(397)
        check_all(lambda v: dmljax.cumulative_prod(v, 1), rng.integers(1, 2**20, (3, 6)).astype(np.int64))
        check_all(lambda v: dmljax.cumulative_prod(v, 1), rng.integers(1, 2**20, (3, 6)).astype(np.uint64))
        check_all(lambda v: dmljax.cumulative_prod(v, 0, reverse=True), rng.standard_normal((5, 2)))


# --- classes 6 and 22: fill_value_sequence holds no BitCast -------------------------------------


def _range_case(name):
    """One of ONNX's own Range node cases (onnx.backend.test.case.node.rangeop)."""
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import onnx.backend.test.case.node.rangeop  # noqa: F401
    (case,) = [c for c in node_cases._NodeTestCases if c.name == name]
    ((inputs, outputs),) = case.data_sets
    return [np.asarray(v) for v in inputs], np.asarray(outputs[0])


@pytest.mark.parametrize("name", ["test_range_int32_type_negative_delta", "test_range_float_type_positive_delta"])
def test_onnx_range_cases_as_fill_value_sequence(name):
    (start, limit, delta), want = _range_case(name)
    fn = lambda z: z + dmljax.fill_value_sequence(want.shape, want.dtype, start.item(), delta.item())  # noqa: E731
    zeros = np.zeros_like(want)
    model = check_all(fn, zeros)
    assert "BitCast" not in all_node_types(model.graph)
    (got,) = run(model, zeros)
    assert got.tobytes() == want.tobytes() and limit.item() not in got.tolist()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint16"])
def test_signed_fill_value_sequences_wrap_without_bitcast(dtype):
    info = np.iinfo(dtype)
    for start, delta in ((10, -3), (info.max - 2, 1), (info.min, -1), (0, info.max)):
        fn = lambda z, s=start, d=delta: z + dmljax.fill_value_sequence((2, 5), dtype, s, d)  # noqa: E731
        model = check_all(fn, np.zeros((2, 5), dtype))
        assert "BitCast" not in all_node_types(model.graph)
    with jax.enable_x64(True):
        fn = lambda z: z + dmljax.fill_value_sequence((6,), "int64", 2**62, 2**62)  # noqa: E731
        check_all(fn, np.zeros(6, np.int64))


def test_a_float_bitcast_below_opset_26_is_refused_by_name():
    with pytest.raises(dmljax.ValidationError, match=r"jax.lax.bitcast_convert_type: operand must reach an ONNX"):
        dmljax.onnx.export(lambda v: jax.lax.bitcast_convert_type(v, np.int32), np.ones(3, F32))
