"""Every formulation of the ordered float add/mul reductions, bit for bit NumPy's ``ufunc.at``.

The formulations (`dmljax._ops.ordered.reductions`): one in-order XLA scatter on one CPU device
(config ``cpu_ordered_scatter``), the sorted fold that every other platform runs (forced
here with ``cpu_ordered_scatter=False``), the old rounds (``ordered_rounds``, the fold's
oracle) and, with several devices, the replicated partitioned program.
"""

import re
import textwrap

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import export

import dmljax
from dmljax._ops.ordered import sorted_fold
from dmljax._ops.ordered.reductions import combine
from tests.multidevice import run_json

FORMULATIONS = {
    "cpu scatter": {},
    "sorted fold": {"cpu_ordered_scatter": False},
    "rounds": {"cpu_ordered_scatter": False, "ordered_rounds": True},
}
DTYPES = ["float16", "bfloat16", "float32", "float64"]
# A value whose sum with 1 rounds back to it (the order-sensitive mixes: big + 1 - big).
BIG = {"float16": 4096.0, "bfloat16": 512.0, "float32": 1e8, "float64": 1e17}


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def order_sensitive(rng, m, dtype, reduction):
    """Sums of big, -big, +-1 and spread values, or products of perturbed powers of two (no
    subnormals: XLA CPU flushes them), whose results change with the order."""
    if reduction == "add":
        values = rng.standard_normal(m) * 10.0 ** rng.uniform(-2, 2, m)
        big = rng.random(m) < 0.4
        values[big] = rng.choice([BIG[dtype], -BIG[dtype], 1.0, -1.0], int(big.sum()))
    else:
        values = 2.0 ** rng.integers(-1, 2, m) * (1 + rng.standard_normal(m) * 0.05) * rng.choice([-1, 1], m)
    return values.astype(np_dtype(dtype))


def targets_for(rng, distribution, m, n):
    """uint32 flat targets: ``random``, ``hot`` (half of them on one element), ``zipf``; about
    a tenth dropped (``>= n``, up to 2^32 - 1)."""
    if distribution == "random":
        t = rng.integers(0, n, m)
    elif distribution == "hot":
        t = np.where(rng.random(m) < 0.5, 3, rng.integers(0, n, m))
    else:
        t = (rng.zipf(1.5, m) - 1) % n
    dropped = rng.random(m) < 0.1
    t[dropped] = rng.choice([n, n + 1, 2**32 - 1], int(dropped.sum()))
    return t.astype(np.uint32)


def ufunc_at(x, t, u, reduction):
    out = x.copy()
    keep = t < x.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        (np.add if reduction == "add" else np.multiply).at(out, t[keep], u[keep])
    return out


def run_combine(formulation, x, t, u, reduction, **kw):
    with dmljax.config.override(**FORMULATIONS[formulation]):
        f = jax.jit(lambda x, t, u: combine(x, t, u, reduction, **kw))
        return np.asarray(f(x, t, u))


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("distribution", ["random", "hot", "zipf"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_every_formulation_equals_ufunc_at(reduction, dtype, distribution, formulation, x64):
    rng = np.random.default_rng(hash((reduction, dtype, distribution)) % 2**32)
    m, n = 700, 37
    t = targets_for(rng, distribution, m, n)
    u = order_sensitive(rng, m, dtype, reduction)
    x = order_sensitive(rng, n, dtype, reduction)
    want = ufunc_at(x, t, u, reduction)
    reverse = ufunc_at(x, t[::-1], u[::-1], reduction)
    assert np.sum(want.view(np.uint8) != reverse.view(np.uint8)) > 0  # the order shows
    got = run_combine(formulation, x, t, u, reduction)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_promised_sorted_targets_skip_the_sort(reduction):
    rng = np.random.default_rng(5)
    t = np.sort(targets_for(rng, "hot", 500, 20))
    u, x = order_sensitive(rng, 500, "float32", reduction), order_sensitive(rng, 20, "float32", reduction)
    got = run_combine("sorted fold", x, t, u, reduction, indices_are_sorted=True)
    np.testing.assert_array_equal(got, ufunc_at(x, t, u, reduction))
    with dmljax.config.override(cpu_ordered_scatter=False):
        for promise in (False, True):
            f = jax.jit(lambda x, t, u, promise=promise: combine(x, t, u, reduction, indices_are_sorted=promise))
            sorts = f.lower(x, t, u).as_text().count('"stablehlo.sort"')
            assert sorts == (1 if promise else 2), sorts  # by target (skipped), runs by length


@pytest.mark.parametrize("m", [0, 1, 2, 255, 256, 257, 1000])
def test_sizes_around_the_level_boundaries(m):
    rng = np.random.default_rng(m)
    t = targets_for(rng, "zipf", m, 300)
    u, x = order_sensitive(rng, m, "float32", "add"), order_sensitive(rng, 300, "float32", "add")
    for formulation in ("sorted fold", "rounds"):
        np.testing.assert_array_equal(run_combine(formulation, x, t, u, "add"), ufunc_at(x, t, u, "add"))


@pytest.mark.parametrize("distribution", ["random", "hot"])
def test_symbolic_numbers_of_updates_export(distribution):
    """``jax.export`` with a symbolic number of updates and data size: the fold walks its
    steps in chunks (no static block sizes); more runs than one chunk."""
    rng = np.random.default_rng(8)
    m, n = 1500, 600
    t = targets_for(rng, distribution, m, n)
    u, x = order_sensitive(rng, m, "float32", "add"), order_sensitive(rng, n, "float32", "add")
    n_, m_ = export.symbolic_shape("n, m")
    specs = [jax.ShapeDtypeStruct((s,), d) for s, d in zip((n_, m_, m_), ("float32", "uint32", "float32"), strict=True)]
    f = export.export(jax.jit(lambda x, t, u: combine(x, t, u, "add")), platforms=("cpu", "cuda"))(*specs)
    np.testing.assert_array_equal(f.call(x, t, u), ufunc_at(x, t, u, "add"))


@pytest.mark.parametrize("kernel", [False, True])  # True: the Pallas kernel in interpret mode, as a CUDA GPU runs it
@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_vmap_of_the_sorted_fold(reduction, kernel):
    rng = np.random.default_rng(4)
    t = np.stack([targets_for(rng, "hot", 300, 9) for _ in range(3)]).astype(np.int64) % 9
    u = np.stack([order_sensitive(rng, 300, "float32", reduction) for _ in range(3)])
    x = np.stack([order_sensitive(rng, 9, "float32", reduction) for _ in range(3)])
    with dmljax.config.override(
        cpu_ordered_scatter=False, ordered_fold_kernel=True, ordered_fold_kernel_interpret=kernel
    ):
        out = jax.vmap(lambda x, t, u: dmljax.scatter(x, t, u, reduction=reduction))(x, t, u)
    loop = [ufunc_at(x[b], t[b].astype(np.uint32), u[b], reduction) for b in range(3)]
    np.testing.assert_array_equal(out, np.stack(loop))


# ----- forward mode: the tangents combine in the loop's order too ------------------------


def _combining_float_scatters(f, *args):
    """The float scatters of ``f``'s compiled program that add or multiply (XLA CPU's own order)."""
    hlo = jax.jit(f).lower(*args).as_text()
    scatters = re.findall(r"stablehlo\.scatter\".*?\}\) :", hlo, flags=re.S)
    return [s for s in scatters if re.search(r"tensor<(f|bf)\d+>", s) and re.search(r"stablehlo\.(add|mul)", s)]


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_jvp_of_the_add_is_the_add_of_the_tangents(formulation, dtype):
    """The add is linear in (x, u), so ``jax.jvp``'s tangent is the add of the tangents,
    ``np.add.at(dx, t, du)``, bit for bit, eager and jitted, on order-sensitive tangents.
    Off the XLA CPU scatter (``cpu_ordered_scatter=False``: the sorted fold, what a GPU runs)
    the tangent holds no float scatter that adds (XLA's order, a GPU's atomics): it is the
    same fold as the primal's."""
    rng = np.random.default_rng(12)
    m, n = 700, 37
    t = targets_for(rng, "hot", m, n)
    x, u = order_sensitive(rng, n, dtype, "add"), order_sensitive(rng, m, dtype, "add")
    dx, du = order_sensitive(rng, n, dtype, "add"), order_sensitive(rng, m, dtype, "add")
    want = ufunc_at(dx, t, du, "add")
    assert not np.array_equal(want, ufunc_at(dx, t[::-1], du[::-1], "add"))  # the order shows

    def tangent(x, u, dx, du):
        return jax.jvp(lambda x, u: combine(x, jnp.asarray(t), u, "add"), (x, u), (dx, du))[1]

    with dmljax.config.override(**FORMULATIONS[formulation]):
        for got in (tangent(x, u, dx, du), jax.jit(tangent)(x, u, dx, du)):
            np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))
        if formulation != "cpu scatter":
            assert _combining_float_scatters(tangent, x, u, dx, du) == []


@pytest.mark.parametrize("formulation", ["cpu scatter", "sorted fold"])
def test_forward_and_reverse_jacobians_of_the_add(formulation):
    """``jax.jacfwd`` equals ``jax.jacrev`` exactly (0/1 matrices: the update's target, the
    input's own element; dropped updates none), and ``jax.grad`` is the cotangent for the
    input and the cotangent at each update's target (0 where dropped), as NumPy computes it.
    Off the XLA CPU scatter ``jax.jacfwd``'s program holds no float scatter that adds."""
    rng = np.random.default_rng(13)
    n, m = 7, 30
    x, u = order_sensitive(rng, n, "float32", "add"), order_sensitive(rng, m, "float32", "add")
    i = rng.integers(-n, n + 3, m)  # some out of range: dropped (mode="drop")
    w = order_sensitive(rng, n, "float32", "add")

    def f(x, u):
        return dmljax.scatter(x, i, u, reduction="add", mode="drop")

    with dmljax.config.override(**FORMULATIONS[formulation]):
        forward, reverse = jax.jacfwd(f, (0, 1))(x, u), jax.jacrev(f, (0, 1))(x, u)
        grad = jax.jit(jax.grad(lambda x, u: jnp.sum(f(x, u) * w), (0, 1)))(x, u)
        if formulation == "sorted fold":
            assert _combining_float_scatters(jax.jacfwd(f, (0, 1)), x, u) == []
    kept = (i >= -n) & (i < n)
    target = np.where(kept, i % n, n)
    want_u = (np.arange(n)[:, None] == target[None, :]).astype(np.float32)
    for got, want in zip(forward, (np.eye(n, dtype=np.float32), want_u), strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(reverse, forward, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(grad[0], w)
    np.testing.assert_array_equal(grad[1], np.where(kept, w[np.minimum(target, n - 1)], 0).astype(np.float32))


@pytest.mark.parametrize("formulation", ["cpu scatter", "sorted fold"])
@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_vmap_of_jvp_and_jvp_of_vmap(reduction, formulation):
    """Batched tangents: ``vmap(jvp)`` and ``jvp(vmap)`` of an add or mul reduction give every
    row's tangent as the row alone does (the add's: ``np.add.at`` on the row's tangents);
    off the XLA CPU scatter their programs hold no float scatter that adds or multiplies."""
    rng = np.random.default_rng(14)
    b, m, n = 3, 200, 9
    t = np.stack([targets_for(rng, "hot", m, n) for _ in range(b)]).astype(np.int64) % n
    x, dx = (np.stack([order_sensitive(rng, n, "float32", reduction) for _ in range(b)]) for _ in range(2))
    u, du = (np.stack([order_sensitive(rng, m, "float32", reduction) for _ in range(b)]) for _ in range(2))

    def jvp(x, t, u, dx, du):
        return jax.jvp(lambda x, u: dmljax.scatter(x, t, u, reduction=reduction), (x, u), (dx, du))

    def batched_jvp(x, t, u, dx, du):
        return jax.jvp(
            jax.vmap(lambda x, t, u: dmljax.scatter(x, t, u, reduction=reduction)),
            (x, t, u),
            (dx, np.zeros(t.shape, jax.dtypes.float0), du),
        )

    with dmljax.config.override(**FORMULATIONS[formulation]):
        rows = [jvp(x[r], t[r], u[r], dx[r], du[r]) for r in range(b)]
        outs = {"vmap(jvp)": jax.vmap(jvp)(x, t, u, dx, du), "jvp(vmap)": batched_jvp(x, t, u, dx, du)}
        if formulation == "sorted fold":
            for f in (jax.vmap(jvp), batched_jvp):
                assert _combining_float_scatters(f, x, t, u, dx, du) == []
    for name, (primal, tangent) in outs.items():
        np.testing.assert_array_equal(primal, np.stack([r[0] for r in rows]), err_msg=name)
        np.testing.assert_array_equal(tangent, np.stack([r[1] for r in rows]), err_msg=name)
    if reduction == "add":
        want = np.stack([ufunc_at(dx[r], t[r].astype(np.uint32), du[r], "add") for r in range(b)])
        np.testing.assert_array_equal(outs["vmap(jvp)"][1], want)


def test_vmap_of_the_add_with_unbatched_or_symbolic_operands():
    """The ordered add's batching rule: only the input batched (the updates shared by every
    row), and under `jax.export` with symbolic sizes (no static offsets: row by row)."""
    rng = np.random.default_rng(15)
    b, m, n = 3, 200, 9
    t = targets_for(rng, "hot", m, n).astype(np.int64) % n
    x = np.stack([order_sensitive(rng, n, "float32", "add") for _ in range(b)])
    u = order_sensitive(rng, m, "float32", "add")
    want = np.stack([ufunc_at(x[r], t.astype(np.uint32), u, "add") for r in range(b)])

    def add(x, t, u):
        return dmljax.scatter(x, t, u, reduction="add")

    with dmljax.config.override(cpu_ordered_scatter=False):
        np.testing.assert_array_equal(jax.vmap(add, (0, None, None))(x, t, u), want)
        sizes = export.symbolic_shape("b, n, m")
        rows, rows_of_updates = sizes[:2], sizes[::2]  # (b, n), (b, m)
        specs = [jax.ShapeDtypeStruct(rows, jnp.float32), jax.ShapeDtypeStruct(rows_of_updates, jnp.int32)]
        specs.append(jax.ShapeDtypeStruct(rows_of_updates, jnp.float32))
        exported = export.export(jax.jit(jax.vmap(add)))(*specs)
    got = exported.call(x, np.broadcast_to(t, (b, m)).astype(np.int32), np.broadcast_to(u, (b, m)))
    np.testing.assert_array_equal(got, want)


# ----- complex mul: each product rounded on its own, as ONNX's reference loop -------------


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_mul_is_the_loops_product(dtype, formulation, x64):
    """``(ar br - ai bi) + (ar bi + ai br) i`` with each product rounded: NumPy's scalar
    product, so ``np.multiply.at`` and ONNX's reference ScatterElements. XLA's own complex
    product contracts into fused multiply-adds and differs in the last bits."""
    rng = np.random.default_rng(3)
    m, n = 2000, 16
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    u = (rng.uniform(0.5, 1.5, m) * np.exp(1j * rng.uniform(0, 6.3, m))).astype(dtype)
    t = rng.integers(0, n, m)
    want = ufunc_at(x, t, u, "mul")
    with dmljax.config.override(**FORMULATIONS[formulation]):
        got = np.asarray(dmljax.scatter(x, t, u, reduction="mul"))
    np.testing.assert_array_equal(got, want)
    pytest.importorskip("onnxruntime")  # tests.onnx_node needs onnx and onnxruntime
    from tests import onnx_node

    one = np.array([-0.5356694 + 0.36159506j], dtype), np.array([1.304 + 0.94708097j], dtype)
    onnx = onnx_node.reference("ScatterElements", [one[0], np.array([0]), one[1]], axis=0, reduction="mul")
    with dmljax.config.override(**FORMULATIONS[formulation]):
        np.testing.assert_array_equal(dmljax.scatter(one[0], np.array([0]), one[1], reduction="mul"), onnx)


def test_combiner_rounds_each_product():
    a = np.array([-0.5356694 + 0.36159506j], np.complex64)
    b = np.array([1.304 + 0.94708097j], np.complex64)
    got = jax.jit(lambda a, b: sorted_fold.combiner("mul", b)(a, b))(a, b)
    np.testing.assert_array_equal(got, [np.complex64(a[0]) * np.complex64(b[0])])


# ----- mul gradients, second order ----------------------------------------------------------

T = np.array([0, 2, 0, 0, 5, 2])  # 5 is dropped
WEIGHTS = np.array([1.0, 2.0, 3.0])


def weighted_mul(x, u, indices=T):
    return jnp.sum(dmljax.scatter(x, indices, u, reduction="mul", mode="drop") * WEIGHTS)


@pytest.mark.parametrize("formulation", ["cpu scatter", "sorted fold"])
def test_mul_hessian_against_finite_differences(formulation, x64):
    x, u = np.array([1.5, -2.0, 0.7]), np.array([0.9, 1.3, -1.1, 2.0, 3.0, 0.6])
    eps = 1e-6
    with dmljax.config.override(**FORMULATIONS[formulation]):
        hessian = jax.jit(jax.hessian(weighted_mul, (0, 1)))(x, u)
        grad = jax.jit(jax.grad(weighted_mul, (0, 1)))
        for i, e in enumerate(np.eye(6)):
            plus, minus = grad(x, u + eps * e), grad(x, u - eps * e)
            for j in (0, 1):  # d/du_i of the gradient by x, by u
                np.testing.assert_allclose(hessian[j][1][:, i], (plus[j] - minus[j]) / (2 * eps), atol=1e-7)


def test_mul_second_order_with_unique_indices(x64):
    """Also without duplicates (jnp's scatter-mul gradient works only there): grad of grad,
    against the product rule by hand."""
    x, u = np.array([1.5, -2.0, 0.7]), np.array([0.9, 1.3])
    indices = np.array([2, 0])

    def f(u):
        return weighted_mul(x, u, indices)

    second = jax.grad(lambda u: jnp.sum(jax.grad(f)(u) ** 2))(u)
    # d f / d u = (3 * 0.7, 1 * 1.5): constant in u, so its square's gradient is 0
    np.testing.assert_array_equal(jax.grad(f)(u), [3.0 * 0.7, 1.5])
    np.testing.assert_array_equal(second, [0.0, 0.0])


# ----- several devices ---------------------------------------------------------------------

SHARDED_SCRIPT = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import dmljax

    mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    rng = np.random.default_rng(0)
    m, n = 8 * 2048, 512
    updates = rng.choice(np.array([1e8, -1e8, 1.0, -1.0], np.float32), m) * rng.integers(1, 5, m).astype(np.float32)
    targets = np.where(rng.random(m) < 0.3, 7, rng.integers(0, n + 8, m)).astype(np.int32)
    keep = targets < n
    want = np.zeros(n, np.float32)
    np.add.at(want, targets[keep], updates[keep])
    factors = (np.float32(1.001) ** updates.clip(-4, 4)).astype(np.float32)
    want_mul = np.ones(n, np.float32)
    np.multiply.at(want_mul, targets[keep], factors[keep])
    shard = NamedSharding(mesh, P("d"))
    t, u, f = (jax.device_put(a, shard) for a in (targets, updates, factors))
    x = np.zeros(n, np.float32)
    add = lambda x, t, u: dmljax.scatter(x, t, u, reduction="add", mode="drop")
    mul = lambda x, t, u: dmljax.scatter(x, t, u, reduction="mul", mode="drop")
    out = {}
    for name, overrides in (("scatter", {}), ("fold", {"cpu_ordered_scatter": False}),
                            ("xla partitions the fold", {"cpu_ordered_scatter": False,
                                                         "ordered_replicated_partitions": False})):
        with dmljax.config.override(**overrides):
            out[name] = bool(np.array_equal(jax.jit(add)(x, t, u), want))
            out[name + " mul"] = bool(np.array_equal(jax.jit(mul)(np.ones(n, np.float32), t, f), want_mul))
    out["one device jit"] = bool(np.array_equal(jax.jit(add)(x, targets, updates), want))
    vm = jax.jit(jax.vmap(add, in_axes=(None, 0, 0)))(x, t.reshape(8, -1), u.reshape(8, -1))
    rows = [np.zeros(n, np.float32) for _ in range(8)]
    for r in range(8):
        k = targets.reshape(8, -1)[r]
        np.add.at(rows[r], k[k < n], updates.reshape(8, -1)[r][k < n])
    out["vmap"] = bool(np.array_equal(vm, np.stack(rows)))
    ones = np.ones(n, np.float32)
    vm = jax.jit(jax.vmap(mul, in_axes=(None, 0, 0)))(ones, t.reshape(8, -1), f.reshape(8, -1))
    rows = [np.ones(n, np.float32) for _ in range(8)]
    for r in range(8):
        k = targets.reshape(8, -1)[r]
        np.multiply.at(rows[r], k[k < n], factors.reshape(8, -1)[r][k < n])
    out["vmap mul"] = bool(np.array_equal(vm, np.stack(rows)))
    exported = jax.export.export(jax.jit(add))(x, targets, updates)
    out["export"] = bool(np.array_equal(exported.call(x, targets, updates), want))
    g = jax.jit(jax.grad(lambda x, u: jnp.sum(add(x, t, u) * np.arange(n)), (0, 1)))(x, u)
    out["grad"] = bool(np.array_equal(g[1], np.where(keep, targets, 0) * keep))
    print(json.dumps(out))
    """
)


@pytest.mark.system
@pytest.mark.slow
def test_sharded_programs_equal_ufunc_at():
    """8 host devices, updates sharded: the replicated partitions (the in-order scatter on
    each device, or the fold), XLA's partitioning of the fold, a one-device jit and
    ``jax.export`` on the same host, vmap (of the add's primitive, of the mul's batching rule)
    and grad: all bit for bit ``np.add.at``/``np.multiply.at``."""
    result = run_json(SHARDED_SCRIPT)
    assert result == dict.fromkeys(result, True) and len(result) == 11, result


@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_keys_too_wide_to_pack(reduction):
    """2^17 updates into 2^16 elements: target and position need 34 bits, so both sorts take a
    key and a value (the packed one-key sorts serve the smaller cases above)."""
    rng = np.random.default_rng(9)
    m, n = 2**17, 2**16
    t = targets_for(rng, "hot", m, n)
    u, x = order_sensitive(rng, m, "float32", reduction), order_sensitive(rng, n, "float32", reduction)
    np.testing.assert_array_equal(run_combine("sorted fold", x, t, u, reduction), ufunc_at(x, t, u, reduction))


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_empty_data_drops_every_update(formulation):
    t, u = np.array([0, 3], np.uint32), np.ones(2, np.float32)
    for reduction in ("add", "mul", "max"):
        assert run_combine(formulation, np.zeros(0, np.float32), t, u, reduction).shape == (0,)


# ----- the Pallas kernel of the fold's steps (what CUDA GPUs run; interpret mode here) ----------


@pytest.fixture
def kernel_on_the_cpu():
    """The fold's steps in the Pallas kernel on XLA CPU (interpret mode), as a CUDA GPU runs them."""
    with dmljax.config.override(ordered_fold_kernel=True, ordered_fold_kernel_interpret=True):
        yield


@pytest.mark.parametrize("distribution", ["random", "hot", "zipf"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_the_kernel_folds_as_the_loop(kernel_on_the_cpu, x64, reduction, dtype, distribution):
    rng = np.random.default_rng(11)
    m, n = 700, 90
    x = order_sensitive(rng, n, dtype, reduction)
    t, u = targets_for(rng, distribution, m, n), order_sensitive(rng, m, dtype, reduction)
    want = ufunc_at(x, t, u, reduction)
    got = run_combine("sorted fold", x, t, u, reduction)
    assert got.tobytes() == want.tobytes()
    with dmljax.config.override(ordered_fold_kernel=False):  # the lax form: same bits
        assert run_combine("sorted fold", x, t, u, reduction).tobytes() == want.tobytes()


KERNEL = "dmljax_sorted_fold_kernel"  # the primitive that lowers to the kernel (the lax form in exports)


def test_the_kernel_runs_where_the_switch_says(kernel_on_the_cpu):
    """The kernel's primitive is in the fold's program; switched off, it is not."""
    args = (jnp.zeros(8), jnp.array([1, 1, 3], jnp.uint32), jnp.ones(3))
    fold = lambda x, t, u: sorted_fold.fold(x, t, u, "add")  # noqa: E731
    assert KERNEL in str(jax.make_jaxpr(fold)(*args))
    with dmljax.config.override(ordered_fold_kernel=False):
        assert KERNEL not in str(jax.make_jaxpr(fold)(*args))
    complex_args = (jnp.zeros(8, jnp.complex64), args[1], jnp.ones(3, jnp.complex64))
    assert KERNEL not in str(jax.make_jaxpr(fold)(*complex_args))  # complex: the lax form


@pytest.mark.parametrize("n", [1, 5, 300, 5000])
@pytest.mark.parametrize("m", [0, 1, 2, 127, 128, 129, 1000])
def test_the_kernel_run_table_around_block_and_size_edges(kernel_on_the_cpu, m, n):
    """Fewer targets than updates (at most n runs) and more, one run, partial blocks."""
    rng = np.random.default_rng(m * 7919 + n)
    t = targets_for(rng, "zipf", m, n)
    u, x = order_sensitive(rng, m, "float32", "add"), order_sensitive(rng, n, "float32", "add")
    got = run_combine("sorted fold", x, t, u, "add")
    assert got.tobytes() == ufunc_at(x, t, u, "add").tobytes()


def test_the_kernel_with_every_target_dropped_or_no_data(kernel_on_the_cpu):
    t, u = np.array([9, 2**32 - 1, 9], np.uint32), np.ones(3, np.float32)
    x = np.arange(4, dtype=np.float32)
    assert run_combine("sorted fold", x, t, u, "add").tobytes() == x.tobytes()
    assert run_combine("sorted fold", np.zeros(0, np.float32), t, u, "mul").shape == (0,)


@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_the_kernel_path_sorts_once(kernel_on_the_cpu, reduction):
    """The kernel needs no runs ordered by length: one sort (by target), none when promised sorted."""
    rng = np.random.default_rng(6)
    t = np.sort(targets_for(rng, "hot", 500, 20))
    u, x = order_sensitive(rng, 500, "float32", reduction), order_sensitive(rng, 20, "float32", reduction)
    for promise in (False, True):
        got = run_combine("sorted fold", x, t, u, reduction, indices_are_sorted=promise)
        assert got.tobytes() == ufunc_at(x, t, u, reduction).tobytes()
        with dmljax.config.override(cpu_ordered_scatter=False):
            f = jax.jit(lambda x, t, u, promise=promise: combine(x, t, u, reduction, indices_are_sorted=promise))
            text = f.lower(x, t, u).as_text()
        assert text.count('"stablehlo.sort"') == (0 if promise else 1)


def test_the_kernel_needs_fewer_than_2_31_updates(kernel_on_the_cpu):
    """The kernel's positions into the updates are int32: 2^31 updates or more take the lax form."""
    fold = lambda x, t, u: sorted_fold.fold(x, t, u, "add")  # noqa: E731
    for m, kernel in ((2**31 - 1, True), (2**31, False)):
        specs = (jax.ShapeDtypeStruct((8,), "float32"), jax.ShapeDtypeStruct((m,), "uint32"))
        text = str(jax.make_jaxpr(fold)(specs[0], specs[1], jax.ShapeDtypeStruct((m,), "float32")))
        assert (KERNEL in text) == kernel, m


def test_onnx_export_with_the_interpreted_kernel_forced(kernel_on_the_cpu):
    """The option changes what JAX runs, not the model: the export holds ScatterElements."""
    pytest.importorskip("jax2onnx")
    pytest.importorskip("onnxruntime")
    import dmljax.onnx
    from tests._util import run_onnx

    rng = np.random.default_rng(2)
    t = targets_for(rng, "hot", 300, 20).astype(np.int64) % 20
    u, x = order_sensitive(rng, 300, "float32", "add"), order_sensitive(rng, 20, "float32", "add")
    fn = lambda x, t, u: dmljax.scatter(x, t, u, reduction="add")  # noqa: E731
    model = dmljax.onnx.export(fn, x, t, u)
    assert "ScatterElements" in [node.op_type for node in model.graph.node]
    (got,) = run_onnx(model, x, t, u)
    assert got.tobytes() == ufunc_at(x, t.astype(np.uint32), u, "add").tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_the_kernel_path_lowers_to_triton_for_cuda(x64, reduction, dtype):
    """The kernel path (run table, kernel, scatter) as a CUDA GPU compiles it: a Triton call.
    A plain ``pallas_call`` lowers for Mosaic GPU on jax 0.10, which refused the kernel; this
    lowers where jax can lower for cuda without a GPU (jax 0.12 wants a GPU or an abstract one)."""
    rng = np.random.default_rng(1)
    m, n = 1000, 300
    t = np.sort(targets_for(rng, "zipf", m, n))
    f = sorted_fold.combiner(reduction, jnp.zeros(1, np_dtype(dtype)))
    fold = lambda x, st, su: sorted_fold._fold_in_kernel(x, st, su, f, interpret=False)  # noqa: E731
    specs = [jax.ShapeDtypeStruct((n,), np_dtype(dtype)), t, jax.ShapeDtypeStruct((m,), np_dtype(dtype))]
    triton = export.DisabledSafetyCheck.custom_call("__gpu$xla.gpu.triton")
    try:
        exported = export.export(jax.jit(fold), platforms=("cuda",), disabled_checks=[triton])(*specs)
    except RuntimeError as e:
        if "No supported GPU devices found" in str(e):
            pytest.skip(f"jax {jax.__version__} lowers for cuda only with a GPU: {str(e)[:60]}")
        raise
    text = exported.mlir_module()
    assert text.count("xla.gpu.triton") == 1 and text.count('"stablehlo.sort"') == 0  # the targets came sorted


@pytest.mark.parametrize("interpreted", [True, False])
@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_serialized_programs_fold_in_the_lax_form(reduction, interpreted):
    """`jax.export` refuses a Triton call (no compatibility guarantee): a program lowered for
    an export folds in the lax form (two sorts), one lowered for `jit` in the kernel (one).
    ``interpreted=False`` is the CUDA GPU's own path (run by scripts/gpu_check.sh)."""
    if not interpreted and jax.default_backend() != "gpu":
        pytest.skip("the compiled kernel runs on a CUDA GPU only")
    rng = np.random.default_rng(9)
    t = targets_for(rng, "hot", 400, 30)
    u, x = order_sensitive(rng, 400, "float32", reduction), order_sensitive(rng, 30, "float32", reduction)
    f = jax.jit(lambda x, t, u: combine(x, t, u, reduction))
    with dmljax.config.override(
        cpu_ordered_scatter=False, ordered_fold_kernel=True, ordered_fold_kernel_interpret=interpreted
    ):
        exported = export.export(f)(x, t, u)
        jitted = f.lower(x, t, u).as_text()
    text = exported.mlir_module()
    assert text.count('"stablehlo.sort"') == 2 and "triton" not in text
    assert jitted.count('"stablehlo.sort"') == 1
    restored = export.deserialize(exported.serialize())
    assert np.asarray(restored.call(x, t, u)).tobytes() == ufunc_at(x, t, u, reduction).tobytes()


def test_the_kernel_lanes_past_a_block():
    """More runs than one block, a run longer than the others, a run of length 0."""
    from dmljax._ops.ordered import fold_kernel

    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 9, fold_kernel.BLOCK * 2 + 3)
    lengths[7] = 300
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    u = (rng.standard_normal(int(lengths.sum())) * 10.0 ** rng.integers(-3, 8, int(lengths.sum()))).astype(np.float32)
    acc = rng.standard_normal(lengths.shape[0]).astype(np.float32)
    want = acc.copy()
    for r, (s, length) in enumerate(zip(starts, lengths, strict=True)):
        for k in range(length):
            want[r] = np.float32(want[r] + u[s + k])
    got = fold_kernel.fold_runs(acc, u, starts.astype(np.uint32), lengths.astype(np.uint32), jnp.add, True)
    assert np.asarray(got).tobytes() == want.tobytes()


def test_the_kernel_default_follows_the_jax_version():
    """Pallas' Triton backend is deprecated from jax 0.11: the compiled kernel is on by
    default before it, the lax form (the same bits) from it (docs/design/ordered-reductions.md)."""
    from dmljax._core.config import OPTIONS, PALLAS_TRITON_CURRENT  # noqa: PLC0415

    version = tuple(int("".join(c for c in p if c.isdigit())) for p in jax.__version__.split(".")[:2])
    assert PALLAS_TRITON_CURRENT == (version < (0, 11))
    assert next(o.default for o in OPTIONS if o.name == "ordered_fold_kernel") == PALLAS_TRITON_CURRENT
    args = (jnp.zeros(8), jnp.array([1, 1, 3], jnp.uint32), jnp.ones(3))
    fold = lambda x, t, u: sorted_fold.fold(x, t, u, "add")  # noqa: E731
    with dmljax.config.override(ordered_fold_kernel=PALLAS_TRITON_CURRENT, ordered_fold_kernel_interpret=True):
        assert (KERNEL in str(jax.make_jaxpr(fold)(*args))) == PALLAS_TRITON_CURRENT
