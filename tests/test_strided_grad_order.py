"""read_tensor's gradient with overlapping strides adds the cotangent in row-major order (issue 38, item 1).

The oracle is a NumPy loop over the logical tensor in row-major order, adding each
cotangent element into the buffer element it was read from (``np.add.at``'s order), with
values whose sums change with the order (+-big, +-1). Checked on one CPU device (JAX's
in-order scatter there) and with the off-CPU formulation forced (config
``cpu_ordered_scatter`` off: the sorted fold), and on 8 host devices with the cotangent
sharded. Reads without overlapping strides keep their program. Design note:
docs/design/gather-gradient.md ("read_tensor").
"""

import textwrap

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import dmljax
from dmljax import TensorDesc, read_tensor
from dmljax._buffers.strided import read_operand
from tests.multidevice import run_json

DTYPES = ["float16", "bfloat16", "float32"]
BIG = {"float16": 2048.0, "bfloat16": 256.0, "float32": 1e8}
FORCED = {"one cpu device": {}, "sorted fold": {"cpu_ordered_scatter": False}}
# (sizes, strides, buffer length): every layout has elements that share an offset through nonzero strides.
OVERLAPPING = {
    "sliding windows": ((6, 5), (1, 1), 10),
    "coprime strides": ((9, 11), (2, 3), 50),
    "batch of windows, padded rows": ((3, 5, 5), (10, 1, 1), 32),
    "batch in logical dimension 1": ((4, 3, 5), (1, 40, 1), 130),
    "broadcast and windows": ((3, 4, 4), (0, 1, 1), 7),
}


def _np_dtype(dtype):
    return np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)


def _values(rng, shape, dtype):
    """+-big, +-1 and spread magnitudes: sums that change with the order."""
    v = rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)
    pick = rng.random(shape) < 0.5
    v[pick] = rng.choice([BIG[dtype], -BIG[dtype], 1.0, -1.0], int(pick.sum()))
    return v.astype(_np_dtype(dtype))


def _loop_gradient(ct, strides, length, reverse=False):
    """Each cotangent element added into its offset, in the logical tensor's row-major order."""
    out = np.zeros(length, ct.dtype)
    coordinates = list(np.ndindex(*ct.shape))
    for c in coordinates[::-1] if reverse else coordinates:
        offset = sum(i * s for i, s in zip(c, strides, strict=True))
        out[offset] = out[offset] + ct[c]
    return out


def _vjp(read, desc, ct, length):
    _, vjp = jax.vjp(lambda b: read(b, desc), jnp.zeros(length, ct.dtype))
    return np.asarray(jax.jit(vjp)(jnp.asarray(ct))[0])


@pytest.mark.parametrize("forced", FORCED)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", OVERLAPPING)
def test_gradient_adds_the_cotangent_in_row_major_order(layout, dtype, forced):
    sizes, strides, length = OVERLAPPING[layout]
    rng = np.random.default_rng(sorted(OVERLAPPING).index(layout) * 10 + DTYPES.index(dtype))
    ct = _values(rng, sizes, dtype)
    want = _loop_gradient(ct, strides, length)  # padding and the buffer's tail: exactly 0
    with dmljax.config.override(**FORCED[forced]):
        got = _vjp(read_tensor, TensorDesc(dtype, sizes, strides=strides), ct, length)
    assert got.dtype == want.dtype
    assert got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("layout", OVERLAPPING)
def test_the_values_are_order_sensitive(layout):
    """Reversed, the loop gives other bits (else the test above could not fail)."""
    sizes, strides, length = OVERLAPPING[layout]
    ct = _values(np.random.default_rng(sorted(OVERLAPPING).index(layout) * 10 + 2), sizes, "float32")
    assert _loop_gradient(ct, strides, length, reverse=True).tobytes() != _loop_gradient(ct, strides, length).tobytes()


def test_broadcast_and_overlap_differ_from_jax_transpose_on_one_device():
    """JAX's transpose sums a broadcast dimension first (XLA's reduce): not the loop's order."""
    sizes, strides, length = OVERLAPPING["broadcast and windows"]
    desc = TensorDesc("float32", sizes, strides=strides)
    ct = _values(np.random.default_rng(3), sizes, "float32")
    want = _loop_gradient(ct, strides, length)
    with dmljax.config.override(ordered_gather_gradients=False):
        plain = _vjp(read_tensor, desc, ct, length)
    assert plain.tobytes() != want.tobytes()
    assert _vjp(read_tensor, desc, ct, length).tobytes() == want.tobytes()


@pytest.mark.parametrize("forced", FORCED)
def test_read_operand_takes_the_ordered_gradient(forced):
    """The descriptor layer's input read (compile_operator) differentiates the same way."""
    sizes, strides, length = OVERLAPPING["broadcast and windows"]
    ct = _values(np.random.default_rng(4), sizes, "float32")
    with dmljax.config.override(**FORCED[forced]):
        got = _vjp(read_operand, TensorDesc("float32", sizes, strides=strides), ct, length)
    assert got.tobytes() == _loop_gradient(ct, strides, length).tobytes()


def test_forward_jvp_and_second_order_stay_exact():
    """The values are the plain read's bit for bit; the tangent is the read of the tangent;
    grad of grad and jvp of grad add in the loop's order."""
    sizes, strides, length = OVERLAPPING["coprime strides"]
    desc = TensorDesc("float32", sizes, strides=strides)
    rng = np.random.default_rng(5)
    b, v, w = (jnp.asarray(_values(rng, (length,), "float32")) for _ in range(3))
    ct = _values(rng, sizes, "float32")
    with dmljax.config.override(ordered_gather_gradients=False):
        plain = np.asarray(jax.jit(read_tensor, static_argnums=1)(b, desc))
    with dmljax.config.override(cpu_ordered_scatter=False):
        out, tangent = jax.jit(lambda b, v: jax.jvp(lambda b: read_tensor(b, desc), (b,), (v,)))(b, v)
        assert np.asarray(out).tobytes() == plain.tobytes()
        assert np.asarray(tangent).tobytes() == np.asarray(read_tensor(v, desc)).tobytes()
        f = lambda b: jnp.sum(read_tensor(b, desc) ** 2 * ct)  # noqa: E731
        hvp = jax.jit(lambda b, v: jax.jvp(jax.grad(f), (b,), (v,))[1])(b, v)
        want = _loop_gradient(2 * np.asarray(read_tensor(v, desc)) * ct, strides, length)
        assert np.asarray(hvp).tobytes() == want.tobytes()
        second = jax.jit(jax.grad(lambda b: jnp.vdot(jax.grad(f)(b), w)))(b)
        want = _loop_gradient(2 * np.asarray(read_tensor(w, desc)) * ct, strides, length)
        assert np.asarray(second).tobytes() == want.tobytes()


def test_vmap_of_the_gradient_is_per_row():
    sizes, strides, length = OVERLAPPING["sliding windows"]
    desc = TensorDesc("float32", sizes, strides=strides)
    ct = _values(np.random.default_rng(6), (2, *sizes), "float32")
    with dmljax.config.override(cpu_ordered_scatter=False):
        vjp = lambda c: jax.vjp(lambda b: read_tensor(b, desc), jnp.zeros(length))[1](c)[0]  # noqa: E731
        got = np.asarray(jax.jit(jax.vmap(vjp))(jnp.asarray(ct)))
    for row in range(2):
        assert got[row].tobytes() == _loop_gradient(ct[row], strides, length).tobytes()


UNCHANGED = {
    "packed": ((2, 3), None, 6),
    "interleaved": ((2, 3), (3, 2), 8),
    "padded unevenly": ((2, 3, 4), (20, 6, 1), 40),
    "broadcast rows": ((4, 3), (0, 1), 3),
    "batch of interleaved": ((4, 3, 2), (10, 2, 3), 40),
}


@pytest.mark.parametrize("layout", UNCHANGED)
def test_reads_without_overlap_keep_their_program(layout):
    """No overlapping strides: the same jaxpr as with the ordered gradients off, and no ordered add."""
    sizes, strides, length = UNCHANGED[layout]
    desc, b = TensorDesc("float32", sizes, strides=strides), jnp.zeros(length)
    grad = jax.grad(lambda b: jnp.sum(read_tensor(b, desc) * 3.0))
    programs = {}
    for ordered in (True, False):
        with dmljax.config.override(ordered_gather_gradients=ordered):
            programs[ordered] = str(jax.make_jaxpr(lambda b: read_tensor(b, desc))(b)), str(jax.make_jaxpr(grad)(b))
    assert programs[True] == programs[False]
    assert not any("ordered" in text or "custom_jvp" in text for text in programs[True])


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_overlapping_reads_keep_their_forward_program(dtype):
    """Overlapping strides: the same compiled forward program; the ordered add only in the gradient
    (floats; an integer read has no gradient and keeps its program altogether)."""
    sizes, strides, length = OVERLAPPING["batch of windows, padded rows"]
    desc, b = TensorDesc(dtype, sizes, strides=strides), jnp.zeros(length, dtype)
    texts = {}
    for ordered in (True, False):
        with dmljax.config.override(ordered_gather_gradients=ordered):
            texts[ordered] = jax.jit(lambda b: read_tensor(b, desc)).lower(b).compile().as_text()
    assert _instructions(texts[True]) == _instructions(texts[False])
    if dtype == "float32":
        grad = jax.make_jaxpr(jax.grad(lambda b: jnp.sum(read_tensor(b, desc))))(b)
        assert "dmljax_ordered_add" in str(grad)
    else:
        assert "custom_jvp" not in str(jax.make_jaxpr(lambda b: read_tensor(b, desc))(b))


def _instructions(text):
    """The optimised HLO's instruction lines, names and metadata dropped."""
    lines = [line.split(" = ", 1)[1] for line in text.splitlines() if " = " in line]
    return sorted(line.split(", metadata=")[0].split("(", 1)[0] for line in lines)


SHARDED_SCRIPT = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import dmljax

    rng = np.random.default_rng(0)
    mesh = Mesh(np.array(jax.devices()), ("d",))
    result = {}
    cases = {"windows": ((8 * 16, 24), (4, 1)), "broadcast and windows": ((8, 40, 6), (0, 1, 1))}
    for name, (sizes, strides) in cases.items():
        desc = dmljax.TensorDesc("float32", sizes, strides=strides)
        length = desc.min_buffer_elements + 3
        ct = (rng.standard_normal(sizes) * 10.0 ** rng.uniform(-2, 2, sizes)).astype(np.float32)
        pick = rng.random(sizes) < 0.5
        ct[pick] = rng.choice([1e8, -1e8, 1.0, -1.0], int(pick.sum())).astype(np.float32)
        want = np.zeros(length, np.float32)
        for c in np.ndindex(*sizes):
            offset = sum(i * s for i, s in zip(c, strides))
            want[offset] = want[offset] + ct[c]
        def grad(b, c):
            return jax.vjp(lambda b: dmljax.read_tensor(b, desc), b)[1](c)[0]
        cts = jax.device_put(ct, NamedSharding(mesh, P("d")))
        got = np.asarray(jax.jit(grad)(jnp.zeros(length), cts))
        result[name] = got.tobytes() == want.tobytes()
        with dmljax.config.override(ordered_gather_gradients=False):
            old = np.asarray(jax.jit(grad)(jnp.zeros(length), cts))
        result["old " + name] = old.tobytes() == want.tobytes()
    print(json.dumps(result))
    """
)


@pytest.mark.system
@pytest.mark.slow
def test_eight_devices_with_the_cotangent_sharded_equal_the_loop():
    """The cotangent sharded over 8 host devices: the loop's bits, as on one device."""
    result = run_json(SHARDED_SCRIPT)
    for key, same in result.items():
        if not key.startswith("old "):
            assert same, key
    assert not all(result[key] for key in result if key.startswith("old ")), "JAX's transposes matched by chance"


def test_an_unregistered_ordered_take_fails_clearly(monkeypatch):
    from dmljax._core import ordered_hooks  # noqa: PLC0415

    monkeypatch.setattr(ordered_hooks, "_TAKE", [])
    with pytest.raises(RuntimeError, match="no ordered take is registered; import dmljax"):
        ordered_hooks.ordered_take(jnp.zeros(2), jnp.zeros(1, jnp.uint32))
