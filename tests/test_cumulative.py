"""cumulative_sum / cumulative_product (DML_CUMULATIVE_SUMMATION/PRODUCT, ONNX CumSum): in order, bit for bit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from dmljax._ops.ordered.cumulative import in_order, in_order_last
from tests import reference

PAGE_INPUT = np.array([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]], np.float32)

# DirectML's page examples: (axis, reverse, exclusive) -> output.
SUM_EXAMPLES = {
    (3, False, False): [[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]],
    (3, False, True): [[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]],
    (3, True, False): [[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]],
    (2, False, False): [[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]],
}
PRODUCT_EXAMPLES = {
    (3, False, False): [[2, 2, 6, 30], [3, 24, 168, 504], [9, 54, 108, 432]],
    (3, False, True): [[1, 2, 2, 6], [1, 3, 24, 168], [1, 9, 54, 108]],
    (3, True, False): [[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]],
    (2, False, False): [[2, 1, 3, 5], [6, 8, 21, 15], [54, 48, 42, 60]],
}


@pytest.mark.parametrize(
    ("fn", "examples"), [(dmljax.cumulative_sum, SUM_EXAMPLES), (dmljax.cumulative_prod, PRODUCT_EXAMPLES)]
)
def test_page_examples(fn, examples):
    for (axis, reverse, exclusive), expected in examples.items():
        out = fn(PAGE_INPUT, axis, reverse=reverse, exclusive=exclusive)
        np.testing.assert_array_equal(out, np.array(expected, np.float32)[None, None])


def test_float32_row_of_257_is_added_in_sequence():
    """jnp.cumsum's parallel scan differs from the loop here; the loop is what DirectML and onnxruntime run."""
    row = (np.random.default_rng(0).standard_normal(257) * 100).astype(np.float32)
    expected = reference.cumulative(row, 0)
    np.testing.assert_array_equal(np.asarray(dmljax.cumulative_sum(row)), expected)
    np.testing.assert_array_equal(np.asarray(jax.jit(dmljax.cumulative_sum)(row)), expected)
    assert not np.array_equal(np.asarray(jnp.cumsum(row)), expected)  # why this operator exists


@pytest.mark.parametrize("seed", range(16))
def test_random_against_loop(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4][seed % 4]
    shape = tuple(int(s) for s in rng.integers(1, 9 if rank < 3 else 5, rank))
    dtype = ["float32", "float16", "bfloat16", "int32", "uint32", "uint16", "int8", "uint8"][seed % 8]
    x = (rng.standard_normal(shape) * (3 if seed % 2 else 30)).astype(jnp.dtype(dtype))
    axis = int(rng.integers(-rank, rank))
    reverse, exclusive, product = bool(seed & 1), bool(seed & 2), bool(seed & 4)
    fn = dmljax.cumulative_prod if product else dmljax.cumulative_sum
    out = fn(x, axis, reverse=reverse, exclusive=exclusive)
    expected = reference.cumulative(x, axis % rank, reverse, exclusive, product)
    assert out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_array_equal(np.asarray(out).view(np.uint8), expected.view(np.uint8))


@pytest.mark.filterwarnings("ignore:overflow", "ignore:invalid")
@pytest.mark.parametrize("width", [1, 8, 9, 61])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "uint16"])
def test_last_axis_blocks_against_loop_and_lax_form(width, dtype):
    """The last axis runs in blocks of columns on XLA CPU (`in_order_last`): the loop's bits, the lax form's bits."""
    rng = np.random.default_rng(width)
    x = (rng.standard_normal((2, 3, width)) * 40).astype(jnp.dtype(dtype))
    if x.dtype.kind == "f":  # -0.0 first, a NaN, an infinity and an overflow in other rows
        x[0, 0, 0], x[0, 1, width // 2], x[1, 0, -1] = -0.0, np.nan, np.inf
        x[1, 2] = jnp.finfo(x.dtype).max / 2 if width > 2 else x[1, 2]
    for reverse, exclusive, product in np.ndindex(2, 2, 2):
        flags = {"reverse": bool(reverse), "exclusive": bool(exclusive), "product": bool(product)}
        blocked = np.asarray(in_order_last(jnp.asarray(x), **flags))
        moved = np.moveaxis(np.asarray(in_order(jnp.moveaxis(jnp.asarray(x), -1, 0), **flags)), 0, -1)
        expected = reference.cumulative(x, 2, flags["reverse"], flags["exclusive"], flags["product"])
        public = dmljax.cumulative_prod if product else dmljax.cumulative_sum
        out = np.asarray(public(x, -1, reverse=bool(reverse), exclusive=bool(exclusive)))
        for got in (blocked, moved, out):
            np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8), expected.view(np.uint8), str(flags))


def test_negative_zero_first_and_integer_wraparound():
    np.testing.assert_array_equal(np.signbit(dmljax.cumulative_sum(np.array([-0.0, 1.0], np.float32))), [True, False])
    big = np.array([2**31 - 1, 1, 1], np.int32)
    np.testing.assert_array_equal(dmljax.cumulative_sum(big), reference.cumulative(big, 0))
    np.testing.assert_array_equal(dmljax.cumulative_prod(np.array([256, 256, 256], np.uint16)), [256, 0, 0])


def test_float64_under_x64(x64):
    x = np.random.default_rng(1).standard_normal((3, 300))
    out = dmljax.cumulative_sum(x, 1, reverse=True)
    assert out.dtype == jnp.float64
    np.testing.assert_array_equal(out, reference.cumulative(x, 1, reverse=True))


def test_jit_and_vmap():
    x = (np.random.default_rng(2).standard_normal((4, 5, 70)) * 10).astype(np.float32)
    f = jax.jit(dmljax.cumulative_sum, static_argnames=("axis", "reverse", "exclusive"))
    np.testing.assert_array_equal(f(x, axis=-1, reverse=True), reference.cumulative(x, 2, True))
    g = lambda v: dmljax.cumulative_prod(v, 1, exclusive=True)  # noqa: E731
    np.testing.assert_array_equal(jax.vmap(g)(x), np.stack([g(v) for v in x]))
    np.testing.assert_array_equal(jax.vmap(g, in_axes=2, out_axes=2)(x), np.stack([g(x[..., i]) for i in range(70)], 2))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("exclusive", [False, True])
def test_gradients(reverse, exclusive, x64):
    x = np.random.default_rng(3).standard_normal((3, 5))
    for fn in (dmljax.cumulative_sum, dmljax.cumulative_prod):
        check_grads(
            lambda v, fn=fn: fn(v, 1, reverse=reverse, exclusive=exclusive), (x,), order=2, modes=("fwd", "rev")
        )
    # The adjoint of a cumulative sum is the cumulative sum the other way.
    ct = np.random.default_rng(4).standard_normal((3, 5))
    _, vjp = jax.vjp(lambda v: dmljax.cumulative_sum(v, 1, reverse=reverse, exclusive=exclusive), x)
    np.testing.assert_allclose(vjp(ct)[0], reference.cumulative(ct, 1, not reverse, exclusive), rtol=1e-12)


def test_product_gradient_with_zeros_is_exact():
    x = jnp.array([2.0, 0.0, 3.0, 0.0, 5.0])
    jac = jax.jacrev(dmljax.cumulative_prod)(x)
    expected = np.zeros((5, 5), np.float32)
    for i in range(5):
        for j in range(i + 1):
            expected[i, j] = np.prod([x[k] for k in range(i + 1) if k != j])
    np.testing.assert_array_equal(jac, expected)
    assert np.isfinite(jac).all()


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (
            lambda: dmljax.cumulative_sum(np.zeros(3), axis=1),
            ValidationError,
            r"cumulative_sum: axis must be in \[-1, 1\); got axis=1",
        ),
        (lambda: dmljax.cumulative_sum(np.float32(1)), ValidationError, r"x.ndim must be in \[1, 8\]; got x.ndim=0"),
        (
            lambda: dmljax.cumulative_prod(np.zeros(3), reverse=1),
            ValidationError,
            r"cumulative_product: reverse must be a bool; got reverse=1",
        ),
        (
            lambda: dmljax.cumulative_sum(np.zeros(3, bool)),
            TypeError,
            r"cumulative_sum: x.dtype must be numeric \(not bool\); got x.dtype=dtype\('bool'\)",
        ),
        (lambda: jax.jit(dmljax.cumulative_sum)(np.zeros(3), 0), ValidationError, r"axis must be a static int"),
    ],
)
def test_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()
