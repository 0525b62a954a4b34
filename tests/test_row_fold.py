"""One XLA CPU scatter of whole rows for float mul, max and min (`dmljax._ops.ordered.row_fold`).

Bit for bit the NumPy loop (`tests.reference`) and the off-CPU formulation (config
``cpu_ordered_scatter`` off: the sorted fold, `dmljax._ops.ordered.extremal`), on data whose
result shows the order (NaN payloads, signed zeros, subnormals, products that round); the
same gradients as the off-CPU formulation; and the compiled program is one scatter of the ids
as given, as `jax.ops.segment_max`'s.
"""

import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax._ops.ordered.row_fold import fold_rows
from tests import reference

FLOATS = ["float32", "float16", "bfloat16", "float64"]
TYPES = [pytest.param(d, marks=[] if d == "float32" else [pytest.mark.slow]) for d in FLOATS]
FOLDS = ["prod", "max", "min"]


def np_dtype(dtype):
    return np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)


def with_dtype(dtype):
    return jax.enable_x64(True) if dtype == "float64" else jax.enable_x64(jax.config.jax_enable_x64)


def bits(x):
    return np.asarray(x).tobytes()


def nan_with_payload(dtype, payload):
    """A quiet NaN of ``dtype`` whose low mantissa bits are ``payload`` (sign from its sign)."""
    unsigned = np.dtype(f"uint{8 * dtype.itemsize}")
    quiet = np.asarray(np.nan, dtype).view(unsigned)
    sign = np.asarray(-0.0, dtype).view(unsigned) if payload < 0 else unsigned.type(0)
    return (quiet | unsigned.type(abs(payload)) | sign).view(dtype)


def order_showing(rng, shape, dtype, name):
    """Values whose fold shows the order: for max/min NaNs of distinct payloads, +-0.0, the
    smallest subnormals and normals, ties; for prod factors near 1 with full mantissas."""
    dtype = np_dtype(dtype)
    if name == "prod":
        return (1 + rng.uniform(-0.1, 0.1, shape)).astype(dtype)
    tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    normal = float(ml_dtypes.finfo(dtype).smallest_normal)
    pool = [0.0, -0.0, tiny, -tiny, 2 * tiny, normal, -normal, 1.0, -1.0, np.inf, -np.inf]
    values = rng.choice(np.array(pool), shape).astype(dtype)
    nan = rng.random(shape) < 0.04
    payloads = rng.integers(1, 7, int(nan.sum())) * rng.choice([-1, 1], int(nan.sum()))
    values[nan] = [nan_with_payload(dtype, int(p)) for p in payloads]
    return values


def oracle(name, data, ids, n, mode="drop"):
    with np.errstate(over="ignore", invalid="ignore"):
        return reference.segment(name, np.asarray(data), np.asarray(ids), n, mode)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("name", FOLDS)
def test_rows_fold_in_the_loops_order(name, dtype):
    """2^12 rows of 5 into 32 segments (about 128 a segment), negative and too large ids
    dropped: bit for bit the loop, NaN payloads and zero signs included, on the XLA CPU row
    scatter and on the off-CPU formulation; and not the reversed loop's (the order shows).
    A combiner that compared floats (XLA CPU flushes subnormals there) or kept the earlier of
    equal values fails."""
    rng = np.random.default_rng(60)
    m, n, w = 2**12, 32, 5
    data = order_showing(rng, (m, w), dtype, name)
    ids = rng.integers(-2, n + 2, m).astype(np.int32)
    want = oracle(name, data, ids, n)
    assert bits(oracle(name, data[::-1], ids[::-1], n)) != bits(want)
    f = jax.jit(lambda d, i: getattr(dmljax, f"segment_{name}")(d, i, n))
    with with_dtype(dtype):
        for ordered in (True, False):  # one row scatter; the off-CPU formulation
            with dmljax.config.override(cpu_ordered_scatter=ordered):
                assert bits(f(data, ids)) == bits(want), ordered


@pytest.mark.parametrize("name", FOLDS)
def test_one_element_rows_and_scatter_nd(name):
    """Rows of one element (1-D segments) and `scatter_nd` into a (6, 2, 3) input at pairs of
    indices (negative ones counting from the end): the loop, bit for bit."""
    rng = np.random.default_rng(61)
    data = order_showing(rng, (600,), "float32", name)
    ids = rng.integers(-1, 9, 600).astype(np.int32)
    got = jax.jit(lambda d, i: getattr(dmljax, f"segment_{name}")(d, i, 8))(data, ids)
    assert bits(got) == bits(oracle(name, data, ids, 8))
    reduction = {"prod": "mul"}.get(name, name)
    x = order_showing(rng, (6, 2, 3), "float32", name)
    indices = np.stack([rng.integers(-6, 6, 300), rng.integers(-2, 2, 300)], -1).astype(np.int32)
    updates = order_showing(rng, (300, 3), "float32", name)
    want = reference.scatter_nd(x, indices, updates, reduction=reduction)
    assert bits(dmljax.scatter_nd(x, indices, updates, reduction=reduction)) == bits(want)


@pytest.mark.parametrize("ids_dtype", ["int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
def test_ids_as_given_every_type_and_mode(ids_dtype, mode):
    """The scatter takes the ids as given (drop: negative and too large ones dropped by the
    scatter itself); clip clamps first; 64-bit ids with x64 on, values beyond 32 bits too."""
    rng = np.random.default_rng(62)
    n = 6
    data = order_showing(rng, (64, 3), "float32", "max")
    low = 0 if ids_dtype.startswith("u") or mode == "promise_in_bounds" else -3
    high = n if mode == "promise_in_bounds" else n + 3
    with jax.enable_x64(ids_dtype.endswith("64")):
        ids = rng.integers(low, high, 64).astype(ids_dtype)
        if ids_dtype.endswith("64") and mode is None:
            ids[:4] = [2**40, 2**32 + 1, 2**33, 1] if ids_dtype == "uint64" else [-(2**40), 2**32 + 1, -(2**32) + 1, 1]
        got = jax.jit(lambda d, i: dmljax.segment_max(d, i, n, mode=mode))(data, jnp.asarray(ids))
        want = oracle("max", data, ids, n, "clip" if mode == "clip" else "drop")
        assert bits(got) == bits(want)


def test_fold_rows_drops_every_id_outside_the_rows():
    table = jnp.full((2, 2), -jnp.inf)
    targets = jnp.array([-1, 0, 2, 1, -(2**31)], jnp.int32)
    updates = jnp.arange(10.0).reshape(5, 2)
    np.testing.assert_array_equal(fold_rows(table, targets, updates, "max"), [[2.0, 3.0], [6.0, 7.0]])


# ----- gradients -------------------------------------------------------------------------


@pytest.mark.parametrize("name", FOLDS)
def test_gradients_equal_the_off_cpu_formulations(name):
    """Reverse and forward mode, bit for bit the off-CPU formulation's: max/min's whole
    cotangent to the winner (ties: the last; a NaN: the last NaN; dropped rows: zero), the
    product rule with zeros among the factors."""
    rng = np.random.default_rng(63)
    m, n, w = 96, 5, 3
    if name == "prod":
        data = rng.uniform(-2, 2, (m, w)).astype(np.float32)
        data[rng.random((m, w)) < 0.05] = 0.0
    else:
        data = rng.integers(-2, 3, (m, w)).astype(np.float32)  # many ties
        data[rng.random((m, w)) < 0.05] = np.nan
    ids = rng.integers(-1, n + 1, m).astype(np.int32)
    g = rng.standard_normal((n, w)).astype(np.float32)
    dx = rng.standard_normal((m, w)).astype(np.float32)
    fn = getattr(dmljax, f"segment_{name}")
    grad = jax.jit(jax.grad(lambda d, i: (fn(d, i, n) * g).sum()))
    jvp = jax.jit(lambda d, i, t: jax.jvp(lambda d: fn(d, i, n), (d,), (t,))[1])
    got = {}
    for ordered in (True, False):
        with dmljax.config.override(cpu_ordered_scatter=ordered):
            got[ordered] = bits(grad(data, ids)), bits(jvp(data, ids, dx))
    assert got[True] == got[False]


def test_ties_give_the_whole_cotangent_to_the_last():
    data = jnp.array([[2.0, -0.0], [1.0, 0.0], [2.0, -0.0], [2.0, 1.0]])
    ids = jnp.array([0, 0, 0, 1], jnp.int32)
    d = jax.grad(lambda d: dmljax.segment_max(d, ids, 2).sum())(data)
    np.testing.assert_array_equal(d, [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])


@pytest.mark.slow
@pytest.mark.parametrize("name", FOLDS)
def test_second_order(name):
    rng = np.random.default_rng(64)
    data = rng.standard_normal((12, 3))  # distinct values: max/min differentiable
    ids = rng.integers(0, 4, 12).astype(np.int32)
    with jax.enable_x64(True):
        f = lambda d: getattr(dmljax, f"segment_{name}")(d, ids, 4) ** 3  # noqa: E731
        check_grads(f, (data,), order=2, modes=("fwd", "rev"))


# ----- the compiled program -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
def test_one_scatter_of_the_ids_as_given_on_cpu(name):
    """One XLA CPU device: one scatter of (rows, 4) windows whose indices are the int32 ids
    themselves (no converted copy), as `jax.ops.segment_*` compiles; nothing else but the
    initial value's broadcast."""
    f = jax.jit(lambda d, i: getattr(dmljax, f"segment_{name}")(d, i, 64))
    text = f.lower(jnp.zeros((512, 4)), jnp.zeros(512, jnp.int32)).compile().as_text()
    scatters = re.findall(r"= f32\[64,4\]\{1,0\} scatter\(([^)]*)\)", text)
    assert len(scatters) == 1, text
    assert "convert(" not in text and "compare(" not in text.split("ENTRY")[-1], text


def test_mean_divides_not_multiplies_by_a_reciprocal():
    """Segments of 3, 7, 11, ... rows: the quotient sum / count, bit for bit, where the product
    with the count's reciprocal (XLA's rewrite of a division by a broadcast) differs."""
    rng = np.random.default_rng(65)
    counts = np.array([3, 7, 11, 13, 19, 23, 29, 31] * 4)
    ids = np.repeat(np.arange(counts.size), counts).astype(np.int32)
    data = rng.standard_normal((ids.size, 8)).astype(np.float32)
    total = oracle("sum", data, ids, counts.size)
    quotient = total / counts.astype(np.float32)[:, None]
    assert bits(quotient) != bits(total * (np.float32(1) / counts.astype(np.float32))[:, None])
    got = jax.jit(lambda d, i: dmljax.segment_mean(d, i, counts.size))(data, ids)
    assert bits(got) == bits(quotient)
