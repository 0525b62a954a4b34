"""The gathers' gradients add the cotangent in its row-major order (issue 38, item 1).

The oracle is ``np.add.at`` over the cotangent in row-major order (the order ONNX's
ScatterElements/ScatterND loops use), with values whose sums change with the order (+-big,
+-1). Each gather is checked on one CPU device (JAX's in-order scatter), with the off-CPU
formulations forced (config ``cpu_ordered_scatter`` off: the sorted fold; with
``ordered_fold_kernel_interpret``: the CUDA kernel's formulation, interpreted), on 8 host
devices with the indices and cotangent sharded, and lowered for cuda/tpu (no float
scatter-add may remain). Design note: docs/design/gather-gradient.md.
"""

import re
import textwrap

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import dmljax
from tests.multidevice import run_json

DTYPES = ["float16", "bfloat16", "float32", "float64"]
BIG = {"float16": 2048.0, "bfloat16": 256.0, "float32": 1e8, "float64": 1e17}
FORCED = {
    "one cpu device": {},
    "sorted fold": {"cpu_ordered_scatter": False},
    "fold kernel (interpreted)": {
        "cpu_ordered_scatter": False,
        "ordered_fold_kernel": True,
        "ordered_fold_kernel_interpret": True,
    },
}


def _np_dtype(dtype):
    return np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)


def _values(rng, shape, dtype):
    """+-big, +-1 and spread magnitudes: sums that change with the order."""
    v = rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)
    pick = rng.random(shape) < 0.4
    v[pick] = rng.choice([BIG[dtype], -BIG[dtype], 1.0, -1.0], int(pick.sum()))
    return v.astype(_np_dtype(dtype))


def _indices(rng, kind, size, shape):
    """Random, Zipf (a few rows take most updates) or hot (one row takes nearly all)."""
    if kind == "random":
        return rng.integers(0, size, shape)
    if kind == "zipf":
        return np.minimum(rng.zipf(1.5, shape) - 1, size - 1)
    return np.where(rng.random(shape) < 0.9, 3 % size, rng.integers(0, size, shape))


def _gather_case(rng, dtype, kind):
    """gather along axis 1 of (5, 7, 3) with a (6, 8) index: the cotangent (5, 6, 8, 3)."""
    shape, index = (5, 7, 3), _indices(rng, kind, 7, (6, 8))
    ct = _values(rng, (5, 6, 8, 3), dtype)
    want = np.zeros(shape, ct.dtype)
    for c in np.ndindex(*ct.shape):  # row-major over the cotangent
        want[c[0], index[c[1], c[2]], c[3]] += ct[c]
    return shape, index, ct, want, lambda x, i: dmljax.gather(x, i, 1)


def _gather_rows_case(rng, dtype, kind):
    """gather along axis 0 (rows of 4: the case of embeddings); the 1-D index repeats rows."""
    shape, index = (9, 4), _indices(rng, kind, 9, (300,))
    ct = _values(rng, (300, 4), dtype)
    want = np.zeros(shape, ct.dtype)
    np.add.at(want, index, ct)
    return shape, index, ct, want, lambda x, i: dmljax.gather(x, i, 0)


def _elements_case(rng, dtype, kind):
    """gather_elements along axis 0 of (6, 5) with a (40, 5) index."""
    shape, index = (6, 5), _indices(rng, kind, 6, (40, 5))
    ct = _values(rng, (40, 5), dtype)
    want = np.zeros(shape, ct.dtype)
    for r, c in np.ndindex(*ct.shape):
        want[index[r, c], c] += ct[r, c]
    return shape, index, ct, want, lambda x, i: dmljax.gather_elements(x, i, 0)


def _nd_case(rng, dtype, kind):
    """gather_nd with batch_dims=1 and pairs: data (3, 4, 5, 2), index (3, 30, 2)."""
    shape = (3, 4, 5, 2)
    index = np.stack([_indices(rng, kind, 4, (3, 30)), _indices(rng, kind, 5, (3, 30))], axis=-1)
    ct = _values(rng, (3, 30, 2), dtype)
    want = np.zeros(shape, ct.dtype)
    for b, j, e in np.ndindex(*ct.shape):
        want[b, index[b, j, 0], index[b, j, 1], e] += ct[b, j, e]
    return shape, index, ct, want, lambda x, i: dmljax.gather_nd(x, i, batch_dims=1)


CASES = {"gather": _gather_case, "gather rows": _gather_rows_case, "gather_elements": _elements_case}
CASES["gather_nd"] = _nd_case


def _cotangent_grad(op, shape, index, ct):
    """``op``'s data gradient for the cotangent ``ct`` itself (a vjp: no rounding of a loss)."""
    x = jnp.zeros(shape, ct.dtype)
    _, vjp = jax.vjp(lambda x: op(x, jnp.asarray(index)), x)
    return np.asarray(jax.jit(vjp)(jnp.asarray(ct))[0])


@pytest.mark.parametrize(
    "forced", [pytest.param(f, marks=pytest.mark.slow) if "kernel" in f or "one" in f else f for f in FORCED]
)
@pytest.mark.parametrize("kind", ["random", "zipf", "hot"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
def test_gradient_adds_the_cotangent_in_row_major_order(case, dtype, kind, forced, x64):
    rng = np.random.default_rng(sorted(CASES).index(case) * 100 + DTYPES.index(dtype) * 10 + len(kind))
    shape, index, ct, want, op = CASES[case](rng, dtype, kind)
    with dmljax.config.override(**FORCED[forced]):
        got = _cotangent_grad(op, shape, index, ct)
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes(), (got, want)


def test_the_values_are_order_sensitive():
    """The sums of the cases change with the order (else the tests above could not fail)."""
    rng = np.random.default_rng(1)
    shape, index, ct, want, _ = _gather_rows_case(rng, "float32", "hot")
    reverse = np.zeros(shape, ct.dtype)
    np.add.at(reverse, index[::-1], ct[::-1])
    assert reverse.tobytes() != want.tobytes()


@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("forced", ["sorted fold"])
def test_out_of_range_reads_follow_the_mode(mode, forced):
    """Clamped reads send their cotangent to the clamped row, filled ones drop it."""
    index = np.array([0, 5, -1, 9, 2, 9])
    ct = np.array([[1e8], [1.0], [-1e8], [7.0], [1.0], [2.0]], np.float32)
    want = np.zeros((3, 1), np.float32)
    for j, i in enumerate(index):
        i = i + 3 if i < 0 else i
        if 0 <= i < 3:
            want[i] += ct[j]
        elif mode == "clip":
            want[min(max(i, 0), 2)] += ct[j]
    with dmljax.config.override(**FORCED[forced]):
        op = lambda x, i: dmljax.gather(x, i, 0, mode=mode)  # noqa: E731
        got = _cotangent_grad(op, (3, 1), index, ct)
    assert got.tobytes() == want.tobytes()


def test_jvp_and_second_order_stay_exact():
    """Forward mode is the gather of the tangent; grad of grad and jvp of grad add in order too."""
    rng = np.random.default_rng(3)
    index = np.where(rng.random(200) < 0.8, 1, rng.integers(0, 4, 200))
    ct = _values(rng, (200, 3), "float32")
    x, v = jnp.asarray(_values(rng, (4, 3), "float32")), jnp.asarray(_values(rng, (4, 3), "float32"))
    with dmljax.config.override(cpu_ordered_scatter=False):
        _, tangent = jax.jvp(lambda x: dmljax.gather(x, index, 0), (x,), (v,))
        np.testing.assert_array_equal(tangent, np.asarray(v)[index])
        f = lambda x: jnp.sum(dmljax.gather(x, index, 0) ** 2 * ct)  # noqa: E731
        hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(f), (x,), (v,))[1])(x, v)
        want = np.zeros((4, 3), np.float32)
        np.add.at(want, index, (2 * np.asarray(v)[index]) * ct)
        assert np.asarray(hvp).tobytes() == want.tobytes()
        w = jnp.asarray(_values(rng, (4, 3), "float32"))
        second = jax.jit(jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), w)))(x)
        want = np.zeros((4, 3), np.float32)
        np.add.at(want, index, (2 * np.asarray(w)[index]) * ct)
        assert np.asarray(second).tobytes() == want.tobytes()


def test_vmap_of_the_gradient_is_per_row():
    rng = np.random.default_rng(4)
    index = rng.integers(0, 3, (2, 50))
    ct = _values(rng, (2, 50, 2), "float32")
    with dmljax.config.override(cpu_ordered_scatter=False):
        vjp = lambda i, c: jax.vjp(lambda x: dmljax.gather(x, i, 0), jnp.zeros((3, 2)))[1](c)[0]  # noqa: E731
        got = np.asarray(jax.jit(jax.vmap(vjp))(index, ct))
    for row in range(2):
        want = np.zeros((3, 2), np.float32)
        np.add.at(want, index[row], ct[row])
        assert got[row].tobytes() == want.tobytes()


def test_descriptor_paths_take_the_ordered_gradient():
    """compile_operator's gather_elements traces the same implementation: its gradient is ordered too."""
    from dmljax import TensorDesc  # noqa: PLC0415
    from dmljax.descriptors import GatherElementsOperatorDesc, compile_operator  # noqa: PLC0415

    rng = np.random.default_rng(5)
    index = np.where(rng.random((64, 3)) < 0.8, 2, rng.integers(0, 4, (64, 3))).astype(np.uint32)
    ct = _values(rng, (64, 3), "float32")
    data, indices = TensorDesc("float32", (4, 3)), TensorDesc("uint32", (64, 3))
    op = compile_operator(GatherElementsOperatorDesc(data, indices, TensorDesc("float32", (64, 3)), axis=0), "3.0")
    with dmljax.config.override(cpu_ordered_scatter=False):
        _, vjp = jax.vjp(lambda b: op(b, jnp.asarray(index.ravel())), jnp.zeros(12))
        (got,) = jax.jit(vjp)(jnp.asarray(ct.ravel()))
    want = np.zeros((4, 3), np.float32)
    for r, c in np.ndindex(64, 3):
        want[index[r, c], c] += ct[r, c]
    assert np.asarray(got).tobytes() == want.ravel().tobytes()


def _float_scatters(text):
    return re.findall(r"stablehlo\.scatter\".*?\}\) :", text, flags=re.S)


GRADIENTS = {
    "gather axis 0": lambda x, i, c: jax.vjp(lambda x: dmljax.gather(x, i, 0), x)[1](c)[0],
    "gather axis 1": lambda x, i, c: jax.vjp(lambda x: dmljax.gather(x.T, i, 1), x)[1](c.T)[0],
    "gather_elements": lambda x, i, c: jax.vjp(
        lambda x: dmljax.gather_elements(x, jnp.broadcast_to(i[:, None], c.shape), 0), x
    )[1](c)[0],
    "gather_nd": lambda x, i, c: jax.vjp(lambda x: dmljax.gather_nd(x, i[:, None]), x)[1](c)[0],
}


@pytest.mark.hlo
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("platform", ["cuda", "tpu"])
@pytest.mark.parametrize("program", GRADIENTS)
def test_backward_lowers_to_no_combining_float_scatter_off_the_cpu(program, platform, dtype):
    """Off the CPU the gradient holds no float scatter that adds (GPU atomics would choose
    the order): every float scatter in it overwrites. Fails with JAX's transposes (config
    ``ordered_gather_gradients`` off). If it fails: docs/design/gather-gradient.md."""
    x, i, c = jnp.zeros((16, 4), dtype), jnp.zeros(40, jnp.int32), jnp.ones((40, 4), dtype)
    lowered = jax.jit(GRADIENTS[program]).trace(x, i, c).lower(lowering_platforms=(platform,))
    element = {"float32": "tensor<f32>", "bfloat16": "tensor<bf16>", "float16": "tensor<f16>"}[dtype]
    scatters = [s for s in _float_scatters(lowered.as_text()) if element in s]
    assert scatters, "the ordered add's overwriting scatters"
    for scatter in scatters:
        assert "stablehlo.add" not in scatter, scatter


SHARDED_SCRIPT = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import dmljax

    rng = np.random.default_rng(0)
    mesh = Mesh(np.array(jax.devices()), ("d",))
    shard = NamedSharding(mesh, P("d"))
    n, rows, w = 8 * 512, 64, 4
    result = {}
    for kind in ("random", "zipf", "hot"):
        if kind == "random":
            index = rng.integers(0, rows, n)
        elif kind == "zipf":
            index = np.minimum(rng.zipf(1.5, n) - 1, rows - 1)
        else:
            index = np.where(rng.random(n) < 0.9, 5, rng.integers(0, rows, n))
        ct = rng.standard_normal((n, w)).astype(np.float32)
        pick = rng.random((n, w)) < 0.4
        ct[pick] = rng.choice([1e8, -1e8, 1.0, -1.0], int(pick.sum())).astype(np.float32)
        want = np.zeros((rows, w), np.float32)
        np.add.at(want, index, ct)
        ops = {
            "gather": lambda x, i: dmljax.gather(x, i, 0),
            "gather_elements": lambda x, i: dmljax.gather_elements(x, jnp.broadcast_to(i[:, None], (n, w)), 0),
            "gather_nd": lambda x, i: dmljax.gather_nd(x, i[:, None]),
        }
        for name, op in ops.items():
            def grad(x, i, c, op=op):
                return jax.vjp(lambda x: op(x, i), x)[1](c)[0]
            args = (jnp.zeros((rows, w)), jax.device_put(index, shard), jax.device_put(ct, shard))
            got = np.asarray(jax.jit(grad)(*args))
            result[f"{name} {kind}"] = got.tobytes() == want.tobytes()
            with dmljax.config.override(ordered_gather_gradients=False):
                old = np.asarray(jax.jit(grad)(*args))
            result[f"old {name} {kind}"] = old.tobytes() == want.tobytes()
    print(json.dumps(result))
    """
)


@pytest.mark.system
@pytest.mark.slow
def test_eight_devices_with_sharded_indices_equal_np_add_at():
    """Indices and cotangent sharded over 8 host devices: the gradient is ``np.add.at``'s, bit
    for bit, as on one device (the issue's measurement: JAX's transposes differ there)."""
    eight = run_json(SHARDED_SCRIPT)
    one = run_json(SHARDED_SCRIPT, devices=1)
    for key in eight:
        if not key.startswith("old "):
            assert eight[key] and one[key], key
    assert not all(eight[key] for key in eight if key.startswith("old ")), "JAX's transposes matched by chance"


def test_onnx_exports_the_ordered_gradient_and_tangent():
    """The exporter takes the off-CPU branch: the gradient is a ScatterElements ``add`` (ONNX's
    loop order, so onnxruntime gives np.add.at's bits); the tangent's ``ordered_take`` a gather."""
    pytest.importorskip("jax2onnx")  # the onnx extra (the wheel's fast tier runs without it)
    pytest.importorskip("onnxruntime")
    import dmljax.onnx  # noqa: PLC0415
    from tests._util import run_onnx  # noqa: PLC0415

    index = np.array([1, 1, 0, 1, 2], np.int32)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    ct = np.array([[1e8, 1], [1, 2], [3, 4], [-1e8, 5], [7, 8]], np.float32)
    vjp = lambda x, c: jax.vjp(lambda x: dmljax.gather(x, index, 0), x)[1](c)[0]  # noqa: E731
    model = dmljax.onnx.export(vjp, x, ct, opset=18)
    assert "ScatterElements" in [node.op_type for node in model.graph.node]
    want = np.zeros((3, 2), np.float32)
    np.add.at(want, index, ct)
    assert run_onnx(model, x, ct)[0].tobytes() == want.tobytes()
    jvp = lambda x, dx: jax.jvp(lambda x: dmljax.gather(x, index, 0), (x,), (dx,))[1]  # noqa: E731
    model = dmljax.onnx.export(jvp, x, x[::-1].copy(), opset=18)
    np.testing.assert_array_equal(run_onnx(model, x, x[::-1].copy())[0], x[::-1][index])
