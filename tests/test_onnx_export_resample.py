"""dmljax.onnx.export of resample: one Resize node where ONNX expresses the call, equal to JAX.

Nearest neighbour is compared bit for bit; linear within float32 rounding (onnxruntime's
Resize sums its corners in its own order). Offsets no ONNX mode expresses export the
gathers instead, and the gradient exports through ScatterElements; both equal JAX.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("jax2onnx")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import dmljax  # noqa: E402
import dmljax.onnx  # noqa: E402


def run(model, *args):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {spec.name: np.asarray(a) for spec, a in zip(session.get_inputs(), args, strict=True)}
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(rounding_direction="decreasing"),
        dict(input_pixel_offsets=0.0, output_pixel_offsets=0.0, rounding_direction="increasing"),
        dict(mode="linear"),
        dict(mode="linear", input_pixel_offsets=0.0, output_pixel_offsets=0.0),
    ],
    ids=str,
)
@pytest.mark.parametrize("scales", [(1.0, 1.0, 2.0, 3.0), (1.0, 1.0, 0.6, 1.7)])
def test_resample_is_one_resize_node(dtype, kwargs, scales):
    x = np.random.default_rng(0).normal(size=(2, 3, 5, 6)).astype(dtype)

    def fn(x):
        return dmljax.resample(x, scales, **kwargs)

    model = dmljax.onnx.export(fn, x)
    onnx.checker.check_model(model)
    assert "Resize" in [n.op_type for n in model.graph.node]
    got, want = run(model, x), np.asarray(jax.jit(fn)(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    if kwargs.get("mode", "nearest") == "nearest":
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == "float16" else 1e-6, atol=1e-6)


def test_other_offsets_and_the_gradient_export_equal_jax():
    x = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)

    def shifted(x):
        return dmljax.resample(x, (1.5, 2.0), mode="linear", input_pixel_offsets=0.25, output_pixel_offsets=0.0)

    model = dmljax.onnx.export(shifted, x)
    assert "Resize" not in [n.op_type for n in model.graph.node]
    np.testing.assert_allclose(run(model, x), jax.jit(shifted)(x), rtol=1e-6, atol=1e-6)

    def grad(x):
        return jax.grad(lambda v: jnp.sum(dmljax.resample(v, (2.0, 1.5), mode="linear") ** 2))(x)

    model = dmljax.onnx.export(grad, x)
    np.testing.assert_allclose(run(model, x), jax.jit(grad)(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_resample_export_puts_nan_where_jax_does(mode, dtype):
    """NaN inputs: nearest copies them bit for bit (payloads too); linear gives NaN at the same
    outputs, its other values as close as without NaN. (An infinity as the last element of an
    axis differs: dmljax adds it again with weight 0 at the border, NaN; Resize gives it.)"""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 7, 8)).astype(dtype)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7FC00321], np.uint32).view(np.float32)
    x.reshape(-1)[rng.choice(x.size, 20, replace=False)] = nans[rng.integers(0, 3, 20)].astype(dtype)

    def fn(v):
        return dmljax.resample(v, (1.0, 1.0, 2.0, 1.5), mode=mode)

    got, want = run(dmljax.onnx.export(fn, x), x), np.asarray(jax.jit(fn)(x))
    if mode == "nearest":
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    else:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == "float16" else 1e-6, atol=1e-6)
