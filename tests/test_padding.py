"""pad (DML_PADDING1): the page's mode rules, loop oracle, transforms, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference

MODES = ["constant", "edge", "reflection", "symmetric", "wrap"]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("constant", [9, 9, 1, 2, 3, 9]),
        ("edge", [1, 1, 1, 2, 3, 3]),
        ("reflection", [3, 2, 1, 2, 3, 2]),  # the edge is not mirrored
        ("symmetric", [2, 1, 1, 2, 3, 3]),  # the edge is mirrored too
        ("wrap", [2, 3, 1, 2, 3, 1]),
    ],
)
def test_modes_by_hand(mode, expected):
    out = dmljax.pad(np.array([1, 2, 3], np.int32), [2], [1], mode, value=9)
    np.testing.assert_array_equal(out, expected)


def test_page_example_constant_2d():
    x = np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3)
    out = dmljax.pad(x, [0, 1], [2, 0], "DML_PADDING_MODE_CONSTANT", value=-1.5)
    expected = np.full((5, 4), -1.5, np.float32)
    expected[:3, 1:] = x
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("mode", ["reflection", "symmetric", "wrap"])
def test_padding_longer_than_the_input_folds_periodically(mode):
    x = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(dmljax.pad(x, [8], [9], mode), reference.pad(x, [8], [9], mode))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(4))
def test_random_against_oracle(mode, seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4][seed]
    shape = tuple(int(s) for s in rng.integers(1, 5, rank))
    dtype = ["float32", "float16", "int8", "uint16"][seed]
    data = (rng.standard_normal(shape) * 10).astype(dtype)
    start = [int(v) for v in rng.integers(0, 7, rank)]
    end = [int(v) for v in rng.integers(0, 7, rank)]
    out = dmljax.pad(data, start, end, mode, value=3)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), reference.pad(data, start, end, mode, value=3))


def test_integer_value_is_truncated_toward_zero():
    np.testing.assert_array_equal(dmljax.pad(np.zeros(1, np.int8), [1], [1], value=-10.6), [-10, 0, -10])


def test_64bit_under_x64(x64):
    data = np.arange(6, dtype=np.uint64).reshape(2, 3) * 2**40
    out = dmljax.pad(data, [1, 2], [0, 1], "reflection")
    assert out.dtype == jnp.uint64
    np.testing.assert_array_equal(out, reference.pad(data, [1, 2], [0, 1], "reflection"))


def test_jit_and_vmap():
    x = jnp.arange(24.0).reshape(2, 3, 4)
    fn = jax.jit(lambda v: dmljax.pad(v, [1, 2], [2, 1], "symmetric"))
    loop = np.stack([reference.pad(np.asarray(v), [1, 2], [2, 1], "symmetric") for v in x])
    np.testing.assert_array_equal(jax.vmap(fn)(x), loop)


def test_traced_value_in_constant_mode():
    out = jax.jit(lambda x, v: dmljax.pad(x, [1], [1], value=v))(jnp.ones(2), 5.0)
    np.testing.assert_array_equal(out, [5, 1, 1, 5])


@pytest.mark.parametrize("mode", MODES)
def test_gradients(mode):
    x = jnp.arange(1.0, 7.0).reshape(2, 3)
    check_grads(lambda v: dmljax.pad(v, [1, 4], [2, 3], mode), (x,), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(start_padding=[1], end_padding=[0, 0]), ValidationError, r"start_padding must have one entry.*\(1,\)"),
        (dict(start_padding=[-1, 0], end_padding=[0, 0]), ValidationError, r"start_padding\[0\] must be in .*=-1"),
        (dict(start_padding=[0, 0], end_padding=[0, 0], mode="mirror"), ValidationError, r"mode must be .*'mirror'"),
        (dict(start_padding=[0, 0], end_padding=[0, 0], value=300), ValidationError, r"value must fit .*uint8.*300"),
        (dict(start_padding=[0, 0], end_padding=[0, 0], value=[1, 2]), ValidationError, r"value must be a scalar"),
    ],
)
def test_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        dmljax.pad(np.zeros((2, 2), np.uint8), **kwargs)


def test_traced_padding_is_refused_by_name():
    with pytest.raises(ValidationError, match=r"pad: start_padding must be static ints"):
        jax.jit(lambda p: dmljax.pad(jnp.ones(2), p, [0]))(jnp.array([1]))


PAGE_INPUT = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8]], np.float32).reshape(1, 1, 4, 4)
PAGE_OUTPUTS = {  # DML_PADDING1_OPERATOR_DESC's examples 3 and 4: StartPadding {0, 0, 1, 2}, EndPadding {0, 0, 3, 4}
    "reflection": [[7, 6, 5, 6, 7, 8, 7, 6, 5, 6], [3, 2, 1, 2, 3, 4, 3, 2, 1, 2]] * 4,
    "symmetric": [[2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
                  [2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
                  [2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5]],
}  # fmt: skip


@pytest.mark.parametrize("mode", PAGE_OUTPUTS)
def test_page_examples(mode):
    out = dmljax.pad(PAGE_INPUT, [0, 0, 1, 2], [0, 0, 3, 4], mode)
    np.testing.assert_array_equal(out[0, 0], PAGE_OUTPUTS[mode])


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (None, r"pad: value must be a number \(the constant of constant mode\); got value=None"),
        ("3", r"pad: value must be a number .*got value='3'"),
        (b"3", r"pad: value must be a number .*got value=b'3'"),
        (1 + 2j, r"pad: value must be real for input.dtype float32; got value=\(1\+2j\)"),
    ],
)
def test_value_of_the_wrong_kind_is_refused_by_name(value, match):
    """Issue 39 class 10: JAX's raw ValueError/TypeError before (and 1+2j lost its imaginary part)."""
    with pytest.raises(ValidationError, match=match):
        dmljax.pad(np.zeros(2, np.float32), [1], [1], value=value)
    with pytest.raises(ValidationError, match=r"pad: value must be real"):
        jax.jit(lambda v: dmljax.pad(np.zeros(2, np.float32), [1], [1], value=v))(jnp.complex64(1))
    assert dmljax.pad(np.zeros(1, np.complex64), [1], [0], value=1 + 2j)[0] == 1 + 2j
    assert dmljax.pad(np.zeros(1, np.int8), [1], [0], value=jnp.bfloat16(-2.5))[0] == -2


@pytest.mark.parametrize("mode", ["edge", "reflection", "symmetric", "wrap"])
def test_empty_padded_axis_is_refused_by_name(mode):
    """Issue 39 class 10: jnp.pad's raw ValueError (edge: a raw slice TypeError) before. An
    empty axis the mode does not read (no padding there) stays valid, as in constant mode."""
    x = np.zeros((0, 3), np.float32)
    with pytest.raises(ValidationError, match=rf"pad: input.shape\[0\] must be >= 1 where {mode} padding reads it"):
        dmljax.pad(x, [1, 0], [0, 0], mode)
    assert dmljax.pad(x, [0, 1], [0, 2], mode).shape == (0, 6)
    assert dmljax.pad(x, [1, 0], [2, 0]).shape == (3, 3)


def test_numpy_spellings():
    """Issue 39 class 17: np.pad's pad_width and "reflect"; each equals np.pad's result."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(dmljax.pad(x[0], [(5, 5)]), np.pad(x[0], [(5, 5)]))
    for width in (2, (1, 2), [(1, 2), (0, 3)], [[2], [1]]):
        np.testing.assert_array_equal(dmljax.pad(x, width, "reflect"), np.pad(x, width, "reflect"))
        np.testing.assert_array_equal(dmljax.pad(x, width, mode="symmetric"), np.pad(x, width, "symmetric"))
    np.testing.assert_array_equal(dmljax.pad(x, [1, 2], [2, 1], "REFLECT"), np.pad(x, [(1, 2), (2, 1)], "reflect"))
    for width, match in (
        ([(1, 2, 3)], r"start_padding must be np.pad's pad_width .*got start_padding=\[\(1, 2, 3\)\]"),
        ([(1, 2)] * 3, r"start_padding must be np.pad's pad_width"),
        ([(1.5, 2)], r"start_padding\[0\] must be a Python integer; got start_padding\[0\]=1.5"),
    ):
        with pytest.raises(ValidationError, match=match):
            dmljax.pad(x[0], width)
    with pytest.raises(ValidationError, match=r"pad: end_padding must be a sequence of ints .*got end_padding='wrap'"):
        dmljax.pad(x, 1, "wrap", mode="edge")
