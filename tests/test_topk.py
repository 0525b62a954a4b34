"""top_k (DML_TOP_K1, ONNX TopK): the page's examples, ties, NaN and signed zeros, loop oracle, transforms, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference

PAGE = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
TIES = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], np.float32)


@pytest.mark.parametrize(
    ("x", "k", "axis", "largest", "values", "indices"),
    [
        (PAGE, 2, 3, True, [[11, 10], [9, 8], [7, 6]], [[3, 2], [2, 3], [3, 2]]),
        (PAGE, 2, 2, True, [[4, 5, 10, 11], [3, 2, 9, 8]], [[2, 2, 0, 0], [1, 1, 1, 1]]),
        (TIES, 3, 3, True, [[3, 2, 2], [5, 5, 4], [6, 6, 6]], [[3, 1, 2], [2, 3, 1], [0, 1, 2]]),
        (TIES, 3, 3, False, [[1, 2, 2], [3, 4, 5], [6, 6, 6]], [[0, 1, 2], [0, 1, 2], [0, 1, 2]]),
    ],
    ids=["example1", "example2_axis2", "example3_ties", "example4_increasing"],
)
def test_page_examples(x, k, axis, largest, values, indices):
    v, i = dmljax.top_k(x, k, axis, largest=largest)
    np.testing.assert_array_equal(v[0, 0], values)
    np.testing.assert_array_equal(i[0, 0], indices)
    assert i.dtype == jnp.int32 and v.dtype == jnp.float32


def test_nan_above_every_number_and_signed_zeros_tie():
    """onnxruntime's order: NaN first when largest, last when smallest; -0.0 ties +0.0 (lax.top_k: +0 > -0)."""
    x = np.array([1.0, np.nan, 3.0, 3.0, -0.0, 0.0, -np.nan, -np.inf, np.inf], np.float32)
    v, i = dmljax.top_k(x, 9)
    np.testing.assert_array_equal(i, [1, 6, 8, 2, 3, 0, 4, 5, 7])
    assert np.signbit(v[6]) and not np.signbit(v[7])  # values keep their own bits
    _, i = dmljax.top_k(x, 9, largest=False)
    np.testing.assert_array_equal(i, [7, 4, 5, 0, 2, 3, 8, 1, 6])
    assert not np.array_equal(np.asarray(jax.lax.top_k(x, 9)[1]), [1, 6, 8, 2, 3, 0, 4, 5, 7])


@pytest.mark.parametrize("seed", range(16))
def test_random_against_loop(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4][seed % 4]
    shape = tuple(int(s) for s in rng.integers(1, 9 if rank < 3 else 5, rank))
    dtype = ["float32", "float16", "bfloat16", "int32", "uint32", "uint16", "int8", "uint8"][seed % 8]
    x = rng.integers(-4, 5, shape).astype(jnp.dtype(dtype))  # few distinct values: many ties
    if seed % 8 < 3:
        x[rng.random(shape) < 0.2] = np.nan
        x[rng.random(shape) < 0.2] = -0.0
    axis = int(rng.integers(-rank, rank))
    k = int(rng.integers(1, shape[axis] + 1))
    largest = bool(seed & 1)
    v, i = dmljax.top_k(x, k, axis, largest=largest)
    ev, ei = reference.top_k(x, k, axis % rank, largest)
    np.testing.assert_array_equal(np.asarray(i), ei)
    np.testing.assert_array_equal(np.asarray(v).view(np.uint8), ev.view(np.uint8))


def test_64bit_under_x64(x64):
    x = np.array([2**40, -(2**62), 2**40, 7], np.int64)
    v, i = dmljax.top_k(x, 3, largest=False)
    np.testing.assert_array_equal(i, [1, 3, 0])
    y = np.array([0.5, -0.0, 0.0, np.nan, 0.5])
    np.testing.assert_array_equal(dmljax.top_k(y, 5)[1], reference.top_k(y, 5, 0)[1])


def test_jit_vmap_and_grad():
    x = np.random.default_rng(0).standard_normal((4, 3, 7)).astype(np.float32)
    f = jax.jit(dmljax.top_k, static_argnames=("k", "axis", "largest"))
    v, i = f(x, k=2, axis=1, largest=False)
    np.testing.assert_array_equal(i, reference.top_k(x, 2, 1, False)[1])
    g = lambda a: dmljax.top_k(a, 3, 0)  # noqa: E731
    vv, vi = jax.vmap(g, in_axes=2, out_axes=2)(x)
    np.testing.assert_array_equal(vi, np.stack([g(x[..., j])[1] for j in range(7)], 2))
    check_grads(lambda a: dmljax.top_k(a, 3)[0], (x,), order=2, modes=("fwd", "rev"))
    grad = jax.grad(lambda a: dmljax.top_k(a, 2)[0].sum())(jnp.array([1.0, 5.0, 5.0, 2.0]))
    np.testing.assert_array_equal(grad, [0, 1, 1, 0])


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (
            lambda: dmljax.top_k(np.zeros((2, 3)), 4),
            ValidationError,
            r"top_k: k must be in \[1, 3\] \(the axis' size\); got k=4",
        ),
        (lambda: dmljax.top_k(np.zeros(3), 0), ValidationError, r"k must be in \[1, 3\].*got k=0"),
        (lambda: dmljax.top_k(np.zeros(3), 1.5), ValidationError, r"k must be an integer; got k=1.5"),
        (lambda: dmljax.top_k(np.zeros(3), 1, axis=2), ValidationError, r"axis must be in \[-1, 1\); got axis=2"),
        (
            lambda: dmljax.top_k(np.zeros(3), 1, largest="no"),
            ValidationError,
            r"largest must be a bool; got largest='no'",
        ),
        (lambda: dmljax.top_k(np.zeros(3, np.complex64), 1), TypeError, r"top_k: x.dtype must be real"),
        (lambda: jax.jit(dmljax.top_k)(np.zeros(3), 1), ValidationError, r"k must be a static int"),
    ],
)
def test_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_bool_input_orders_false_below_true():
    x = np.array([False, True, False, True])
    v, i = dmljax.top_k(x, 3)
    np.testing.assert_array_equal(i, [1, 3, 0])
    assert v.dtype == np.bool_ and dmljax.argmin(x, 0, select_last_index=True) == 2


# ----- XLA CPU: float32 keys of the same order (config cpu_float_top_k) -----------------------


def _special_rows(rng, dtype, rows, n):
    """Rows drawn from a dtype's special values (NaNs of both signs and other payloads, signed
    zeros, subnormals, infinities, the extremes, small integers): ties everywhere."""
    if dtype in ("float32", "float16", "bfloat16"):
        finfo = jnp.finfo(jnp.dtype(dtype))
        tiny = float(finfo.smallest_subnormal)
        pool = [np.nan, -np.nan, 0.0, -0.0, tiny, -tiny, 2 * tiny, float(finfo.tiny), np.inf, -np.inf]
        pool += [float(finfo.max), float(finfo.min), 1.0, -1.0, 2.0, 0.5, -3.0]
        x = rng.choice(np.array(pool, np.float64), (rows, n)).astype(jnp.dtype(dtype))
        if dtype == "float32":  # a NaN with another payload
            bits = x.view(np.uint32)
            bits[rng.random((rows, n)) < 0.02] = 0xFFC00123
        return x
    info = np.iinfo(dtype) if dtype != "bool" else None
    if info is None:
        return rng.random((rows, n)) < 0.5
    pool = [info.min, info.min + 1, -1 if info.min < 0 else 1, 0, 1, info.max - 1, info.max]
    return rng.choice(np.array(pool, np.int64), (rows, n)).astype(dtype)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int8", "uint16", "bool"])
def test_float32_keys_choose_what_the_integer_keys_choose(dtype, largest):
    """XLA CPU's fast TopK (float32 only) on float32 keys picks exactly the indices of the
    integer order keys (and of the loop oracle): NaNs, signed zeros, subnormals, ties."""
    rng = np.random.default_rng(len(dtype) + largest)
    x = _special_rows(rng, dtype, 6, 1024)
    for k in (1, 8, 100):
        fast = jax.jit(lambda x, k=k: dmljax.top_k(x, k, largest=largest))
        with dmljax.config.override(cpu_float_top_k=False):
            plain = jax.jit(lambda x, k=k: dmljax.top_k(x, k, largest=largest))
            want_v, want_i = plain(x)
        got_v, got_i = fast(x)
        np.testing.assert_array_equal(np.asarray(got_i), np.asarray(want_i))
        assert np.asarray(got_v).tobytes() == np.asarray(want_v).tobytes()
        _, loop_i = reference.top_k(np.asarray(x[:2]), k, 1, largest)
        np.testing.assert_array_equal(np.asarray(got_i)[:2], loop_i)


@pytest.mark.hlo
def test_float32_keys_take_xla_cpus_fast_top_k(cpu):
    """If this fails, XLA CPU's TopK rewrite changed: docs/design/top-k-keys.md."""
    x = jax.ShapeDtypeStruct((64, 1024), jnp.float32)
    text = jax.jit(lambda x: dmljax.top_k(x, 8)).lower(x).compile().as_text()
    assert "TopK" in text and " sort(" not in text
    with dmljax.config.override(cpu_float_top_k=False):
        text = jax.jit(lambda x: dmljax.top_k(x, 8)).lower(x).compile().as_text()
    assert "TopK" not in text


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_subnormals_order_ahead_of_zero(dtype, fast):
    """Issue 39 class 1: XLA CPU flushes subnormals in float comparisons; the keys are decided
    on the bits, so the smallest subnormal is above zero (onnxruntime: `[1 0]`) on both paths."""
    tiny = float(jnp.finfo(jnp.dtype(dtype)).smallest_subnormal)
    x = np.array([0.0, tiny, -tiny, -0.0, 2 * tiny]).astype(jnp.dtype(dtype))
    with dmljax.config.override(cpu_float_top_k=fast):
        for largest in (True, False):
            _, want = reference.top_k(x, 5, 0, largest)
            for f in (dmljax.top_k, jax.jit(dmljax.top_k, static_argnames=("k", "largest"))):
                np.testing.assert_array_equal(np.asarray(f(x, k=5, largest=largest)[1]), want)
    np.testing.assert_array_equal(dmljax.top_k(np.array([0.0, 1e-45], np.float32), 2)[1], [1, 0])
