"""resample and resample_grad (DML_RESAMPLE1/2, DML_RESAMPLE_GRAD/GRAD1, ONNX Resize).

Against the pages' worked example, the NumPy loop oracles (tests/reference.py, bit for bit),
onnxruntime's and ONNX's Resize (nodes and the node test cases), torch's ``interpolate``;
gradients (``jax.vjp`` of resample is resample_grad, bit for bit), 1 vs 8 host devices.
"""

import importlib
import textwrap
import warnings

import jax
import jax.numpy as jnp
import jax.test_util
import numpy as np
import pytest
from onnx import helper

import dmljax
from tests import reference
from tests.multidevice import run_json

# (shape, scales, mode, input offsets, output offsets, rounding)
CASES = [
    ((2, 2), (0.5, 1.5), "nearest", 0.5, -0.5, None),
    ((2, 2), (0.5, 1.5), "nearest", 0.5, -0.5, "decreasing"),
    ((3, 5), (2.0, 0.6), "nearest", 0.5, -0.5, "increasing"),
    ((1, 2, 4, 6), (1.0, 1.0, 2.0, 3.0), "nearest", 0.5, -0.5, None),
    ((4, 7), (1.7, 0.45), "nearest", 0.0, 0.0, None),
    ((5,), (2.5,), "linear", 0.5, -0.5, None),
    ((3, 4), (2.0, 2.0), "linear", 0.5, -0.5, None),
    ((2, 3, 5, 7), (1.0, 2.0, 1.7, 0.6), "linear", 0.5, -0.5, None),
    ((6, 5), (0.5, 3.0), "linear", 0.0, 0.0, None),
    ((4, 4, 3), (1.5, 0.75, 2.0), "linear", (0.25, 0.5, 1.0), (-1.0, 0.3, 0.0), None),
    ((3, 2, 2, 2), (1.5, 2.0, 2.5, 1.0), "linear", 0.5, -0.5, None),
]


def _args(case):
    shape, scales, mode, a, b, rounding = case
    return dict(mode=mode, input_pixel_offsets=a, output_pixel_offsets=b, rounding_direction=rounding)


def _oracle_args(case):
    shape, scales, mode, a, b, rounding = case
    return dict(mode=mode, offsets_in=a, offsets_out=b, rounding=rounding)


# ----- the pages' example ----------------------------------------------------------------


def test_the_grad_pages_worked_example_is_resample2s_floor():
    """DML_RESAMPLE_GRAD(1): [[1, 2], [3, 4]] scaled (0.5, 1.5) gives [1, 1, 2]; the gradient
    [4, 5, 6] gives [[9, 6], [0, 0]]: the floor of RESAMPLE2 (rounding DECREASING). RESAMPLE1's
    halves-up rule (the default) reads the second row and the second column at the tie."""
    x, g = jnp.array([[1.0, 2.0], [3.0, 4.0]]), jnp.array([[4.0, 5.0, 6.0]])
    floor = dict(mode="nearest", rounding_direction="decreasing")
    np.testing.assert_array_equal(dmljax.resample(x, (0.5, 1.5), **floor), [[1, 1, 2]])
    np.testing.assert_array_equal(dmljax.resample_grad(g, (2, 2), (0.5, 1.5), **floor), [[9, 6], [0, 0]])
    np.testing.assert_array_equal(dmljax.resample(x, (0.5, 1.5)), [[3, 4, 4]])
    np.testing.assert_array_equal(dmljax.resample_grad(g, (2, 2), (0.5, 1.5), mode="nearest"), [[0, 0], [4, 11]])


# ----- the loop oracles --------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_resample_equals_the_loop_oracle(case, dtype):
    rng = np.random.default_rng(0)
    x = rng.normal(size=case[0]).astype(dtype)
    want = reference.resample(x, case[1], **_oracle_args(case))
    got = dmljax.resample(x, case[1], **_args(case))
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jax.jit(lambda x: dmljax.resample(x, case[1], **_args(case)))(x)
    np.testing.assert_array_equal(np.asarray(jitted), want)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_resample_grad_equals_the_loop_oracle_and_the_vjp(case):
    rng = np.random.default_rng(1)
    x = rng.normal(size=case[0]).astype(np.float32)
    y, vjp = jax.vjp(lambda x: dmljax.resample(x, case[1], **_args(case)), x)
    g = rng.normal(size=y.shape).astype(np.float32)
    want = reference.resample_grad(g, case[0], case[1], **_oracle_args(case))
    got = dmljax.resample_grad(g, case[0], case[1], **_args(case))
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(vjp(g)[0]), want)
    grad = jax.jit(jax.grad(lambda x: jnp.vdot(dmljax.resample(x, case[1], **_args(case)), g)))(x)
    np.testing.assert_array_equal(np.asarray(grad), want)


def test_the_gradient_sums_in_output_order():
    """Three outputs read one input element: 1e8, 1, -1e8 in row-major order give 0, not 1."""
    g = jnp.array([1e8, 1.0, -1e8], jnp.float32)
    out = dmljax.resample_grad(g, (1,), 3.0, mode="nearest")
    np.testing.assert_array_equal(out, [0.0])
    np.testing.assert_array_equal(dmljax.resample_grad(g[::-1], (1,), 3.0, mode="nearest"), [0.0])
    np.testing.assert_array_equal(dmljax.resample_grad(jnp.array([1e8, -1e8, 1.0]), (1,), 3.0, mode="nearest"), [1.0])


def test_vmap_equals_a_loop_and_second_order():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    f = lambda v: dmljax.resample(v, (1.5, 0.8), mode="linear")  # noqa: E731
    batched = jax.vmap(f)(x)
    np.testing.assert_array_equal(batched, np.stack([f(v) for v in x]))
    g = rng.normal(size=batched.shape).astype(np.float32)
    grads = jax.vmap(lambda v, c: jax.vjp(f, v)[1](c)[0])(x, g)
    want = np.stack([dmljax.resample_grad(c, (4, 5), (1.5, 0.8), mode="linear") for c in g])
    np.testing.assert_array_equal(grads, want)
    # resample_grad is linear and made of the ordered add: forward and reverse mode, its
    # transpose is resample (up to rounding of the corner sums)
    h = lambda c: dmljax.resample_grad(c, (4, 5), (1.5, 0.8), mode="linear")  # noqa: E731
    np.testing.assert_array_equal(jax.jvp(h, (g[0],), (g[1],))[1], h(g[1]))
    back = jax.vjp(h, g[0])[1](x[0])[0]
    np.testing.assert_allclose(back, f(x[0]), rtol=1e-6, atol=1e-6)


def test_check_grads_reverse_mode():
    x = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32)
    f = lambda v: dmljax.resample(v, (1.5, 0.7), mode="linear")  # noqa: E731
    jax.test_util.check_grads(f, (x,), order=1, modes=["rev"], atol=1e-2, rtol=1e-2)


# ----- onnxruntime, ONNX's node cases, torch ----------------------------------------------

ONNX_MODES = [("half_pixel", 0.5, -0.5), ("asymmetric", 0.0, 0.0)]
NEAREST_MODES = [("round_prefer_ceil", None), ("floor", "decreasing"), ("ceil", "increasing")]


@pytest.mark.parametrize("coordinate_mode, a, b", ONNX_MODES)
@pytest.mark.parametrize("nearest_mode, rounding", NEAREST_MODES)
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 3.0), (1.0, 1.0, 0.5, 0.75), (1.0, 2.0, 1.7, 0.6)])
def test_nearest_equals_onnxruntime(coordinate_mode, a, b, nearest_mode, rounding, scales):
    x = np.random.default_rng(4).normal(size=(1, 2, 6, 8)).astype(np.float32)
    attrs = dict(mode="nearest", coordinate_transformation_mode=coordinate_mode, nearest_mode=nearest_mode)
    want = _ort_resize(x, scales, **attrs)
    got = dmljax.resample(x, scales, input_pixel_offsets=a, output_pixel_offsets=b, rounding_direction=rounding)
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("coordinate_mode, a, b", ONNX_MODES)
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 3.0), (1.0, 1.0, 0.5, 0.75), (1.0, 1.0, 1.7, 0.6)])
def test_linear_equals_onnxruntime(coordinate_mode, a, b, scales):
    x = np.random.default_rng(5).normal(size=(1, 2, 6, 8)).astype(np.float32)
    want = _ort_resize(x, scales, mode="linear", coordinate_transformation_mode=coordinate_mode)
    got = dmljax.resample(x, scales, mode="linear", input_pixel_offsets=a, output_pixel_offsets=b)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def _ort_resize(x, scales, **attrs):
    from onnx import TensorProto

    node = helper.make_node("Resize", ["x", "", "scales"], ["out"], **attrs)
    out_shape = reference.resample_output_shape(x.shape, scales)
    graph = helper.make_graph(
        [node],
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)],
        [helper.make_tensor("scales", TensorProto.FLOAT, (len(scales),), list(scales))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    from tests._util import onnx_session

    return onnx_session(model).run(None, {"x": x})[0]


def _node_cases():
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module("onnx.backend.test.case.node.resize")
    return [c for c in node_cases._NodeTestCases if c.model.graph.node[0].op_type == "Resize"]


def _expressible(case):
    """The case's resample arguments where DirectML expresses it (else None): nearest or
    linear, half_pixel or asymmetric, no antialias, no keep_aspect_ratio_policy, no roi."""
    node = case.model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    coordinate = attrs.get("coordinate_transformation_mode", "half_pixel")
    if attrs.get("mode", "nearest") not in ("nearest", "linear") or coordinate not in ("half_pixel", "asymmetric"):
        return None
    if (attrs.get("antialias", 0) and attrs.get("mode") != "linear") or "keep_aspect_ratio_policy" in attrs:
        return None
    if node.input[1]:  # a roi
        return None
    inputs = case.data_sets[0][0]
    x = np.asarray(inputs[0])
    if len(node.input) > 3 and node.input[3]:
        sizes = np.asarray(inputs[-1])
        scales = sizes / np.asarray([x.shape[a] for a in attrs.get("axes", range(x.ndim))], np.float32)
    else:
        scales = np.asarray(inputs[-1])
    full = [1.0] * x.ndim
    for axis, scale in zip(attrs.get("axes", range(x.ndim)), scales, strict=True):
        full[axis] = float(scale)
    a, b = (0.5, -0.5) if coordinate == "half_pixel" else (0.0, 0.0)
    nearest = attrs.get("nearest_mode", "round_prefer_floor")
    rounding = {"round_prefer_ceil": None, "floor": "decreasing", "ceil": "increasing"}.get(nearest, "increasing")
    if (
        nearest == "round_prefer_floor" and attrs.get("mode", "nearest") == "nearest"
    ):  # RESAMPLE2: ceil(c - 0.5), onnxruntime's DirectML mapping
        a += 0.5
    args = dict(mode=attrs.get("mode", "nearest"), input_pixel_offsets=a, output_pixel_offsets=b)
    if args["mode"] == "nearest":
        args["rounding_direction"] = rounding
    if attrs.get("antialias", 0):
        args["antialiased"] = True
    return x, tuple(full), args


NODE_CASES = [c for c in _node_cases() if _expressible(c) is not None]


def test_the_node_cases_were_found():
    names = {c.name for c in NODE_CASES}
    assert {"test_resize_upsample_scales_nearest", "test_resize_downsample_scales_linear"} <= names
    assert "test_resize_upsample_sizes_nearest_ceil_half_pixel" in names and len(names) >= 10
    assert "test_resize_downsample_scales_linear_antialias" in names


@pytest.mark.parametrize("case", NODE_CASES, ids=lambda c: c.name)
def test_onnx_node_case(case):
    x, scales, args = _expressible(case)
    want = case.data_sets[0][1][0]
    got = dmljax.resample(x, scales, **args)
    np.testing.assert_allclose(np.asarray(got), want, rtol=case.rtol, atol=case.atol)


@pytest.mark.parametrize("scale", [2.0, 3.0, 0.5])
def test_torch_nearest_exact_and_bilinear(scale):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(6).normal(size=(2, 3, 6, 8)).astype(np.float32)
    t = torch.from_numpy(x)
    near = torch.nn.functional.interpolate(t, scale_factor=scale, mode="nearest-exact").numpy()
    np.testing.assert_array_equal(np.asarray(dmljax.resample(x, (1, 1, scale, scale))), near)
    floor = torch.nn.functional.interpolate(t, scale_factor=scale, mode="nearest").numpy()
    got = dmljax.resample(x, (1, 1, scale, scale), input_pixel_offsets=0.0, output_pixel_offsets=0.0,
                          rounding_direction="decreasing")  # fmt: skip
    np.testing.assert_array_equal(np.asarray(got), floor)
    t.requires_grad_(True)
    lin = torch.nn.functional.interpolate(t, scale_factor=scale, mode="bilinear", align_corners=False)
    got = dmljax.resample(x, (1, 1, scale, scale), mode="linear")
    # torch reads at (o + 0.5) * (1 / scale) - 0.5: the weights differ in the last bits for 1/3
    np.testing.assert_allclose(np.asarray(got), lin.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(7).normal(size=lin.shape).astype(np.float32)
    lin.backward(torch.from_numpy(g))
    ours = dmljax.resample_grad(g, x.shape, (1, 1, scale, scale), mode="linear")
    np.testing.assert_allclose(np.asarray(ours), t.grad.numpy(), rtol=1e-5, atol=1e-5)


# ----- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scales=(1.0, 0.0)), r"scales\[1\] must be > 0"),
        (dict(scales=(1.0, -2.0)), r"scales\[1\] must be > 0.*-2.0"),
        (dict(scales=(1.0,)), r"scales must have one entry per dimension \(2\)"),
        (dict(scales=(1.0, 0.1)), r"scales\[1\] must give an output size >= 1"),
        (dict(scales=(1.0, 2.0), mode="cubic"), r"mode must be one of"),
        (dict(scales=(1.0, 2.0), input_pixel_offsets=(0.5,)), r"input_pixel_offsets must have one entry"),
        (dict(scales=(1.0, float("nan"))), r"scales\[1\] must be finite"),
        (dict(scales=(1.0, 2.0), rounding_direction="up"), r"rounding_direction must be"),
    ],
)
def test_bad_arguments_raise_validation_errors(kwargs, match):
    with pytest.raises(dmljax.ValidationError, match=match):
        dmljax.resample(jnp.ones((2, 3)), **kwargs)


def test_bad_types_and_gradient_shapes():
    with pytest.raises(TypeError, match=r"resample: x.dtype must be a float type"):
        dmljax.resample(jnp.ones((2, 3), jnp.int32), (1.0, 2.0), mode="linear")
    np.testing.assert_array_equal(dmljax.resample(jnp.array([1, 2], jnp.int32), 1.5), [1, 2, 2][:3])
    with pytest.raises(dmljax.ValidationError, match=r"output_gradient.shape must be resample's output shape"):
        dmljax.resample_grad(jnp.ones((2, 5)), (2, 3), (1.0, 2.0), mode="linear")
    with pytest.raises(dmljax.ValidationError, match=r"input_shape must be 1 to 8 ints >= 1"):
        dmljax.resample_grad(jnp.ones((2, 6)), (2, 0), (1.0, 2.0), mode="linear")
    with pytest.raises(dmljax.ValidationError, match=r"scales must be static floats"):
        jax.jit(lambda s: dmljax.resample(jnp.ones(3), s))(jnp.ones(1))


# ----- several devices ---------------------------------------------------------------------

SHARDED_SCRIPT = textwrap.dedent(
    """
    import json
    import jax, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import dmljax

    rng = np.random.default_rng(0)
    out = {}
    for mode in ("nearest", "linear"):
        g = (rng.choice(np.array([1e8, -1e8, 1.0, 3.0], np.float32), (8, 4, 12, 10))
             * rng.normal(size=(8, 4, 12, 10)).astype(np.float32))
        f = lambda g: dmljax.resample_grad(g, (8, 4, 5, 21), (1.0, 1.0, 2.5, 0.5), mode=mode)
        mesh = jax.make_mesh((jax.device_count(),), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
        sharded = jax.device_put(g, NamedSharding(mesh, P("d")))
        out[mode] = np.asarray(jax.jit(f)(sharded)).view(np.uint32).tolist()
        out[mode + " eager"] = np.asarray(f(g)).view(np.uint32).tolist()
    print(json.dumps(out))
    """
)


@pytest.mark.system
@pytest.mark.slow
def test_resample_grad_is_bit_equal_on_1_and_8_devices():
    one, eight = run_json(SHARDED_SCRIPT, devices=1), run_json(SHARDED_SCRIPT, devices=8)
    assert one.keys() == eight.keys() and len(one) == 4
    for key in one:
        assert one[key] == eight[key], key
    assert one["nearest"] == one["nearest eager"] and one["linear"] == one["linear eager"]


# ----- the benchmark group --------------------------------------------------------------------


@pytest.mark.slow
def test_every_vision_contender_computes_what_dmljax_computes():
    """Nearest neighbour bit for bit (gradients: sums in another order), bilinear within rounding."""
    from dmljax.bench import vision
    from dmljax.bench._harness import block

    built = [c for c in vision.cases([8192]) if c.name.startswith("resample")]  # pooling: tests/test_pooling.py
    assert {c.group for c in built} == {"vision"} and len(built) == 4
    for case in built:
        ours = np.asarray(block(case.contenders["dmljax"]()))
        for name, fn in case.contenders.items():
            theirs = np.asarray(block(fn()) if name != "torch" or "bwd" not in case.name else fn()[0])
            if "nearest" in case.name and "fwd" in case.name:
                np.testing.assert_array_equal(ours, theirs, err_msg=f"{case.name}: {name}")
            elif name != "torch" or "fwd" in case.name:  # torch's backward: a cotangent of ones
                np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5, err_msg=f"{case.name}: {name}")


@pytest.mark.parametrize("case", CASES[:1] + CASES[5:8], ids=str)
def test_float16_gradients_sum_in_float32_and_round_once(case):
    g_shape = reference.resample_output_shape(case[0], case[1])
    g = np.random.default_rng(8).normal(size=g_shape).astype(np.float16)
    want = reference.resample_grad(g, case[0], case[1], **_oracle_args(case))
    got = dmljax.resample_grad(g, case[0], case[1], **_args(case))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(got), want)
    x = np.zeros(case[0], np.float16)
    np.testing.assert_array_equal(jax.vjp(lambda v: dmljax.resample(v, case[1], **_args(case)), x)[1](g)[0], want)


# ----- antialiasing (RESAMPLE3, ONNX antialias) ---------------------------------------------

ANTIALIAS = [((6, 9), (0.5, 0.6)), ((2, 3, 10, 7), (1.0, 1.0, 0.3, 0.8)), ((5,), (0.45,)), ((4, 6), (0.5, 2.0))]


@pytest.mark.parametrize("shape, scales", ANTIALIAS, ids=str)
def test_antialiased_linear_equals_the_oracle_and_its_gradient(shape, scales):
    rng = np.random.default_rng(9)
    x = rng.normal(size=shape).astype(np.float32)
    f = lambda v: dmljax.resample(v, scales, mode="linear", antialiased=True)  # noqa: E731
    want = reference.resample(x, scales, mode="linear", antialias=True)
    y, vjp = jax.vjp(f, x)
    np.testing.assert_array_equal(np.asarray(y), want)
    g = rng.normal(size=y.shape).astype(np.float32)
    want_grad = reference.resample_grad(g, shape, scales, mode="linear", antialias=True)
    np.testing.assert_array_equal(np.asarray(vjp(g)[0]), want_grad)
    got = dmljax.resample_grad(g, shape, scales, mode="linear", antialiased=True)
    np.testing.assert_array_equal(np.asarray(got), want_grad)


@pytest.mark.parametrize("scales", [(1.0, 1.0, 0.5, 0.6), (1.0, 1.0, 0.3, 0.8)])
def test_antialiased_linear_equals_onnxruntime(scales):
    x = np.random.default_rng(10).normal(size=(1, 2, 12, 10)).astype(np.float32)
    want = _ort_resize(x, scales, mode="linear", antialias=1)
    got = dmljax.resample(x, scales, mode="linear", antialiased=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_antialiasing_leaves_nearest_and_upsampling_alone():
    x = np.random.default_rng(11).normal(size=(4, 6)).astype(np.float32)
    for kwargs in (dict(), dict(mode="linear")):
        scales = (2.0, 1.5) if kwargs else (0.5, 0.5)
        np.testing.assert_array_equal(
            dmljax.resample(x, scales, antialiased=True, **kwargs), dmljax.resample(x, scales, **kwargs)
        )
    with pytest.raises(dmljax.ValidationError, match=r"antialiased must be a bool"):
        dmljax.resample(x, (0.5, 0.5), mode="linear", antialiased="yes")
