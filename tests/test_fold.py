"""unfold and fold (DML_UNFOLD, DML_FOLD; torch's unfold/fold, ONNX Col2Im).

Against the NumPy loop oracles (tests/reference.py; fold's sums in the shared loop order,
bit for bit), torch 2.13 CPU ``F.unfold``/``F.fold``, gradients (``jax.vjp`` of unfold is
fold, bit for bit; of fold, unfold), validation errors, and 1 vs 8 host devices.
"""

import re

import jax
import numpy as np
import pytest

import dmljax
from tests import reference
from tests.multidevice import run_json

# (shape, window, strides, dilations, start_padding, end_padding)
CASES = [
    ((1, 1, 5), (2,), (2,), (1,), (0,), (1,)),
    ((2, 3, 5, 6), (3, 2), (1, 1), (1, 1), (1, 0), (1, 1)),
    ((1, 2, 7, 6), (3, 3), (2, 1), (2, 1), (2, 1), (1, 2)),
    ((2, 1, 4, 5, 3), (2, 3, 2), (1, 2, 1), (1, 1, 2), (0, 1, 1), (1, 0, 1)),
]


def _mixed(shape, seed):
    """Values of very different magnitudes, so that the order of a sum shows in its bits."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 8, shape)).astype(np.float32)


def _blocks(case):
    shape, window, strides, dilations, start, end = case
    return [
        (n + a + b - d * (k - 1) - 1) // s + 1
        for n, k, s, d, a, b in zip(shape[2:], window, strides, dilations, start, end, strict=True)
    ]


@pytest.mark.parametrize("case", CASES)
def test_unfold_matches_loop_oracle(case):
    shape, window, strides, dilations, start, end = case
    x = _mixed(shape, 0)
    got = dmljax.unfold(x, window, strides, dilations, start, end)
    want = reference.unfold(x, window, strides, dilations, start, end)
    assert np.asarray(got).tobytes() == want.tobytes() and got.shape == want.shape


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_fold_matches_loop_oracle_bit_for_bit(case, dtype):
    shape, window, strides, dilations, start, end = case
    k, blocks = int(np.prod(window)), int(np.prod(_blocks(case)))
    cols = _mixed((shape[0], shape[1] * k, blocks), 1)
    if dtype == np.int32:
        cols = np.random.default_rng(2).integers(-9, 9, cols.shape, dtype)
    cols = np.clip(cols, -1e4, 1e4).astype(dtype)
    got = dmljax.fold(cols, shape[2:], window, strides, dilations, start, end)
    want = reference.fold(cols, shape[2:], window, strides, dilations, start, end)
    assert got.dtype == cols.dtype and got.shape == want.shape
    assert np.asarray(got).tobytes() == want.tobytes()
    jitted = jax.jit(dmljax.fold, static_argnums=(1, 2, 3, 4, 5, 6))(
        cols, shape[2:], window, strides, dilations, start, end
    )
    assert np.asarray(jitted).tobytes() == want.tobytes()


@pytest.mark.parametrize(
    "case", [c for c in CASES if len(c[0]) == 4] + [((2, 3, 8, 9), (3, 3), (2, 2), (2, 1), (2, 1), (2, 1))]
)
def test_unfold_and_fold_match_torch(case):
    torch = pytest.importorskip("torch")
    shape, window, strides, dilations, start, end = case
    if start != end:
        pytest.skip("torch pads symmetrically")
    x = _mixed(shape, 3)
    tu = torch.nn.functional.unfold(torch.from_numpy(x), window, dilations, start, strides)
    assert np.asarray(dmljax.unfold(x, window, strides, dilations, start, end)).tobytes() == tu.numpy().tobytes()
    cols = _mixed(tu.shape, 4)
    tf = torch.nn.functional.fold(torch.from_numpy(cols), shape[2:], window, dilations, start, strides)
    got = dmljax.fold(cols, shape[2:], window, strides, dilations, start, end)
    assert np.asarray(got).tobytes() == tf.numpy().tobytes()


@pytest.mark.parametrize("case", CASES)
def test_gradient_of_unfold_is_fold_and_of_fold_is_unfold(case):
    shape, window, strides, dilations, start, end = case
    args = (window, strides, dilations, start, end)
    x = _mixed(shape, 5)
    out, vjp = jax.vjp(lambda v: dmljax.unfold(v, *args), x)
    g = _mixed(out.shape, 6)
    (grad,) = vjp(g)
    assert np.asarray(grad).tobytes() == np.asarray(dmljax.fold(g, shape[2:], *args)).tobytes()
    assert np.asarray(grad).tobytes() == reference.fold(g, shape[2:], *args).tobytes()
    _, vjp = jax.vjp(lambda c: dmljax.fold(c, shape[2:], *args), g)
    (back,) = vjp(x)
    assert np.asarray(back).tobytes() == np.asarray(dmljax.unfold(x, *args)).tobytes()


def test_fold_order_shows_in_the_bits():
    """Three windows over one element: (1e8 + 1) - 1e8 summed offset by offset is 0."""
    cols = np.array([[[0.0, 0.0, 1e8], [0.0, 1.0, 0.0], [-1e8, 0.0, 0.0]]], np.float32)  # window 3 over 5
    got = np.asarray(dmljax.fold(cols, (5,), 3))
    assert got[0, 0, 2] == 0.0


@pytest.mark.parametrize(
    "call, param",
    [
        (lambda: dmljax.unfold(np.zeros((1, 1, 4)), 6), "window[0]"),
        (lambda: dmljax.unfold(np.zeros((4, 4)), 2), "x.ndim"),
        (lambda: dmljax.unfold(np.zeros((1, 1, 4)), 2, strides=0), "strides"),
        (lambda: dmljax.fold(np.zeros((1, 3, 3)), (4,), 2), "cols.shape[1]"),
        (lambda: dmljax.fold(np.zeros((1, 2, 4)), (4,), 2), "cols.shape[2]"),
        (lambda: dmljax.fold(np.zeros((1, 2, 3)), (0,), 2), "output_spatial_shape"),
        (lambda: dmljax.fold(np.zeros((2, 3)), (4,), 2), "cols.ndim"),
    ],
)
def test_bad_arguments_name_the_parameter(call, param):
    with pytest.raises(dmljax.ValidationError, match=re.escape(param)):
        call()


SHARDED_SCRIPT = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
import dmljax
rng = np.random.default_rng(0)
x = (rng.standard_normal((8, 2, 9, 7)) * 10.0 ** rng.integers(-6, 8, (8, 2, 9, 7))).astype(np.float32)
args = ((3, 3), (1, 2), (1, 1), (1, 1), (1, 0))
mesh = jax.make_mesh((jax.device_count(),), ("b",), axis_types=(jax.sharding.AxisType.Auto,))
xs = jax.device_put(x, NamedSharding(mesh, P("b")))
cols = jax.jit(lambda v: dmljax.unfold(v, *args))(xs)
folded = jax.jit(lambda c: dmljax.fold(c, (9, 7), *args))(cols * 3.0)
w = (rng.standard_normal((8, 2, 7, 5)) * 10.0 ** rng.integers(-6, 8, (8, 2, 7, 5))).astype(np.float32)
rounded = jax.device_put(np.round(x / 1e7), NamedSharding(mesh, P("b")))  # shared maxima
pool = lambda v: jnp.sum(dmljax.max_pool_with_indices(v, (3, 3), (1, 1))[0] * w)
pooled = jax.jit(jax.grad(pool))(rounded)
print(json.dumps({k: np.asarray(v).tobytes().hex() for k, v in
                  dict(unfold=cols, fold=folded, max_pool_grad=pooled).items()}))
"""


@pytest.mark.slow
def test_one_and_eight_host_devices_give_the_same_bits():
    one, eight = run_json(SHARDED_SCRIPT, devices=1), run_json(SHARDED_SCRIPT, devices=8)
    assert one.keys() == eight.keys() == {"unfold", "fold", "max_pool_grad"}
    for key in one:
        assert one[key] == eight[key], key
