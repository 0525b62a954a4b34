"""Float scatter "max"/"min" (`dmljax._ops.ordered.extremal`): onnxruntime's loop on NaN, signed zeros
and ties, on every path (eager, jit, vmap, jax.export, 8 devices, the exported model), and
gradients that reach only the element the result is taken from."""

import itertools
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export
from jax.test_util import check_grads

import dmljax
from tests import onnx_node, reference
from tests.multidevice import run_json

nan, inf = np.nan, np.inf
FLOATS = ["float16", "bfloat16", "float32", "float64"]
# float32 in the fast tier; the other types take 1-4 s each (--full runs them).
TYPES = [pytest.param(d, marks=[] if d == "float32" else [pytest.mark.slow]) for d in FLOATS]
SPECIAL = [nan, -nan, 0.0, -0.0, inf, -inf, 1.0, -1.0, 2.0, 0.5]


def bits(x):
    """The bytes of an array: equal bits, NaN payloads and zero signs included."""
    return np.asarray(x).tobytes()


def specials(rng, shape, dtype):
    """NaN (both signs), +-0, +-inf and a few small numbers, with some random normals between."""
    values = rng.choice(np.array(SPECIAL), shape)
    normal = rng.random(shape) < 0.2
    values[normal] = rng.standard_normal(int(normal.sum()))
    return values.astype(jnp.dtype(dtype))


def elements_case(rng, dtype, axis):
    """A ScatterElements case of fixed shapes (one compilation per test): 12 updates per column
    into 4 rows (axis 0) or 4 columns (axis 1), special values, negative indices."""
    shape, ishape = ((4, 3), (12, 3)) if axis == 0 else ((3, 4), (3, 12))
    indices = rng.integers(-4, 4, ishape).astype(np.int32)
    return specials(rng, shape, dtype), indices, specials(rng, ishape, dtype)


def nd_case(rng, dtype, k):
    """A ScatterND case of fixed shapes: 10 index tuples into the leading ``k`` of (3, 2, 2), special values."""
    shape = (3, 2, 2)
    indices = np.stack([rng.integers(0, s, 10) for s in shape[:k]], -1).astype(np.int32)
    return specials(rng, shape, dtype), indices, specials(rng, (10, *shape[k:]), dtype)


def with_dtype(dtype):
    return jax.enable_x64(True) if dtype == "float64" else jax.enable_x64(jax.config.jax_enable_x64)


# ----- the rule, on every short sequence of special values ------------------------------


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_every_sequence_of_up_to_four_values_folds_as_the_loop(reduction):
    """Each of 7^4 sequences (x, u0, u1, u2) over NaN, +-0, +-inf, 1, 2 is one target: the
    result's bits equal the loop's (`reference.REDUCE`, onnxruntime's fold)."""
    values = [nan, 1.0, 2.0, 0.0, -0.0, inf, -inf]
    seqs = np.array(list(itertools.product(values, repeat=4)), np.float32)
    n = len(seqs)
    x, updates = seqs[:, 0].copy(), seqs[:, 1:].T.reshape(-1).copy()  # update j of target t at j * n + t
    targets = np.tile(np.arange(n), 3)
    want = reference.scatter_elements(x, targets, updates, 0, reduction)
    out = dmljax.scatter(x, targets, updates, reduction=reduction)
    assert bits(out) == bits(want)
    assert np.sum(np.isnan(want)) > 100 and np.sum(np.signbit(want) & (want == 0)) > 100  # the cases show


def test_the_issues_cases():
    x, t = np.array([-0.0, 0.0], np.float32), np.array([0, 0, 1, 1])
    u = np.array([0.0, -0.0, -0.0, 0.0], np.float32)
    for reduction in ("max", "min"):  # the later of equal zeros wins
        assert bits(dmljax.scatter(x, t, u, reduction=reduction)) == bits(np.array([-0.0, 0.0], np.float32))
    x, u = np.array([1.0, nan], np.float32), np.array([nan, 5.0], np.float32)
    f = jax.jit(lambda x, u: dmljax.scatter(x, np.array([0, 1]), u, reduction="max", mode="promise_in_bounds"))
    assert bits(f(x, u)) == bits(np.array([nan, 5.0], np.float32))  # a NaN update replaces; a NaN input gives way


# ----- random special-value cases: the loop, onnxruntime, jit, vmap ----------------------


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("reduction", ["max", "min"])
def test_scatter_against_the_loop(reduction, dtype):
    rng = np.random.default_rng(FLOATS.index(dtype))
    with with_dtype(dtype):
        f = jax.jit(dmljax.scatter, static_argnames=("axis", "reduction"))
        for case in range(20):
            axis = case % 2
            data, indices, updates = elements_case(rng, dtype, axis)
            want = bits(reference.scatter_elements(data, indices, updates, axis, reduction))
            assert bits(dmljax.scatter(data, indices, updates, axis, reduction=reduction)) == want
            assert bits(f(data, indices, updates, axis=axis, reduction=reduction)) == want


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("reduction", ["max", "min"])
def test_scatter_nd_against_the_loop(reduction, dtype):
    rng = np.random.default_rng(10 + FLOATS.index(dtype))
    with with_dtype(dtype):
        f = jax.jit(dmljax.scatter_nd, static_argnames=("reduction",))
        for case in range(20):
            data, indices, updates = nd_case(rng, dtype, 1 + case % 3)
            want = bits(reference.scatter_nd(data, indices, updates, reduction))
            assert bits(dmljax.scatter_nd(data, indices, updates, reduction=reduction)) == want
            assert bits(f(data, indices, updates, reduction=reduction)) == want


# onnxruntime 1.32's CPU kernels: no bfloat16 max/min, and ScatterND has no float16 max/min either.
@pytest.mark.parametrize(("op", "dtype"), [("ScatterElements", d) for d in ("float16", "float32", "float64")]
                         + [("ScatterND", d) for d in ("float32", "float64")])  # fmt: skip
@pytest.mark.parametrize("reduction", ["max", "min"])
def test_against_onnxruntime(reduction, op, dtype):
    rng = np.random.default_rng(20)
    with with_dtype(dtype):
        for case in range(10):
            if op == "ScatterElements":
                axis = case % 2
                data, indices, updates = elements_case(rng, dtype, axis)
                ours = dmljax.scatter(data, indices, updates, axis, reduction=reduction)
                ort = onnx_node.onnxruntime(op, [data, indices, updates], axis=axis, reduction=reduction)
            else:
                data, indices, updates = nd_case(rng, dtype, 1 + case % 3)
                ours = dmljax.scatter_nd(data, indices, updates, reduction=reduction)
                ort = onnx_node.onnxruntime(op, [data, indices.astype(np.int64), updates], reduction=reduction)
            assert bits(ours) == bits(ort)


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_vmap_equals_the_loop(reduction):
    rng = np.random.default_rng(30)
    data, indices, updates = (
        specials(rng, (5, 3), "float32"),
        rng.integers(0, 3, (5, 9)),
        specials(rng, (5, 9), "float32"),
    )
    out = jax.vmap(lambda x, i, u: dmljax.scatter(x, i, u, reduction=reduction))(data, indices, updates)
    loop = [reference.scatter_elements(data[n], indices[n], updates[n], 0, reduction) for n in range(5)]
    assert bits(out) == bits(np.stack(loop))


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_jax_export_with_symbolic_sizes(reduction):
    """Symbolic numbers of updates and of input rows: the restored program equals the loop on special values."""
    n, m = export.symbolic_shape("n, m")
    fun = jax.jit(lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction=reduction))
    specs = (jax.ShapeDtypeStruct((n, 3), np.float32), jax.ShapeDtypeStruct((m, 1), np.int32),
             jax.ShapeDtypeStruct((m, 3), np.float32))  # fmt: skip
    restored = export.deserialize(export.export(fun)(*specs).serialize())
    rng = np.random.default_rng(31)
    for rows, count in ((2, 7), (5, 30)):
        x, u = specials(rng, (rows, 3), "float32"), specials(rng, (count, 3), "float32")
        i = rng.integers(0, rows, (count, 1)).astype(np.int32)
        assert bits(restored.call(x, i, u)) == bits(reference.scatter_nd(x, i, u, reduction))


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_exported_onnx_model_equals_jit(reduction):
    """`dmljax.onnx.export` writes ScatterElements/ScatterND with the reduction: onnxruntime
    runs the model and its result is jit's, bit for bit, on special values."""
    pytest.importorskip("jax2onnx")
    import dmljax.onnx  # noqa: F401
    from tests.test_onnx_export import run

    rng = np.random.default_rng(32)
    x, u = specials(rng, (4, 3), "float32"), specials(rng, (12, 3), "float32")
    i = rng.integers(-4, 4, (12, 3)).astype(np.int32)
    for fn, args in (
        (lambda x, i, u: dmljax.scatter(x, i, u, axis=0, reduction=reduction), (x, i, u)),
        (lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction=reduction), (x, i[:, :1], u)),
    ):
        model = dmljax.onnx.export(fn, *args)
        (got,) = run(model, *args)
        assert bits(got) == bits(jax.jit(fn)(*args))


# ----- several devices --------------------------------------------------------------------

SHARDED_SCRIPT = textwrap.dedent(
    """
    import json
    import jax, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import dmljax
    from tests import reference

    mesh = jax.make_mesh((jax.device_count(),), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    shard = NamedSharding(mesh, P("d"))
    nan = np.nan
    result = {}
    x = np.array([nan, 1, 5, 5, 5, 5, 5, 5], np.float32)
    u = np.array([2, nan, 1, 1, 1, 1, 1, 1], np.float32)
    t = np.arange(8)[:, None]
    for reduction in ("max", "min"):
        want = reference.scatter_nd(x, t, u, reduction)
        f = jax.jit(lambda x, t, u, r=reduction: dmljax.scatter_nd(x, t, u, reduction=r))
        out = f(*(jax.device_put(a, shard) for a in (x, t, u)))
        result["issue " + reduction] = np.asarray(out).tobytes() == want.tobytes()
    rng = np.random.default_rng(0)
    m = 8 * 64
    special = np.array([nan, -nan, 0.0, -0.0, np.inf, -np.inf, 1.0, 2.0], np.float32)
    u, x = rng.choice(special, m), rng.choice(special, 16)
    t = rng.integers(0, 16, m)
    g = rng.standard_normal(16).astype(np.float32)
    for reduction in ("max", "min"):
        want = reference.scatter_elements(x, t, u, 0, reduction)
        f = jax.jit(lambda x, t, u, r=reduction: dmljax.scatter(x, t, u, reduction=r))
        out = f(*(jax.device_put(a, shard) for a in (x, t, u)))
        result["random " + reduction] = np.asarray(out).tobytes() == want.tobytes()
        loss = lambda x, u, r=reduction: (dmljax.scatter(x, t, u, reduction=r) * g).sum()
        grads = jax.jit(jax.grad(loss, (0, 1)))(*(jax.device_put(a, shard) for a in (x, u)))
        result["grad " + reduction] = [np.asarray(d).tolist() for d in grads]
    print(json.dumps(result))
    """
)


@pytest.mark.system
@pytest.mark.slow
def test_eight_devices_equal_the_loop_and_one_device():
    """Inputs, targets and updates sharded over 8 host devices: the issue's case (XLA's
    partitioned scatter-max gave -inf, a value in neither input), NaN-heavy random targets, and
    gradients equal to one device's."""
    result = run_json(SHARDED_SCRIPT)
    one = run_json(SHARDED_SCRIPT, devices=1)
    for key in ("issue max", "issue min", "random max", "random min"):
        assert result[key] and one[key], key
    assert result["grad max"] == one["grad max"] and result["grad min"] == one["grad min"]


# ----- gradients ---------------------------------------------------------------------------


def winners(data, indices, updates, reduction):
    """Per target, the element its result is taken from: ("input", t) or ("update", k)."""
    out = []
    for t in range(data.shape[0]):
        members = [k for k in range(indices.shape[0]) if indices[k] % data.shape[0] == t]
        w = reference.extremal_winner([data[t]] + [updates[k] for k in members], reduction)
        out.append(("input", t) if w == 0 else ("update", members[w - 1]))
    return out


def winner_grads(data, indices, updates, g, reduction):
    """The policy as a loop: per target, the whole cotangent to the element its result is taken from."""
    d = {"input": np.zeros_like(g), "update": np.zeros(updates.shape, g.dtype)}
    for t, (kind, k) in enumerate(winners(data, indices, updates, reduction)):
        d[kind][k] = g[t]
    return d["input"], d["update"]


def test_the_input_that_does_not_reach_the_result_gets_exactly_zero():
    updates = np.array([1.0, -2.0, 2.0], np.float32)

    def f(a):
        return dmljax.scatter(a, np.zeros(3, np.int64), updates, reduction="max").sum()

    assert bits(jax.grad(f)(np.array([-2.0], np.float32))) == bits(np.array([0.0], np.float32))


def test_ties_are_not_shared_the_last_equal_extreme_takes_it():
    loss = lambda x, u: dmljax.scatter(x, np.zeros(3, np.int64), u, reduction="max").sum()  # noqa: E731
    d_x, d_u = jax.grad(loss, (0, 1))(np.array([2.0], np.float32), np.array([2.0, 1.0, 2.0], np.float32))
    np.testing.assert_array_equal(d_x, [0.0])
    np.testing.assert_array_equal(d_u, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_200_random_small_cases_exactly(reduction):
    """Small integers (many ties) and some NaN: both gradients equal the loop's, bit for bit
    (exact zeros included), and the forward tangent is each winner's tangent."""
    rng = np.random.default_rng(40)

    def loss(x, indices, u, g):
        return (dmljax.scatter(x, indices, u, reduction=reduction) * g).sum()

    grad = jax.jit(jax.grad(loss, (0, 2)))

    def tangent(x, i, u, dx, du):
        return jax.jvp(lambda x, u: dmljax.scatter(x, i, u, reduction=reduction), (x, u), (dx, du))[1]

    jvp = jax.jit(tangent)
    for case in range(200):
        n, m = (1, 3, 3)[case % 3], (1, 6, 6)[case % 3]  # three shapes: three compilations
        data = rng.integers(-2, 3, n).astype(np.float32)
        updates = rng.integers(-2, 3, m).astype(np.float32)
        updates[rng.random(m) < 0.1] = nan
        indices = rng.integers(-n, n, m).astype(np.int32)
        g = rng.standard_normal(n).astype(np.float32)
        want = winner_grads(data, indices, updates, g, reduction)
        got = grad(data, indices, updates, g)
        assert bits(got[0]) == bits(want[0]) and bits(got[1]) == bits(want[1]), (data, indices, updates)
        dx, du = rng.standard_normal(n).astype(np.float32), rng.standard_normal(m).astype(np.float32)
        want = [(dx if kind == "input" else du)[k] for kind, k in winners(data, indices, updates, reduction)]
        assert bits(jvp(data, indices, updates, dx, du)) == bits(np.array(want, np.float32))


@pytest.mark.slow
@pytest.mark.parametrize("reduction", ["max", "min"])
def test_second_order_and_check_grads(reduction):
    rng = np.random.default_rng(41)
    data, updates = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))  # distinct values: differentiable
    indices = rng.integers(0, 3, (5, 4))
    with jax.enable_x64(True):
        f = lambda x, u: dmljax.scatter(x, indices, u, axis=0, reduction=reduction) ** 3  # noqa: E731
        check_grads(f, (data, updates), order=2, modes=("fwd", "rev"))
        nd = lambda x, u: jnp.sin(dmljax.scatter_nd(x, indices[:, :1], u, reduction=reduction))  # noqa: E731
        check_grads(nd, (data, updates), order=1, modes=("fwd", "rev"))
        hessian = jax.hessian(lambda x: dmljax.scatter(x, indices, updates, axis=0, reduction=reduction).sum())(data)
        assert not np.any(hessian)
