"""compile_operator for DML_RESAMPLE, RESAMPLE1/2 and DML_RESAMPLE_GRAD/GRAD1.

The grad page's worked example through descriptors, output sizes other than
``floor(size * scale)`` (the page: cropped or clamped), strided layouts against the loop
oracles, the feature-level tables and the rules between members.
"""

import numpy as np
import pytest

import dmljax
from dmljax import TensorDesc, ValidationError
from dmljax.descriptors import (
    AxisDirection,
    InterpolationMode,
    Resample1OperatorDesc,
    Resample2OperatorDesc,
    Resample3OperatorDesc,
    ResampleGrad1OperatorDesc,
    ResampleGradOperatorDesc,
    ResampleOperatorDesc,
    compile_operator,
)
from tests import reference
from tests.test_compile_operator import check_output, random_layout, to_buffer

NEAREST, LINEAR = InterpolationMode.NEAREST_NEIGHBOR, InterpolationMode.LINEAR
DEC = AxisDirection.DECREASING


def test_the_grad_pages_example_through_resample2_and_grad1():
    x, out = TensorDesc("float32", (1, 1, 2, 2)), TensorDesc("float32", (1, 1, 1, 3))
    scales, a, b = (1.0, 1.0, 0.5, 1.5), (0.5,) * 4, (-0.5,) * 4
    forward = compile_operator(Resample2OperatorDesc(x, out, NEAREST, DEC, scales, a, b), "5.1")
    check_output(out, forward(np.array([1, 2, 3, 4], np.float32)), [[[[1, 1, 2]]]])
    grad = compile_operator(ResampleGrad1OperatorDesc(out, x, NEAREST, DEC, scales, a, b), "5.1")
    check_output(x, grad(np.array([4, 5, 6], np.float32)), [[[[9, 6], [0, 0]]]])
    # RESAMPLE1 / RESAMPLE_GRAD: floor(c + 0.5), halves up
    check_output(
        out,
        compile_operator(Resample1OperatorDesc(x, out, NEAREST, scales, a, b))(np.arange(1.0, 5.0, dtype=np.float32)),
        [[[[3, 4, 4]]]],
    )
    g = compile_operator(ResampleGradOperatorDesc(out, x, NEAREST, scales, a, b))(np.array([4, 5, 6], np.float32))
    check_output(x, g, [[[[0, 0], [4, 11]]]])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mode", [NEAREST, LINEAR])
def test_strided_layouts_and_free_output_sizes_match_the_oracles(seed, mode):
    rng = np.random.default_rng(seed)
    sizes = tuple(int(n) for n in rng.integers(1, 6, 4))
    scales = tuple(float(s) for s in rng.choice([0.5, 1.0, 1.5, 2.0, 2.5], 4))
    out_sizes = tuple(
        max(1, int(np.floor(n * s)) + int(rng.integers(-1, 2))) for n, s in zip(sizes, scales, strict=True)
    )
    a, b = (0.5, 0.0, 0.25, 0.5), (-0.5, 0.0, 0.0, -0.5)
    x_desc, y_desc = random_layout(rng, "float32", sizes), random_layout(rng, "float32", out_sizes)
    x = rng.normal(size=sizes).astype(np.float32)
    y = compile_operator(Resample1OperatorDesc(x_desc, y_desc, mode, scales, a, b))(to_buffer(x_desc, x))
    want = _oracle(x, out_sizes, scales, mode.mode, a, b)
    check_output(y_desc, y, want)
    g = rng.normal(size=out_sizes).astype(np.float32)
    back = compile_operator(ResampleGradOperatorDesc(y_desc, x_desc, mode, scales, a, b))(to_buffer(y_desc, g))
    check_output(x_desc, back, _oracle_grad(g, sizes, scales, mode.mode, a, b))


def _oracle(x, out_sizes, scales, mode, a, b):
    out = np.zeros(out_sizes, np.float32)
    for o in np.ndindex(*out_sizes):
        total = None
        for index, w in reference._resample_corners(o, x.shape, scales, a, b, mode, None):
            value = x[index] if w is None else np.float32(w * x[index])
            total = value if total is None else np.float32(total + value)
        out[o] = total
    return out


def _oracle_grad(g, shape, scales, mode, a, b):
    out = np.zeros(shape, np.float32)
    for o in np.ndindex(*g.shape):
        for index, w in reference._resample_corners(o, shape, scales, a, b, mode, None):
            out[index] = np.float32(out[index] + (g[o] if w is None else np.float32(w * g[o])))
    return out


def test_resample_is_resample1_at_pixel_centres():
    t, u = TensorDesc("float16", (1, 2, 3, 4)), TensorDesc("float16", (1, 2, 6, 2))
    x = np.random.default_rng(0).normal(size=(1, 2, 3, 4)).astype(np.float16)
    scales = (1.0, 1.0, 2.0, 0.5)
    got = compile_operator(ResampleOperatorDesc(t, u, LINEAR, scales), "2.0")(x.ravel())
    check_output(u, got, dmljax.resample(x, scales, mode="linear"))
    with pytest.raises(ValidationError, match=r"feature_level must be at least 2.0"):
        compile_operator(ResampleOperatorDesc(t, u, LINEAR, scales), "1.0")


def test_resample_takes_bytes_from_6_2_nearest_only():
    t, u = TensorDesc("uint8", (2, 3)), TensorDesc("uint8", (4, 6))
    x = np.arange(6, dtype=np.uint8).reshape(2, 3)
    got = compile_operator(ResampleOperatorDesc(t, u, NEAREST, (2.0, 2.0)), "6.2")(x.ravel())
    check_output(u, got, np.repeat(np.repeat(x, 2, 0), 2, 1))
    with pytest.raises(
        ValidationError, match=r"input_tensor.dtype must be one of FLOAT32, FLOAT16 at feature level 6.1"
    ):
        compile_operator(ResampleOperatorDesc(t, u, NEAREST, (2.0, 2.0)), "6.1")
    with pytest.raises(ValidationError, match=r"input_tensor.dtype must be FLOAT32 or FLOAT16 for LINEAR"):
        compile_operator(ResampleOperatorDesc(t, u, LINEAR, (2.0, 2.0)), "6.2")


def test_levels_and_rules():
    t4, u4 = TensorDesc("float32", (1, 1, 2, 2)), TensorDesc("float32", (1, 1, 4, 4))
    t2, u2 = TensorDesc("float32", (2, 2)), TensorDesc("float32", (4, 4))
    with pytest.raises(ValidationError, match=r"input_tensor.dimension_count must be 4 at feature level 2.1"):
        compile_operator(Resample1OperatorDesc(t2, u2, LINEAR, (2.0, 2.0), (0.5, 0.5), (-0.5, -0.5)), "2.1")
    with pytest.raises(ValidationError, match=r"feature_level must be at least 5.1"):
        compile_operator(Resample2OperatorDesc(t2, u2, LINEAR, DEC, (2.0, 2.0), (0.5, 0.5), (-0.5, -0.5)), "5.0")
    compile_operator(Resample2OperatorDesc(t2, u2, LINEAR, DEC, (2.0, 2.0), (0.5, 0.5), (-0.5, -0.5)), "5.1")
    with pytest.raises(ValidationError, match=r"scales\[3\] must be > 0.*got scales\[3\]=-2.0"):
        compile_operator(Resample1OperatorDesc(t4, u4, LINEAR, (1, 1, 2, -2), (0.5,) * 4, (-0.5,) * 4))
    with pytest.raises(ValidationError, match=r"input_pixel_offsets must have one value per dimension \(4\)"):
        compile_operator(Resample1OperatorDesc(t4, u4, LINEAR, (1, 1, 2, 2), (0.5,) * 3, (-0.5,) * 4))
    with pytest.raises(ValidationError, match=r"output_tensor.dtype must equal input_tensor.dtype"):
        compile_operator(ResampleOperatorDesc(t4, TensorDesc("float16", (1, 1, 4, 4)), LINEAR, (1, 1, 2, 2)))
    with pytest.raises(ValidationError, match=r"input_tensor.dtype must be one of FLOAT32, FLOAT16"):
        compile_operator(
            ResampleOperatorDesc(
                TensorDesc("int32", (1, 1, 2, 2)), TensorDesc("int32", (1, 1, 4, 4)), NEAREST, (1, 1, 2, 2)
            )
        )
    with pytest.raises(ValidationError, match=r"feature_level must be at least 3.0"):
        compile_operator(ResampleGradOperatorDesc(u4, t4, LINEAR, (1, 1, 2, 2), (0.5,) * 4, (-0.5,) * 4), "2.1")
    with pytest.raises(TypeError, match=r"interpolation_mode must be an InterpolationMode"):
        ResampleOperatorDesc(t4, u4, "cubic", (1, 1, 2, 2))


def test_resample3_antialiases_from_6_4():
    t, u = TensorDesc("float32", (2, 10, 9)), TensorDesc("float32", (2, 3, 4))
    x = np.random.default_rng(3).normal(size=(2, 10, 9)).astype(np.float32)
    scales, a, b = (1.0, 0.3, 0.5), (0.5,) * 3, (-0.5,) * 3
    desc = Resample3OperatorDesc(t, u, LINEAR, DEC, scales, a, b, True)
    check_output(
        u, compile_operator(desc, "6.4")(x.ravel()), dmljax.resample(x, scales, mode="linear", antialiased=True)
    )
    plain = Resample3OperatorDesc(t, u, LINEAR, DEC, scales, a, b, 0)
    check_output(u, compile_operator(plain)(x.ravel()), dmljax.resample(x, scales, mode="linear"))
    with pytest.raises(ValidationError, match=r"feature_level must be at least 6.4"):
        compile_operator(desc, "6.3")
    with pytest.raises(TypeError, match=r"antialiased must be a bool"):
        Resample3OperatorDesc(t, u, LINEAR, DEC, scales, a, b, "yes")


def test_the_resample_pages_later_rows():
    """RESAMPLE1 takes 1 to 4 dimensions from 5.1 and bytes from 6.2, RESAMPLE_GRAD 1 to 4 from
    5.1, RESAMPLE3 bytes from its first level (6.4)."""
    t2, u2 = TensorDesc("float32", (2, 3)), TensorDesc("float32", (4, 6))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    desc = Resample1OperatorDesc(t2, u2, LINEAR, (2.0, 2.0), (0.5, 0.5), (-0.5, -0.5))
    check_output(u2, compile_operator(desc, "5.1")(x.ravel()), dmljax.resample(x, (2.0, 2.0), mode="linear"))
    with pytest.raises(ValidationError, match=r"input_tensor.dimension_count must be 4 at feature level 5.0"):
        compile_operator(desc, "5.0")
    b, c = TensorDesc("uint8", (2, 3)), TensorDesc("uint8", (4, 6))
    xb = x.astype(np.uint8)
    nearest = Resample1OperatorDesc(b, c, NEAREST, (2.0, 2.0), (0.5, 0.5), (-0.5, -0.5))
    check_output(c, compile_operator(nearest, "6.2")(xb.ravel()), np.repeat(np.repeat(xb, 2, 0), 2, 1))
    bytes_at_6_1 = r"input_tensor.dtype must be one of FLOAT32, FLOAT16 at feature level 6.1"
    with pytest.raises(ValidationError, match=bytes_at_6_1):
        compile_operator(nearest, "6.1")
    grad = ResampleGradOperatorDesc(u2, t2, LINEAR, (2.0, 2.0), (0.5, 0.5), (-0.5, -0.5))
    compile_operator(grad, "5.1")
    with pytest.raises(ValidationError, match=r"input_gradient_tensor.dimension_count must be 4 at feature level 5.0"):
        compile_operator(grad, "5.0")
    three = Resample3OperatorDesc(b, c, NEAREST, DEC, (2.0, 2.0), (0.5, 0.5), (-0.5, -0.5), False)
    want = dmljax.resample(xb, (2.0, 2.0), mode="nearest", rounding_direction="decreasing")
    check_output(c, compile_operator(three, "6.4")(xb.ravel()), want)
    with pytest.raises(ValidationError, match=r"feature_level must be at least 6.4"):
        compile_operator(three, "6.3")
