"""segment_sum, segment_prod, segment_max, segment_min, segment_mean: JAX's segment API in ONNX's loop order.

Against the NumPy loop (`tests.reference.segment`), bit for bit, with order-sensitive float
data; under jit, vmap, grad, 8 sharded host devices, `jax.export` with symbolic sizes and
`dmljax.onnx.export` with onnxruntime; against `jax.ops.segment_*` where that is exact.
"""

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export
from jax.experimental import checkify
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference
from tests.multidevice import run_json

NAMES = ["sum", "prod", "max", "min", "mean"]
FUNCTIONS = {name: getattr(dmljax, f"segment_{name}") for name in NAMES}
JAX_OPS = {"sum": jax.ops.segment_sum, "prod": jax.ops.segment_prod, "max": jax.ops.segment_max}
JAX_OPS["min"] = jax.ops.segment_min

FLOATS = ["float32", "float16", "bfloat16"]
INTEGERS = ["int32", "int16", "int8", "uint32", "uint16", "uint8"]


def data_for(rng, dtype, shape):
    """Order-sensitive floats (magnitudes over many decades, no zeros), small integers, random bools."""
    dtype = jnp.dtype(dtype)
    if dtype == np.dtype(bool):
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -2
        return rng.integers(low, 3, shape).astype(dtype)
    top = 4 if dtype.itemsize == 2 else 8
    values = rng.standard_normal(shape) * 10.0 ** rng.integers(-2, top, shape)
    values = np.where(values == 0, 1.0, values)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def ids_for(rng, rows, num_segments, dtype="int32", bad=True):
    """Ids with duplicates and empty segments; negative and too large ones when ``bad``."""
    low = -2 if bad and np.dtype(dtype).kind == "i" else 0
    high = num_segments + (2 if bad else 0)
    return rng.integers(low, high, rows).astype(dtype)


def assert_same(got, want):
    """Same type, shape and bits (NaNs anywhere NaN is, their payload aside)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind in "fcV":
        real = (
            (lambda a: a.view(np.float32 if a.dtype == np.complex64 else np.float64))
            if want.dtype.kind == "c"
            else (lambda a: a)
        )
        g, w = real(got), real(want)
        nan = np.isnan(w.astype(np.float32) if w.dtype.itemsize == 2 else w)
        assert np.array_equal(nan, np.isnan(g.astype(np.float32) if g.dtype.itemsize == 2 else g)), (got, want)
        g, w = g[~nan], w[~nan]
        assert g.tobytes() == w.tobytes(), (got, want)
    else:
        np.testing.assert_array_equal(got, want)


def assert_matches_loop(name, got, data, ids, n, mode="drop"):
    """`assert_result` against the loop."""
    assert_result(name, got, oracle(name, data, ids, n, mode))


def assert_result(name, got, want):
    """`assert_same`, with two documented exceptions that are not order: a complex product
    only to rounding (XLA's complex multiply may fuse (FMA) where NumPy's does not, one ulp
    apart), and on a GPU `segment_mean` to 2 ulp: its sums are the loop's, but XLA:GPU's
    float32 division is ``div.full.f32``, not correctly rounded (docs/semantics.md)."""
    want = np.asarray(want)
    if name == "prod" and want.dtype.kind == "c":
        np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype == np.complex64 else 1e-13)
    elif name == "mean" and jax.default_backend() == "gpu" and want.dtype == np.float32:
        np.testing.assert_array_max_ulp(np.asarray(got), want, maxulp=2)
    else:
        assert_same(got, want)


def oracle(name, data, ids, n, mode="drop"):
    with np.errstate(over="ignore"):  # integer sums and products wrap, as JAX's do
        return reference.segment(name, np.asarray(data), np.asarray(ids), n, mode)


def applies(name, dtype):
    kind = jnp.dtype(dtype).kind
    return not ((name in ("max", "min") and kind == "c") or (name == "mean" and kind in "iub"))


# ----- the loop's result, every type, both formulations ----------------------------------------


@pytest.mark.parametrize("ordered_scatter", [True, False], ids=["cpu scatter", "rounds"])
@pytest.mark.parametrize("name", NAMES)
def test_against_the_loop_every_type(name, ordered_scatter):
    rng = np.random.default_rng(NAMES.index(name))
    with dmljax.config.override(cpu_ordered_scatter=ordered_scatter):
        for dtype in FLOATS + INTEGERS + ["bool", "complex64"]:
            if not applies(name, dtype):
                continue
            shape = (13,) if dtype != "float32" else (13, 2, 3)
            data, ids = data_for(rng, dtype, shape), ids_for(rng, 13, 5)
            assert_matches_loop(name, FUNCTIONS[name](data, ids, 5), data, ids, 5)


@pytest.mark.parametrize("name", NAMES)
def test_64_bit_types(name, x64):
    rng = np.random.default_rng(3)
    for dtype in ["float64", "int64", "uint64", "complex128"]:
        if applies(name, dtype):
            data, ids = data_for(rng, dtype, (11, 2)), ids_for(rng, 11, 4, "int64")
            assert_matches_loop(name, FUNCTIONS[name](data, ids, 4), data, ids, 4)


@pytest.mark.parametrize("ids_dtype", ["int32", "int64", "uint32", "uint64"])
def test_every_id_type(ids_dtype):
    rng = np.random.default_rng(4)
    data = data_for(rng, "float32", (20,))
    ids = ids_for(rng, 20, 6, ids_dtype)
    for name in NAMES:
        assert_result(name, FUNCTIONS[name](data, ids, 6), oracle(name, data, ids, 6))
        assert_result(name, FUNCTIONS[name](data, jnp.asarray(ids), 6), oracle(name, data, ids, 6))


def test_the_order_is_the_index_order():
    u = np.array([1e8, 1.0, -1e8, 1e8, -1e8, 1.0], np.float32)
    ids = np.array([0, 0, 0, 1, 1, 1])
    for ordered in (True, False):
        with dmljax.config.override(cpu_ordered_scatter=ordered):
            np.testing.assert_array_equal(dmljax.segment_sum(u, ids), [0.0, 1.0])
            np.testing.assert_array_equal(dmljax.segment_mean(u, ids), [0.0, np.float32(1) / np.float32(3)])


def test_empty_segments_get_jax_initial_values():
    data = jnp.array([2.0, 3.0], jnp.float32)
    ids = np.array([1, 1])
    np.testing.assert_array_equal(dmljax.segment_sum(data, ids, 3), [0, 5, 0])
    np.testing.assert_array_equal(dmljax.segment_prod(data, ids, 3), [1, 6, 1])
    np.testing.assert_array_equal(dmljax.segment_max(data, ids, 3), [-np.inf, 3, -np.inf])
    np.testing.assert_array_equal(dmljax.segment_min(data, ids, 3), [np.inf, 2, np.inf])
    np.testing.assert_array_equal(dmljax.segment_mean(data, ids, 3), [0, 2.5, 0])
    for name in ("max", "min"):  # JAX's own empty-segment values, integers included
        for dtype in ("float32", "int32", "uint8"):
            ours = FUNCTIONS[name](data.astype(dtype), ids, 3)
            assert_same(ours, JAX_OPS[name](data.astype(dtype), ids, 3))


def test_no_segments_and_no_rows():
    assert dmljax.segment_sum(jnp.ones((3, 2)), np.array([0, 1, 0]), 0).shape == (0, 2)
    assert dmljax.segment_sum(jnp.ones((0, 2)), np.zeros(0, np.int32)).shape == (0, 2)
    np.testing.assert_array_equal(dmljax.segment_max(jnp.ones((0,)), np.zeros(0, np.int32), 2), [-np.inf, -np.inf])
    np.testing.assert_array_equal(dmljax.segment_mean(jnp.ones((0,)), np.zeros(0, np.int32), 2), [0, 0])


@pytest.mark.parametrize("name", list(JAX_OPS))
def test_integers_equal_jax_ops_exactly(name):
    rng = np.random.default_rng(5)
    data, ids = data_for(rng, "int32", (30, 3)), ids_for(rng, 30, 7)
    assert_same(FUNCTIONS[name](data, ids, 7), JAX_OPS[name](data, ids, 7))


def test_num_segments_none_is_max_id_plus_one():
    data = jnp.arange(4.0)
    np.testing.assert_array_equal(dmljax.segment_sum(data, np.array([0, 2, 2, -1])), [0, 0, 3])
    np.testing.assert_array_equal(dmljax.segment_sum(data, jnp.array([3, 0, 0, 0])), [6, 0, 0, 0])
    assert dmljax.segment_sum(data, np.array([-1, -2, -1, -1])).shape == (0,)


# ----- modes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "drop", "clip"])
def test_modes_eager_and_traced(mode):
    rng = np.random.default_rng(6)
    data, ids = data_for(rng, "float32", (25, 2)), ids_for(rng, 25, 4)
    ref_mode = "clip" if mode == "clip" else "drop"
    for name in NAMES:
        f = FUNCTIONS[name]
        want = oracle(name, data, ids, 4, ref_mode)
        assert_result(name, f(data, ids, 4, mode=mode), want)
        assert_result(name, jax.jit(lambda d, i, f=f: f(d, i, 4, mode=mode))(data, ids), want)


def test_negative_ids_never_count_from_the_end():
    data = jnp.array([1.0, 2.0, 4.0])
    ids = np.array([-1, -3, 0], np.int32)
    np.testing.assert_array_equal(dmljax.segment_sum(data, ids, 3), [4, 0, 0])
    np.testing.assert_array_equal(dmljax.segment_sum(data, ids, 3, mode="clip"), [7, 0, 0])
    np.testing.assert_array_equal(jax.jit(lambda i: dmljax.segment_sum(data, i, 3))(ids), [4, 0, 0])
    np.testing.assert_array_equal(jax.ops.segment_sum(data, ids, 3), [4, 0, 0])  # JAX's convention
    np.testing.assert_array_equal(jax.ops.segment_sum(data, ids, 3, mode="clip"), [7, 0, 0])


def test_64_bit_host_ids_are_decided_at_full_width():
    """With x64 off, int64 ids beyond 32 bits are dropped or clipped, never truncated."""
    data = jnp.array([1.0, 2.0, 4.0, 8.0])
    ids = np.array([2**40, -(2**40), 1, 2**32 + 1], np.int64)
    np.testing.assert_array_equal(dmljax.segment_sum(data, ids, 3), [0, 4, 0])
    np.testing.assert_array_equal(dmljax.segment_sum(data, ids, 3, mode="clip"), [2, 4, 9])
    with pytest.raises(
        ValidationError, match=r"num_segments must be at most 4294967295 .*got num_segments=1099511627777"
    ):
        dmljax.segment_sum(data, ids)


def test_promise_in_bounds_on_valid_ids():
    data, ids = jnp.arange(6.0), np.array([2, 0, 2, 1, 0, 2])
    np.testing.assert_array_equal(dmljax.segment_sum(data, ids, 3, mode="promise_in_bounds"), [5, 3, 7])


def test_checked_mode_raises_for_concrete_ids():
    data = jnp.arange(3.0)
    message = r"segment_sum: index -1 is out of bounds for axis 0 with size 3 \(segment_ids\[1\]; valid range \[0, 2\]"
    with pytest.raises(IndexError, match=message):
        dmljax.segment_sum(data, np.array([0, -1, 5]), 3, mode="checked")
    with pytest.raises(IndexError, match=r"segment_max: index 5 is out of bounds .*\(segment_ids\[2\]; valid range"):
        dmljax.segment_max(data, jnp.array([0, 1, 5]), 3, mode="checked")
    np.testing.assert_array_equal(dmljax.segment_sum(data, np.array([0, 2, 2]), 3, mode="checked"), [0, 0, 3])


def test_checked_mode_under_checkify():
    f = checkify.checkify(jax.jit(lambda d, i: dmljax.segment_sum(d, i, 3, mode="checked")))
    error, out = f(jnp.arange(3.0), jnp.array([0, 2, 2]))
    assert error.get() is None
    np.testing.assert_array_equal(out, [0, 0, 3])
    error, _ = f(jnp.arange(3.0), jnp.array([0, 7, 2]))
    message = "segment_sum: index 7 is out of bounds for axis 0 with size 3 (segment_ids[1]; valid range [0, 2])."
    assert message in error.get()


@pytest.mark.parametrize("name", NAMES)
def test_checked_mode_under_plain_jit_is_refused_by_name(name):
    """Issue 39 class 3: JAX's raw "unfunctionalized checkify.check" ValueError before; now
    dmljax's ValidationError naming the function and the mode, as scatter_nd's."""
    f = jax.jit(lambda d, i: FUNCTIONS[name](d, i, 3, mode="checked"))
    with pytest.raises(
        ValidationError, match=rf"segment_{name}: mode must run under jax.experimental.checkify.checkify"
    ):
        f(jnp.arange(3.0), jnp.array([0, 1, 2]))


# ----- the promises --------------------------------------------------------------------------


@pytest.mark.parametrize("ordered_scatter", [True, False], ids=["cpu scatter", "rounds"])
@pytest.mark.parametrize("shape", [(40,), (40, 3), (40, 2, 2)])
def test_indices_are_sorted(shape, ordered_scatter):
    """Sorted ids with dropped ones at both ends: the promise changes the layout, not the result."""
    rng = np.random.default_rng(7)
    data = data_for(rng, "float32", shape)
    ids = np.sort(ids_for(rng, 40, 6))
    with dmljax.config.override(cpu_ordered_scatter=ordered_scatter):
        for name in NAMES:
            f = FUNCTIONS[name]
            want = oracle(name, data, ids, 6)
            assert_result(name, f(data, ids, 6, indices_are_sorted=True), want)
            assert_result(name, jax.jit(lambda d, i, f=f: f(d, i, 6, True))(data, ids), want)


def test_unique_indices_is_one_plain_scatter():
    rng = np.random.default_rng(8)
    data = data_for(rng, "float32", (5, 2))
    ids = np.array([3, 0, 9, 1, 4])
    for name in NAMES:
        assert_result(name, FUNCTIONS[name](data, ids, 6, unique_indices=True), oracle(name, data, ids, 6))
    text = jax.jit(lambda d: dmljax.segment_sum(d, ids, 6, unique_indices=True)).lower(data).as_text()
    assert "stablehlo.while" not in text and text.count('"stablehlo.scatter"') == 1


# ----- transformations -----------------------------------------------------------------------


def test_jit_with_traced_ids_needs_num_segments():
    f = jax.jit(lambda d, i: dmljax.segment_sum(d, i))
    with pytest.raises(ValidationError, match=r"segment_sum: num_segments must be given .*; got num_segments=None"):
        f(jnp.ones(3), jnp.array([0, 1, 1]))


@pytest.mark.parametrize("name", NAMES)
def test_vmap_against_a_loop(name):
    rng = np.random.default_rng(9)
    data = data_for(rng, "float32", (3, 12, 2))
    ids = np.stack([ids_for(rng, 12, 4) for _ in range(3)])
    f = FUNCTIONS[name]
    loop = np.stack([np.asarray(f(data[b], ids[b], 4)) for b in range(3)])
    assert_same(jax.vmap(lambda d, i: f(d, i, 4))(data, ids), loop)
    shared = np.stack([np.asarray(f(data[b], ids[0], 4)) for b in range(3)])
    assert_same(jax.vmap(lambda d: f(d, ids[0], 4))(data), shared)


def test_gradients_of_sum_to_second_order(x64):
    rng = np.random.default_rng(10)
    data = rng.uniform(-2.0, 2.0, (9, 2))
    ids = ids_for(rng, 9, 4)
    check_grads(lambda d: dmljax.segment_sum(d, ids, 4), (data,), order=2, modes=["fwd", "rev"])
    check_grads(lambda d: dmljax.segment_sum(d, ids, 4) ** 2, (data,), order=2, modes=["fwd", "rev"])
    g = jax.grad(lambda d: (dmljax.segment_sum(d, ids, 4) * np.arange(1.0, 5.0)[:, None]).sum())(data)
    valid = (ids >= 0) & (ids < 4)
    np.testing.assert_array_equal(g, np.where(valid, ids + 1.0, 0.0)[:, None] * np.ones((1, 2)))
    hessian = jax.hessian(lambda d: (dmljax.segment_sum(d, ids, 4) ** 2).sum())(data)
    same = (
        (ids[:, None] == ids[None, :]) & valid[:, None] & valid[None, :]
    )  # d2/dd_i dd_j: 2 where i, j share a segment
    want = 2.0 * same[:, None, :, None] * np.eye(2)[None, :, None, :]
    np.testing.assert_array_equal(hessian, want)


@pytest.mark.parametrize("name", ["prod", "mean", "max", "min"])
def test_gradients_check(name):
    rng = np.random.default_rng(11)
    data = rng.uniform(0.5, 2.0, (8, 2)).astype(np.float32)  # distinct values: no ties
    ids = np.array([0, 2, 2, 0, 1, 2, -1, 5])
    check_grads(lambda d: FUNCTIONS[name](d, ids, 3), (data,), order=1, modes=["fwd", "rev"], atol=1e-2, rtol=1e-2)


def test_mean_gradient_is_one_over_the_count():
    ids = np.array([0, 0, 0, 2, -1])
    g = jax.grad(lambda d: dmljax.segment_mean(d, ids, 3).sum())(jnp.ones(5))
    np.testing.assert_array_equal(g, np.array([1 / 3, 1 / 3, 1 / 3, 1, 0], np.float32))


# ----- max/min: NaN and signed zeros (the extremal policy) -----------------------------------

EXTREMAL_CASES = {
    "nan first": (np.array([np.nan, 2.0], np.float32), np.array([0, 0])),
    "nan last": (np.array([2.0, np.nan], np.float32), np.array([0, 0])),
    "signed zeros": (np.array([0.0, -0.0, -0.0, 0.0], np.float32), np.array([0, 0, 1, 1])),
}


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("case", list(EXTREMAL_CASES))
def test_nan_and_signed_zeros_follow_the_loop(case, name):
    data, ids = EXTREMAL_CASES[case]
    want = oracle(name, data, ids, 2)
    assert_same(FUNCTIONS[name](data, ids, 2), want)
    assert_same(jax.jit(lambda d: FUNCTIONS[name](d, ids, 2))(data), want)


# ----- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        (
            {"segment_ids": np.array([0.0, 1.0, 1.0])},
            TypeError,
            r"segment_sum: segment_ids.dtype must be one of .*float64",
        ),
        (
            {"segment_ids": np.zeros((3, 1), np.int32)},
            ValidationError,
            r"segment_ids.ndim must be 1 .*got segment_ids.ndim=2",
        ),
        (
            {"segment_ids": np.zeros(4, np.int32)},
            ValidationError,
            r"segment_ids.shape must equal \(data.shape\[0\],\) \(3,\).*\(4,\)",
        ),
        ({"num_segments": -1}, ValidationError, r"num_segments must be >= 0; got num_segments=-1"),
        ({"num_segments": 2.5}, ValidationError, r"num_segments must be an int or None; got num_segments=2.5"),
        ({"indices_are_sorted": "yes"}, ValidationError, r"indices_are_sorted must be a static bool.*'yes'"),
        ({"unique_indices": 1}, ValidationError, r"unique_indices must be a static bool.*=1"),
        ({"mode": "wrap"}, ValidationError, r"segment_sum: mode must be None, 'drop' or one of .*'wrap'"),
        ({"data": np.zeros((3,), np.int16).astype("<U1")}, TypeError, r"segment_sum: data.dtype"),
    ],
)
def test_bad_arguments_name_operator_parameter_and_value(kwargs, error, pattern):
    args = {"data": jnp.ones(3), "segment_ids": np.array([0, 1, 1]), "num_segments": 2, **kwargs}
    with pytest.raises(error, match=pattern):
        dmljax.segment_sum(**args)


def test_type_errors_of_max_and_mean():
    with pytest.raises(TypeError, match=r"segment_max: data.dtype must be a real type.*complex64"):
        dmljax.segment_max(jnp.ones(2, jnp.complex64), np.array([0, 1]))
    with pytest.raises(TypeError, match=r"segment_mean: data.dtype must be a float or complex type.*int32"):
        dmljax.segment_mean(jnp.ones(2, jnp.int32), np.array([0, 1]))


def test_traced_num_segments_is_refused():
    with pytest.raises(ValidationError, match=r"segment_sum: num_segments must be a static int"):
        jax.jit(lambda n: dmljax.segment_sum(jnp.ones(2), np.array([0, 1]), n))(2)


# ----- jax.export with symbolic sizes ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_export_with_symbolic_sizes(name):
    """Symbolic row count and feature size; num_segments static, and a symbolic one."""
    (m, f, n) = export.symbolic_shape("m, f, n")
    rng = np.random.default_rng(12)
    fn = FUNCTIONS[name]
    specs = (jax.ShapeDtypeStruct((m, f), np.float32), jax.ShapeDtypeStruct((m,), np.int32))
    exported = export.export(jax.jit(lambda d, i: fn(d, i, 5)))(*specs)
    restored = export.deserialize(exported.serialize())
    by_size = export.export(jax.jit(lambda d, i, s: fn(d, i, s.shape[0])))(*specs, jax.ShapeDtypeStruct((n,), np.int8))
    for rows, cols in ((7, 2), (12, 3)):
        data, ids = data_for(rng, "float32", (rows, cols)), ids_for(rng, rows, 5)
        assert_same(restored.call(data, ids), oracle(name, data, ids, 5))
        assert_same(by_size.call(data, ids, np.zeros(5, np.int8)), oracle(name, data, ids, 5))


def test_export_for_cpu_and_cuda_with_sorted_ids():
    """The sorted layout is the non-CPU branch: it lowers for CUDA and runs on CPU with the rounds forced."""
    (m,) = export.symbolic_shape("m")
    specs = (jax.ShapeDtypeStruct((m, 3), np.float32), jax.ShapeDtypeStruct((m,), np.int32))
    rng = np.random.default_rng(14)
    data, ids = data_for(rng, "float32", (20, 3)), np.sort(ids_for(rng, 20, 5))
    for ordered in (True, False):
        with dmljax.config.override(cpu_ordered_scatter=ordered):
            fn = jax.jit(lambda d, i: dmljax.segment_sum(d, i, 5, indices_are_sorted=True))
            exported = export.export(fn, platforms=("cpu", "cuda"))(*specs)
            assert_same(exported.call(data, ids), oracle("sum", data, ids, 5))


# ----- 8 sharded host devices equal 1 device, bit for bit ----------------------------------------

SHARDED_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import dmljax

    devices = jax.device_count()
    rng = np.random.default_rng(0)
    m = 8 * 512
    data = rng.choice(np.array([1e8, -1e8, 1.0, -1.0], np.float32), (m, 2)) * rng.integers(1, 5, (m, 2))
    data = data.astype(np.float32)
    ids = rng.integers(-1, 17, m).astype(np.int32)
    ids = np.sort(ids) if sys.argv[1] == "sorted" else ids
    mesh = jax.make_mesh((devices,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    shard = NamedSharding(mesh, P("d"))
    d, i = jax.device_put(data, shard), jax.device_put(ids, shard)
    out = {}
    for name in ("sum", "prod", "max", "min", "mean"):
        f = getattr(dmljax, "segment_" + name)
        r = jax.jit(lambda d, i: f(d, i, 16, indices_are_sorted=sys.argv[1] == "sorted"))(d, i)
        out[name] = np.asarray(r).tobytes().hex()
    w = np.arange(16.0, dtype=np.float32)[:, None]
    loss = lambda d, i: (dmljax.segment_sum(d, i, 16) * w).sum() + (dmljax.segment_mean(d, i, 16) ** 2).sum()
    g = jax.jit(jax.grad(loss))(d, i)
    out["grad"] = np.asarray(g).tobytes().hex()
    plain = jax.jit(lambda d, i: jax.ops.segment_sum(d, i, 16))(d, i)
    want = np.zeros((16, 2), np.float32)
    ok = (ids >= 0) & (ids < 16)
    np.add.at(want, ids[ok], data[ok])
    out["plain_exact"] = bool(np.array_equal(plain, want))
    out["ours_exact"] = bool(np.array_equal(np.frombuffer(bytes.fromhex(out["sum"]), np.float32).reshape(16, 2), want))
    print(json.dumps(out))
    """
)


@pytest.mark.system
@pytest.mark.slow
@pytest.mark.parametrize("order", ["unsorted", "sorted"])
def test_eight_sharded_devices_equal_one_device(order):
    eight = run_json(SHARDED_SCRIPT, order, devices=8)
    one = run_json(SHARDED_SCRIPT, order, devices=1)
    assert eight.pop("ours_exact") and one.pop("ours_exact")
    assert not eight.pop("plain_exact")  # XLA's partitioned scatter-add sums per shard first
    one.pop("plain_exact")
    assert eight == one


# ----- ONNX export ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "clip"])
@pytest.mark.parametrize("name", NAMES)
def test_onnx_export_equals_onnxruntime(name, mode):
    pytest.importorskip("jax2onnx")
    ort = pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    import dmljax.onnx

    rng = np.random.default_rng(13)
    data, ids = data_for(rng, "float32", (30, 3)), ids_for(rng, 30, 6)
    fn = lambda d, i: FUNCTIONS[name](d, i, 6, mode=mode)  # noqa: E731
    model = dmljax.onnx.export(fn, data, ids, opset=18)
    onnx.checker.check_model(model, full_check=True)
    types = [node.op_type for node in model.graph.node]
    assert "ScatterND" in types and "Loop" not in types, types
    reductions = {a.s.decode() for node in model.graph.node if node.op_type == "ScatterND" for a in node.attribute}
    assert reductions == ({"add"} if name in ("sum", "mean") else {name if name != "prod" else "mul"})
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {spec.name: a for spec, a in zip(session.get_inputs(), (data, ids), strict=True)}
    (got,) = session.run(None, feeds)
    assert_same(got, jax.jit(fn)(data, ids))
    assert_same(got, oracle(name, data, ids, 6, "clip" if mode == "clip" else "drop"))


@pytest.mark.parametrize("shape", [(3, 7), (5, 7), (3, 6, 2)])
def test_mean_under_vmap_with_shared_ids_is_bit_exact(shape):
    """Issue 39 class 2: with shared ids the count was unbatched, so the batched division
    became a product with a broadcast reciprocal (last-bit differences). The ones the count
    sums now carry data's batch axis."""
    rng = np.random.default_rng(39)
    f = lambda d, i: dmljax.segment_mean(d, i, 5)  # noqa: E731
    for _ in range(5):
        data = rng.standard_normal(shape).astype(np.float32)
        ids = rng.integers(0, 5, shape[1])
        loop = np.stack([np.asarray(f(d, ids)) for d in data])
        assert_same(jax.vmap(f, in_axes=(0, None))(data, ids), loop)
        assert_same(jax.jit(jax.vmap(lambda d, ids=ids: f(d, ids)))(data), loop)


def test_tie_gradients_go_to_one_row_unlike_jax_ops():
    """Issue 39 class 16 (the docstrings and guide say so): the last tied row takes the whole
    cotangent; jax.ops shares it among ties."""
    ids = np.array([0, 0, 0])
    grad = lambda f, d: jax.grad(lambda d: f(d, ids, 1).sum())(jnp.array(d))  # noqa: E731
    np.testing.assert_array_equal(grad(dmljax.segment_max, [2.0, 2.0, 1.0]), [0, 1, 0])
    np.testing.assert_array_equal(grad(jax.ops.segment_max, [2.0, 2.0, 1.0]), [0.5, 0.5, 0])
    np.testing.assert_array_equal(grad(dmljax.segment_min, [1.0, 3.0, 1.0]), [0, 0, 1])
    for f in (dmljax.segment_max, dmljax.segment_min):
        assert "jax.ops.segment_" in f.__doc__ and "shares it among" in f.__doc__
