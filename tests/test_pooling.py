"""max_pool_with_indices and max_unpool (DML_MAX_POOLING2, DML_MAX_UNPOOLING; ONNX MaxPool, MaxUnpool).

Against the NumPy loop oracles (tests/reference.py, bit for bit), torch 2.13 CPU
(``max_pool2d(return_indices=True)``, ``max_unpool2d``: their indices are per (n, c)
plane, ours into the whole input), gradients (the ordered add in output row-major order,
compared with a float32 loop), the index checks and the validation errors.
"""

import ast
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import dmljax
from tests import reference

# (shape, window, strides, dilations, start_padding, end_padding)
POOL_CASES = [
    ((1, 1, 6), (2,), (2,), (1,), (0,), (0,)),
    ((2, 3, 5, 7), (3, 2), (1, 2), (1, 1), (1, 0), (1, 1)),
    ((1, 2, 6, 6), (3, 3), (2, 2), (2, 1), (1, 1), (0, 2)),
    ((2, 1, 4, 5, 3), (2, 2, 2), (1, 2, 1), (1, 1, 2), (0, 1, 1), (1, 0, 1)),
    ((1, 2, 7), (3,), (3,), (2,), (2,), (2,)),
]


def _tie_heavy(shape, dtype=np.float32, seed=0):
    """Few distinct values (ties everywhere), signed zeros, a subnormal and a NaN or two."""
    rng = np.random.default_rng(seed)
    x = rng.choice(np.array([-1.0, -0.0, 0.0, 1.0, 2.0, 1e-45], dtype), size=shape)
    if x.size > 5:
        x.reshape(-1)[rng.integers(0, x.size, 2)] = np.nan
    return x


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8])
def test_max_pool_matches_loop_oracle_bit_for_bit(case, dtype):
    shape, window, strides, dilations, start, end = case
    if np.issubdtype(dtype, np.floating):
        x = _tie_heavy(shape, dtype)
    else:
        x = np.random.default_rng(1).integers(0, 4, shape).astype(dtype)
    want_v, want_i = reference.max_pool(x, window, strides, dilations, start, end)
    v, i = dmljax.max_pool_with_indices(x, window, strides, start, end, dilations)
    assert v.dtype == x.dtype and i.dtype == np.uint32
    np.testing.assert_array_equal(np.asarray(i), want_i)
    assert np.asarray(v).tobytes() == want_v.tobytes()  # bits: -0.0 and NaN included
    jv, ji = jax.jit(dmljax.max_pool_with_indices, static_argnums=(1, 2, 3, 4, 5))(
        x, window, strides, start, end, dilations
    )
    assert np.asarray(jv).tobytes() == want_v.tobytes() and np.array_equal(np.asarray(ji), want_i)


def test_first_of_equal_values_wins_and_keeps_its_bits():
    x = np.array([[[-0.0, 0.0, 0.0, -0.0, 1e-45, 0.0]]], np.float32)
    v, i = dmljax.max_pool_with_indices(x, 2, strides=2)
    assert np.asarray(v).view(np.uint32).tolist() == [[[0x80000000, 0, 1]]]
    assert np.asarray(i).tolist() == [[[0, 2, 4]]]  # the subnormal is above 0.0 (decided on bits)


@pytest.mark.parametrize("case", [c for c in POOL_CASES if len(c[0]) == 4])
def test_max_pool_matches_torch(case):
    torch = pytest.importorskip("torch")
    shape, window, strides, dilations, start, end = case
    if start != end:
        pytest.skip("torch pads symmetrically")
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    x[0, 0, 0, :2] = np.nan
    tv, ti = torch.nn.functional.max_pool2d(torch.from_numpy(x), window, strides, start, dilations, return_indices=True)
    v, i = dmljax.max_pool_with_indices(x, window, strides, start, end, dilations)
    plane = shape[2] * shape[3]
    base = np.arange(shape[0] * shape[1]).reshape(shape[0], shape[1], 1, 1) * plane
    np.testing.assert_array_equal(np.asarray(i), ti.numpy() + base)
    assert np.asarray(v).tobytes() == tv.numpy().tobytes()


def test_max_pool_symmetric_torch_cases():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((2, 3, 9, 8)).astype(np.float32)
    x = np.round(x * 2) / 2  # ties
    for window, stride, pad, dil in [((3, 3), (2, 2), (1, 1), (1, 1)), ((2, 3), (1, 2), (1, 1), (2, 2))]:
        tv, ti = torch.nn.functional.max_pool2d(torch.from_numpy(x), window, stride, pad, dil, return_indices=True)
        v, i = dmljax.max_pool_with_indices(x, window, stride, pad, pad, dil)
        base = np.arange(6).reshape(2, 3, 1, 1) * 72
        np.testing.assert_array_equal(np.asarray(i), ti.numpy() + base)
        assert np.asarray(v).tobytes() == tv.numpy().tobytes()
        if dil == (1, 1):  # torch's unpooling knows no dilation (it only checks the output size)
            tu = torch.nn.functional.max_unpool2d(tv, ti, window, stride, pad, output_size=(9, 8))
            u = dmljax.max_unpool(v, i, x.shape)
            assert np.asarray(u).tobytes() == tu.numpy().tobytes()


def _loop_grad(shape, indices, g):
    out = np.zeros(int(np.prod(shape)), np.float32)
    for t, u in zip(indices.reshape(-1), g.reshape(-1), strict=True):
        out[int(t)] = np.float32(out[int(t)] + u)
    return out.reshape(shape)


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_gradient_is_the_ordered_loop(case):
    shape, window, strides, dilations, start, end = case
    x = np.round(np.random.default_rng(4).standard_normal(shape) * 2).astype(np.float32)  # shared maxima
    args = (window, strides, start, end, dilations)
    _, i = dmljax.max_pool_with_indices(x, *args)
    rng = np.random.default_rng(5)
    g = (rng.standard_normal(i.shape) * 10.0 ** rng.integers(-4, 8, i.shape)).astype(np.float32)
    grad = jax.grad(lambda v: jnp.sum(dmljax.max_pool_with_indices(v, *args)[0] * g))(x)
    assert np.asarray(grad).tobytes() == _loop_grad(shape, np.asarray(i), g).tobytes()


def test_max_pool_gradient_order_matters_and_is_kept():
    """One maximum read by three windows: (1e8 + 1) - 1e8 in output order is 0, not 1."""
    x = np.array([[[0.0, 0.0, 5.0, 0.0, 0.0]]], np.float32)
    g = np.array([[[1e8, 1.0, -1e8]]], np.float32)
    grad = jax.grad(lambda v: jnp.sum(dmljax.max_pool_with_indices(v, 3)[0] * g))(x)
    assert np.asarray(grad).tolist() == [[[0.0, 0.0, 0.0, 0.0, 0.0]]]


@pytest.mark.parametrize(
    "kwargs, param",
    [
        (dict(window=(8,)), "window[0]"),
        (dict(window=(3,), dilations=(3,)), "window[0]"),
        (dict(window=(2,), start_padding=(2,)), "window[0]"),  # a window of padding only
        (dict(window=(2, 2)), "window"),
        (dict(window=(2,), strides=(0,)), "strides"),
        (dict(window=(2,), end_padding=(-1,)), "end_padding"),
    ],
)
def test_max_pool_bad_arguments_name_the_parameter(kwargs, param):
    with pytest.raises(dmljax.ValidationError, match=rf"max_pool_with_indices: {re.escape(param)}"):
        dmljax.max_pool_with_indices(np.zeros((1, 1, 5), np.float32), **kwargs)


def test_max_pool_rejects_small_rank_and_complex():
    with pytest.raises(dmljax.ValidationError, match="x.ndim"):
        dmljax.max_pool_with_indices(np.zeros((4, 5), np.float32), 2)
    with pytest.raises(TypeError, match="max_pool_with_indices"):
        dmljax.max_pool_with_indices(np.zeros((1, 1, 5), np.complex64), 2)


def test_max_unpool_matches_loop_with_duplicates_last_wins():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    indices = rng.integers(0, 30, x.shape)  # many duplicates
    got = dmljax.max_unpool(x, indices, (2, 3, 5))
    assert np.asarray(got).tobytes() == reference.max_unpool(x, indices, (2, 3, 5)).tobytes()
    jitted = jax.jit(dmljax.max_unpool, static_argnums=2)(x, jnp.asarray(indices, jnp.int32), (2, 3, 5))
    assert np.asarray(jitted).tobytes() == np.asarray(got).tobytes()


def test_max_unpool_output_larger_than_the_source():
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32)
    got = dmljax.max_unpool(x, np.array([[[[0, 5], [10, 35]]]], np.uint32), (1, 1, 6, 6))
    want = np.zeros(36, np.float32)
    want[[0, 5, 10, 35]] = [1, 2, 3, 4]
    np.testing.assert_array_equal(np.asarray(got).reshape(-1), want)


def test_max_unpool_round_trip_and_gradient():
    x = np.random.default_rng(7).standard_normal((2, 2, 6, 5)).astype(np.float32)
    v, i = dmljax.max_pool_with_indices(x, (2, 2), (2, 2))
    u = np.asarray(dmljax.max_unpool(v, i, x.shape))
    assert np.array_equal(u.reshape(-1)[np.asarray(i).reshape(-1)], np.asarray(v).reshape(-1))
    g = np.random.default_rng(8).standard_normal(x.shape).astype(np.float32)
    grad = jax.grad(lambda w: jnp.sum(dmljax.max_unpool(w, i, x.shape) * g))(v)
    np.testing.assert_array_equal(np.asarray(grad), g.reshape(-1)[np.asarray(i)])
    dup = np.zeros((1, 1, 3), np.uint32)  # all three land on 0: only the last gets the gradient
    grad = jax.grad(lambda w: jnp.sum(dmljax.max_unpool(w, dup, (1, 1, 2)) * 3.0))(np.ones((1, 1, 3), np.float32))
    assert np.asarray(grad).tolist() == [[[0.0, 0.0, 3.0]]]


def test_max_unpool_index_checks():
    x = np.ones((1, 1, 2), np.float32)
    with pytest.raises(IndexError, match="max_unpool: index 4"):
        dmljax.max_unpool(x, np.array([[[0, 4]]]), (1, 1, 4))
    with pytest.raises(IndexError, match="max_unpool"):
        dmljax.max_unpool(x, jnp.array([[[0, 9]]]), (1, 1, 4))
    traced = jax.jit(lambda i: dmljax.max_unpool(x, i, (1, 1, 4)))(jnp.array([[[1, 9]]]))  # dropped
    assert np.asarray(traced).tolist() == [[[0.0, 1.0, 0.0, 0.0]]]
    clipped = dmljax.max_unpool(x, np.array([[[1, 9]]]), (1, 1, 4), mode="clip")
    assert np.asarray(clipped).tolist() == [[[0.0, 1.0, 0.0, 1.0]]]
    checked = checkify.checkify(jax.jit(lambda i: dmljax.max_unpool(x, i, (1, 1, 4), mode="checked")))
    err, _ = checked(jnp.array([[[1, 9]]]))
    assert err.get() is not None and "max_unpool" in err.get()
    assert np.asarray(dmljax.max_unpool(x, np.array([[[-1, 0]]]), (1, 1, 4))).tolist() == [[[1.0, 0.0, 0.0, 1.0]]]


def test_max_unpool_bad_arguments():
    x = np.ones((1, 1, 2), np.float32)
    with pytest.raises(dmljax.ValidationError, match="max_unpool.*output_shape"):
        dmljax.max_unpool(x, np.zeros((1, 1, 2), np.int32), (1, 4))
    with pytest.raises(dmljax.ValidationError, match="max_unpool.*indices.shape"):
        dmljax.max_unpool(x, np.zeros((1, 2), np.int32), (1, 1, 4))


@pytest.mark.slow
def test_every_pooling_and_fold_contender_computes_what_dmljax_computes():
    """Values and indices bit for bit; gradients and fold: sums in another order (close)."""
    from dmljax.bench import vision
    from dmljax.bench._harness import block

    built = [
        c
        for c in vision.cases([8192])
        if c.name.split()[0] in ("max_pool_with_indices", "max_unpool", "unfold", "fold")
    ]
    assert [c.name.split()[0] for c in built] == ["max_pool_with_indices"] * 2 + ["max_unpool", "unfold", "fold"]
    for case in built:
        ours = block(case.contenders["dmljax"]())
        ours = [np.asarray(a) for a in (ours if isinstance(ours, tuple) else (ours,))]
        for name, fn in case.contenders.items():
            theirs = fn()
            theirs = [
                np.asarray(block(a) if name != "torch" else a)
                for a in (theirs if isinstance(theirs, tuple) else (theirs,))
            ]
            if "bwd" in case.name and name == "torch":  # torch's cotangent is ones
                continue
            if "max_pool" in case.name and "fwd" in case.name and name == "torch":  # indices per (n, c) plane
                n, c, h, w = ast.literal_eval(case.name[case.name.index("(") : case.name.index(")") + 1])
                base = np.arange(n * c).reshape(n, c, 1, 1) * (h * w)
                np.testing.assert_array_equal(ours[0], theirs[0], err_msg=case.name)
                np.testing.assert_array_equal(ours[1], theirs[1] + base, err_msg=case.name)
                continue
            if "bwd" in case.name or "fold" == case.name.split()[0]:
                np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5, err_msg=f"{case.name}: {name}")
            else:
                np.testing.assert_array_equal(ours[0], theirs[0], err_msg=f"{case.name}: {name}")
