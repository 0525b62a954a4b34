"""reverse_subsequences and fill_value_sequence (DML_REVERSE_SUBSEQUENCES, DML_FILL_VALUE_SEQUENCE)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from dmljax._ops.movement import fill_value_sequence as fill_value_sequence_module
from tests import reference

PAGE_INPUT = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)


def test_page_example_1_last_axis():
    lengths = np.array([2, 4, 3], np.uint32).reshape(1, 1, 3, 1)
    out = dmljax.reverse_subsequences(PAGE_INPUT, lengths, axis=3)
    np.testing.assert_array_equal(out[0, 0], [[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]])


def test_page_example_2_lengths_0_and_1_copy():
    lengths = np.array([2, 3, 1, 0], np.uint32).reshape(1, 1, 1, 4)
    out = dmljax.reverse_subsequences(PAGE_INPUT, lengths, axis=2)
    np.testing.assert_array_equal(out[0, 0], [[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]])


@pytest.mark.parametrize("seed", range(6))
def test_reverse_against_oracle(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4, 5, 8][seed]
    shape = tuple(int(s) for s in rng.integers(1, 5 if rank < 5 else 3, rank))
    axis = int(rng.integers(-rank, rank))
    dtype = ["float32", "float16", "int8", "uint32", "bool", "bfloat16"][seed]
    data = (rng.standard_normal(shape) * 10).astype(jnp.dtype(dtype))
    length_shape = list(shape)
    length_shape[axis] = 1
    index_dtype = ["uint32", "int32", "uint64", "int64"][seed % 4]
    lengths = rng.integers(-1 if index_dtype[0] == "i" else 0, shape[axis] + 3, length_shape).astype(index_dtype)
    out = dmljax.reverse_subsequences(data, lengths, axis)
    assert out.dtype == data.dtype
    np.testing.assert_array_equal(np.asarray(out), reference.reverse_subsequences(data, lengths, axis % rank))


def test_huge_uint64_length_clamps_with_x64_off():
    lengths = np.array([[2**40 + 1]], np.uint64)  # narrowing to 32 bits would give length 1
    np.testing.assert_array_equal(dmljax.reverse_subsequences(np.arange(3)[None], lengths, axis=1), [[2, 1, 0]])


def test_reverse_jit_vmap_grad():
    x = jnp.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)
    lengths = jnp.array([[[3], [0], [9]], [[1], [2], [4]]], jnp.int32)
    fn = jax.jit(lambda v, n: dmljax.reverse_subsequences(v, n, axis=-1))
    pairs = zip(np.asarray(x), np.asarray(lengths), strict=True)
    loop = np.stack([reference.reverse_subsequences(v, n, 1) for v, n in pairs])
    np.testing.assert_array_equal(jax.vmap(fn)(x, lengths), loop)
    check_grads(lambda v: dmljax.reverse_subsequences(v, lengths[0], axis=1), (x[0],), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: dmljax.reverse_subsequences(np.ones((2, 3)), np.ones((2, 3), np.int32), 1), ValidationError,
         r"reverse_subsequences: sequence_lengths\.shape must equal .*\(2, 1\); got .*=\(2, 3\)"),
        (lambda: dmljax.reverse_subsequences(np.ones((2, 3)), np.ones((2, 1), np.float32), 1), TypeError,
         r"reverse_subsequences: indices\.dtype must be one of"),
        (lambda: dmljax.reverse_subsequences(np.ones((2, 3)), np.ones((2, 1), np.int32), 2), ValidationError,
         r"axis must be in \[-2, 2\); got axis=2"),
    ],
)  # fmt: skip
def test_reverse_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    ("dtype", "start", "delta"),
    [("float32", 1.5, -0.25), ("float16", 0.1, 0.3), ("int8", 120, 7), ("int8", -128, -1), ("uint8", 250, 3),
     ("int32", 2**31 - 3, 2**30), ("uint16", 0, 65535), ("int16", 5, 0)],
)  # fmt: skip
def test_fill_against_oracle(dtype, start, delta):
    out = dmljax.fill_value_sequence([3, 1, 5], dtype, start, delta)
    assert out.dtype == np.dtype(dtype) and out.shape == (3, 1, 5)
    np.testing.assert_array_equal(np.asarray(out), reference.fill_value_sequence([3, 1, 5], dtype, start, delta))


def test_fill_page_examples():
    np.testing.assert_array_equal(dmljax.fill_value_sequence([1, 1, 1, 3], "float32", 3, 2), [[[[3, 5, 7]]]])
    np.testing.assert_array_equal(dmljax.fill_value_sequence([1, 1, 2, 2], "uint8", 10, -2), [[[[10, 8], [6, 4]]]])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fill_floats_add_in_sequence(dtype):
    out = np.asarray(dmljax.fill_value_sequence([64], dtype, 0.1, 0.1))
    loop = reference.fill_value_sequence([64], dtype, 0.1, 0.1)
    np.testing.assert_array_equal(out, loop)
    closed = (np.float32(0.1) + np.float32(0.1) * np.arange(64, dtype=np.float32)).astype(dtype)
    assert not np.array_equal(loop, closed)  # the rule matters: in-sequence rounding gives other bits


# The float loop's edge cases for its runs (dmljax._ops.movement.float_runs): binade
# boundaries up and down, ties to even (2050 + 3 in float16 steps 1 ulp, then 2 ulps), a
# delta below half an ulp, subnormals and the crossing of zero, overflow to inf, inf - inf,
# NaN, signed zeros, negative deltas.
FLOAT_EDGES = [
    (1.0, 1.0), (0.1, 0.1), (1.5, -0.25), (-3.0, 0.7), (2050.0, 3.0), (2048.0, 1.0), (1.0, 2.0**-11),
    (1.0, 3 * 2.0**-11), (-1.0, 2.0**-11), (1.0, -3 * 2.0**-12), (0.0, 2.0**-24), (6e-8, -(2.0**-25)),
    (3 * 2.0**-24, -(2.0**-24)), (2.0**-14, -(2.0**-26)), (1e-45, 1e-45), (-1e-38, 3e-40), (65504.0, 16.0),
    (60000.0, 100.0), (3.3e38, 1e37), (-3.3e38, -1e37), (1.0, float("inf")), (float("inf"), -float("inf")),
    (float("nan"), 1.0), (1.0, float("nan")), (0.0, -0.0), (-0.0, -0.0), (-0.0, 0.0), (7.0, 0.0), (1e-45, 0.0),
]  # fmt: skip


@pytest.mark.filterwarnings("ignore:overflow", "ignore:invalid")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fill_float_runs_against_loop(dtype, x64):
    rng = np.random.default_rng(7)
    randoms = [(float(a), float(b)) for a, b in rng.standard_normal((12, 2)) * 10.0 ** rng.integers(-6, 4, (12, 2))]
    for start, delta in FLOAT_EDGES + randoms:
        out = np.asarray(dmljax.fill_value_sequence([7, 300], dtype, start, delta))
        loop = reference.fill_value_sequence([7, 300], dtype, start, delta)
        assert out.dtype == loop.dtype, (start, delta)
        np.testing.assert_array_equal(out, loop, err_msg=f"{dtype} start={start} delta={delta}")
        assert np.array_equal(np.signbit(out), np.signbit(loop)), (start, delta)  # -0.0 stays -0.0


@pytest.mark.parametrize(("start", "delta"), [(0.1, 0.1), (-1000.0, 0.001), (1e-30, 3e-39)])
def test_fill_float32_runs_equal_the_lax_loop(start, delta):
    n = 1 << 16  # crosses many binades; the lax loop (one scan step per element) is the formulation's oracle
    out = fill_value_sequence_module.fill_value_sequence_validated((n,), np.dtype(np.float32), start, delta)
    loop = fill_value_sequence_module.float_loop(n, np.dtype(np.float32), start, delta)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint32), np.asarray(loop).view(np.uint32))


def test_fill_64bit_under_x64(x64):
    for dtype, start, delta in (("int64", 2**62, 2**61), ("uint64", 2**64 - 2, 1), ("float64", 0.1, 1e-17)):
        out = dmljax.fill_value_sequence([2, 3], dtype, start, delta)
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(out), reference.fill_value_sequence([2, 3], dtype, start, delta))


def test_fill_under_jit():
    out = jax.jit(lambda: dmljax.fill_value_sequence((4,), "int32", -2, 3))()
    np.testing.assert_array_equal(out, [-2, 1, 4, 7])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: dmljax.fill_value_sequence([2], "int8", 128, 1), ValidationError,
         r"fill_value_sequence: start must be an integer in \[-128, 127\].*=128"),
        (lambda: dmljax.fill_value_sequence([2], "int32", 1, 0.5), ValidationError, r"delta must be an integer"),
        (lambda: dmljax.fill_value_sequence([2, 0], "float32", 1, 1), ValidationError, r"shape\[1\] must be in \[1, "),
        (lambda: dmljax.fill_value_sequence([2], "bool", 1, 1), TypeError, r"dtype must be one of FLOAT64"),
        (lambda: dmljax.fill_value_sequence([2], "int64", 1, 1), TypeError, r"jax_enable_x64 on\); got dtype="),
        (lambda: jax.jit(lambda s: dmljax.fill_value_sequence([2], "float32", s, 1))(1.0), ValidationError,
         r"start must be a static Python number"),
    ],
)  # fmt: skip
def test_fill_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("param", ["start", "delta"])
@pytest.mark.parametrize("value", [None, 1 + 2j, "1", b"1", True, [1], np.array([1.0])])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_fill_start_and_delta_of_the_wrong_kind(param, value, dtype):
    """Issue 39 class 11: None and 1+2j raised float()'s raw TypeError, "1" was taken as 1."""
    args = {"start": 1, "delta": 1, param: value}
    with pytest.raises(ValidationError, match=rf"fill_value_sequence: {param} must be a real number .*got {param}="):
        dmljax.fill_value_sequence([3], dtype, **args)


def test_fill_numpy_scalars_and_huge_integers():
    np.testing.assert_array_equal(dmljax.fill_value_sequence([3], "int32", np.int64(3), np.float32(2.0)), [3, 5, 7])
    assert dmljax.fill_value_sequence([2], "float32", np.array(1.5), jnp.bfloat16(0.5)).tolist() == [1.5, 2.0]
    with pytest.raises(ValidationError, match=r"start must be an integer in \[-128, 127\].*got start=1000000000"):
        dmljax.fill_value_sequence([2], "int8", 10**400, 1)
    with pytest.raises(ValidationError, match=r"start must be an integer in .*got start=nan"):
        dmljax.fill_value_sequence([2], "int8", float("nan"), 1)
    with pytest.raises(ValidationError, match=r"start must be a number that dtype float32 can hold"):
        dmljax.fill_value_sequence([2], "float32", 10**400, 1)
