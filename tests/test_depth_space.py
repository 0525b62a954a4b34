"""space_to_depth and depth_to_space (DML_SPACE_TO_DEPTH1, DML_DEPTH_TO_SPACE1): DCR and CRD."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference

DTYPES = ["float32", "float16", "int8", "uint32", "bool", "bfloat16"]


def test_orders_differ_by_hand():
    x = np.arange(8, dtype=np.int32).reshape(1, 8, 1, 1)
    np.testing.assert_array_equal(dmljax.depth_to_space(x, 2, "DCR")[0, 0], [[0, 2], [4, 6]])
    np.testing.assert_array_equal(dmljax.depth_to_space(x, 2, "CRD")[0, 0], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(dmljax.depth_to_space(x, 2, "DML_DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH")[0, 1],
                                  [[4, 5], [6, 7]])  # fmt: skip


@pytest.mark.parametrize("order", ["DCR", "CRD"])
@pytest.mark.parametrize("seed", range(6))
def test_against_oracle_and_inverse(order, seed):
    rng = np.random.default_rng(seed)
    b = int(rng.integers(1, 4))
    n, c, h, w = (int(v) for v in rng.integers(1, 4, 4))
    data = (rng.standard_normal((n, c, h * b, w * b)) * 10).astype(jnp.dtype(DTYPES[seed]))
    deep = dmljax.space_to_depth(data, b, order)
    assert deep.dtype == data.dtype and deep.shape == (n, c * b * b, h, w)
    np.testing.assert_array_equal(np.asarray(deep), reference.space_to_depth(data, b, order))
    back = dmljax.depth_to_space(deep, b, order)
    np.testing.assert_array_equal(np.asarray(back), reference.depth_to_space(np.asarray(deep), b, order))
    np.testing.assert_array_equal(np.asarray(back), data)


def test_jit_vmap_grads():
    x = jnp.linspace(-1.0, 1.0, 96).reshape(2, 1, 3, 4, 4)
    fn = jax.jit(lambda v: dmljax.space_to_depth(v, 2, "CRD"))
    loop = np.stack([reference.space_to_depth(np.asarray(v), 2, "CRD") for v in x])
    np.testing.assert_array_equal(jax.vmap(fn)(x), loop)
    check_grads(lambda v: dmljax.space_to_depth(v, 2), (x[0],), order=1, modes=["fwd", "rev"])
    deep = x[0].reshape(1, 12, 2, 2)
    check_grads(lambda v: dmljax.depth_to_space(v, 2, "CRD"), (deep,), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: dmljax.space_to_depth(np.ones((2, 4, 4)), 2), r"space_to_depth: input\.ndim must be 4 .*=3"),
        (lambda: dmljax.space_to_depth(np.ones((1, 1, 4, 3)), 2),
         r"input\.shape\[3\] must be a multiple of block_size \(2\); got .*=3"),
        (lambda: dmljax.space_to_depth(np.ones((1, 1, 4, 4)), 0), r"block_size must be in \[1, "),
        (lambda: dmljax.depth_to_space(np.ones((1, 6, 1, 1)), 2),
         r"depth_to_space: input\.shape\[1\] must be a multiple of block_size \*\* 2 \(4\); got .*=6"),
        (lambda: dmljax.depth_to_space(np.ones((1, 4, 1, 1)), 2, "RCD"), r"order must be 'DCR' .*'RCD'"),
    ],
)  # fmt: skip
def test_errors(call, match):
    with pytest.raises(ValidationError, match=match):
        call()


PAGE_INPUT = (np.arange(8)[:, None, None] * 9 + np.array([[0, 1, 2], [3, 4, 5]])).astype(np.uint32)[None]
PAGE_OUTPUTS = {  # DML_DEPTH_TO_SPACE1_OPERATOR_DESC's examples 1 (DCR) and 2 (CRD), BlockSize 2
    "DCR": [[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
            [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65], [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]]],
    "CRD": [[[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29], [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
            [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65], [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]]],
}  # fmt: skip


@pytest.mark.parametrize("order", PAGE_OUTPUTS)
def test_page_examples(order):
    out = dmljax.depth_to_space(PAGE_INPUT, 2, order)
    np.testing.assert_array_equal(out[0], PAGE_OUTPUTS[order])
    np.testing.assert_array_equal(dmljax.space_to_depth(out, 2, order), PAGE_INPUT)
