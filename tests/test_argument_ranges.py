"""Every integer argument against the type DirectML gives it; errors name what the user called."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
from dmljax import TensorDesc, ValidationError
from dmljax.descriptors import FeatureLevel, ScatterOperatorDesc, Slice1OperatorDesc


@pytest.mark.parametrize(
    ("window", "message"),
    [
        (
            ((0,), (8,), (2**63,)),
            "strides[0] must be in [-2147483648, 2147483647] (DirectML INT, 32 bits); "
            "got strides[0]=9223372036854775808",
        ),
        (
            ((0,), (8,), (-(2**63),)),
            "strides[0] must be in [-2147483648, 2147483647] (DirectML INT, 32 bits); "
            "got strides[0]=-9223372036854775808",
        ),
        (((0,), (8,), (2**31,)), "strides[0] must be in [-2147483648, 2147483647]"),
        (
            ((2**32,), (8,), (1,)),
            "offsets[0] must be in [0, 4294967295] (DirectML UINT, 32 bits); got offsets[0]=4294967296",
        ),
        (
            ((0,), (2**32,), (1,)),
            "sizes[0] must be in [0, 4294967295] (DirectML UINT, 32 bits); got sizes[0]=4294967296",
        ),
    ],
    ids=["stride 2^63", "stride -2^63", "stride 2^31", "offset 2^32", "size 2^32"],
)
def test_slice1_window_values_fit_directml_types(window, message):
    with pytest.raises(ValidationError, match=re.escape(f"slice1: {message}")):
        dmljax.slice(jnp.zeros(8), *window)
    with pytest.raises(ValidationError, match=re.escape(f"slice1: {message}")):
        jax.jit(lambda x: dmljax.slice(x, *window))(jnp.zeros(8))


def test_slice1_extreme_valid_strides():
    x = jnp.arange(8)
    np.testing.assert_array_equal(dmljax.slice(x, (0,), (8,), (-(2**31),)), [7])
    np.testing.assert_array_equal(dmljax.slice(x, (0,), (8,), (2**31 - 1,)), [0])


@pytest.mark.parametrize(
    ("member", "window", "value"),
    [
        ("input_window_strides[0]", ((0,), (8,), (2**31,)), 2**31),
        ("input_window_strides[0]", ((0,), (8,), (-(2**31) - 1,)), -(2**31) - 1),
        ("input_window_strides[0]", ((0,), (8,), (2**63,)), 2**63),
        ("input_window_offsets[0]", ((2**32,), (8,), (1,)), 2**32),
    ],
)
def test_slice1_desc_values_fit_directml_types_at_compile_operator(member, window, value):
    desc = Slice1OperatorDesc(TensorDesc("float32", (8,)), TensorDesc("float32", (1,)), *window)
    kind = "INT" if "strides" in member else "UINT"
    with pytest.raises(ValidationError, match=re.escape(f"Slice1OperatorDesc: {member} must be in [")) as info:
        dmljax.descriptors.compile_operator(desc, FeatureLevel.FL_3_0)
    assert f"(DirectML {kind}, 32 bits); got {member}={value} " in str(info.value)
    assert "feature level 3.0" in str(info.value)


def test_compiled_operator_called_with_none_names_the_buffer():
    data, index = TensorDesc("float32", (5,)), TensorDesc("uint32", (2,))
    op = dmljax.descriptors.compile_operator(
        ScatterOperatorDesc(data, index, TensorDesc("float32", (2,)), data, axis=0)
    )
    pattern = (
        r"ScatterOperatorDesc: input_buffer must be a 1-D array of FLOAT32 \(a flat buffer\); got input_buffer=None\."
    )
    with pytest.raises(TypeError, match=pattern):
        op(None, np.zeros(2, np.uint32), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match=r"ScatterOperatorDesc: updates_buffer must be a 1-D array of FLOAT32"):
        op(np.zeros(5, np.float32), np.zeros(2, np.uint32), None)


@pytest.mark.parametrize("x64_on", [False, True])
def test_scatter_host_updates_behave_the_same_with_x64_on_and_off(x64_on):
    with jax.enable_x64(x64_on):
        out = dmljax.scatter(jnp.zeros(3, jnp.float32), np.array([1]), np.array([1.5]))
        assert out.dtype == np.float32 and out.tolist() == [0.0, 1.5, 0.0]
        out = dmljax.scatter(jnp.zeros(3, jnp.int32), np.array([2]), np.array([-7]))
        assert out.dtype == np.int32 and out.tolist() == [0, 0, -7]
        with pytest.raises(ValidationError, match=r"scatter: updates must hold values that fit input.dtype int32"):
            dmljax.scatter(jnp.zeros(3, jnp.int32), np.array([2]), np.array([2**40]))
        with pytest.raises(TypeError, match=r"scatter: updates.dtype must equal input.dtype \(float32\)"):
            dmljax.scatter(jnp.zeros(3, jnp.float32), np.array([1]), jnp.array([1], jnp.int32))


def test_scatter_jax_float64_updates_with_x64_must_match(x64):
    with pytest.raises(
        TypeError,
        match=r"scatter: updates.dtype must equal input.dtype \(float32\); got updates.dtype=dtype\('float64'\)",
    ):
        dmljax.scatter(jnp.zeros(3, jnp.float32), np.array([1]), jnp.array([1.5], jnp.float64))


def test_index_mode_is_public():
    assert dmljax.IndexMode.FILL is dmljax.IndexMode.from_any("drop")
    assert "dmljax.IndexMode" in dmljax.gather.__doc__ and "dmljax.IndexMode" in dmljax.scatter.__doc__
    for fun in (dmljax.gather, dmljax.gather_elements, dmljax.scatter, dmljax.slice, dmljax.IndexMode):
        assert "SPEC" not in fun.__doc__ and "seed 0" not in fun.__doc__


_X = jnp.arange(12.0).reshape(3, 4)
_STATIC = r"mark it static: jax\.jit\(\.\.\., static_argnames='axis'\)\)\."


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("gather", lambda a: dmljax.gather(_X, jnp.array([0, 1]), axis=a)),
        ("gather_elements", lambda a: dmljax.gather_elements(_X, jnp.zeros((3, 4), jnp.int32), axis=a)),
        ("scatter", lambda a: dmljax.scatter(_X, jnp.zeros((3, 4), jnp.int32), _X, axis=a)),
    ],
)
def test_traced_axis_is_a_named_error(name, call):
    shape = "input" if name == "scatter" else "data"
    match = (
        rf"^{name}: axis must be a static int \(not traced\); got axis=.*Tracer.* \({shape} shape \(3, 4\); {_STATIC}"
    )
    with pytest.raises(ValidationError, match=match):
        jax.jit(call)(1)
    np.testing.assert_array_equal(jax.jit(call, static_argnums=0)(1), call(1))  # static: fine


@pytest.mark.parametrize(
    ("call", "param"),
    [
        (lambda o: dmljax.slice(_X, [0, o], [1, 2], [1, 1]), "offsets[1]"),
        (lambda s: dmljax.slice(_X, [0, 0], [s, 4], [1, 1]), "sizes[0]"),
        (lambda s: dmljax.slice(_X, [0, 0], [3, 4], [1, s]), "strides[1]"),
        (lambda n: dmljax.slice(_X, [0, 0], [3, 4], [1, 1], output_sizes=[n, 4]), "output_sizes[0]"),
    ],
)
def test_traced_slice1_window_entry_is_a_named_error(call, param):
    rule = rf"{re.escape(param)} must be a static int \(not traced\); got {re.escape(param)}=.*Tracer"
    with pytest.raises(ValidationError, match=rf"^slice1: {rule}.* \(input shape \(3, 4\); mark it static: jax\.jit"):
        jax.jit(call)(1)
    np.testing.assert_array_equal(jax.jit(call, static_argnums=0)(1), call(1))


def test_traced_slice1_window_array_is_a_named_error():
    match = (
        r"^slice1: offsets must be static ints \(not traced\); got offsets=.*Tracer.*int32\[2\].*\(input shape \(3, 4\)"
    )
    with pytest.raises(ValidationError, match=match):
        jax.jit(lambda o: dmljax.slice(_X, o, [1, 2], [1, 1]))(jnp.array([1, 0]))
