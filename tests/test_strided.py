"""read_tensor / write_tensor against seed 002's examples and the NumPy loop oracle."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from dmljax import TensorDesc, ValidationError, packed_strides, read_tensor, write_tensor
from dmljax._layout import has_aliasing, plan_layout
from tests import reference

ABCDEF = np.array([ord(c) for c in "ABCDEF"], np.uint8)


def letters(array) -> str:
    return "".join(chr(int(v)) for v in np.asarray(array).reshape(-1))


# --- seed 002 --------------------------------------------------------------------------


def test_seed002_row_major_hw():
    assert letters(read_tensor(ABCDEF, TensorDesc("uint8", (2, 3)))) == "ABCDEF"


def test_seed002_column_major_wh():
    # Buffer A D B E C F holds the logical 2x3 tensor ABC/DEF with strides {1, 2}.
    buffer = np.array([ord(c) for c in "ADBECF"], np.uint8)
    assert letters(read_tensor(buffer, TensorDesc("uint8", (2, 3), strides=(1, 2)))) == "ABCDEF"
    logical = ABCDEF.reshape(2, 3)
    written = write_tensor(np.zeros(6, np.uint8), TensorDesc("uint8", (2, 3), strides=(1, 2)), logical)
    assert letters(written) == "ADBECF"


def test_seed002_dhw_element_h():
    buffer = np.array([ord(c) for c in "ABCDEFGHIJKL"], np.uint8)
    tensor = read_tensor(buffer, TensorDesc("uint8", (2, 2, 3)))
    assert chr(int(tensor[1, 0, 1])) == "H"


def test_seed002_broadcast_rows():
    out = read_tensor(ABCDEF[:3], TensorDesc("uint8", (2, 3), strides=(0, 1)))
    assert letters(out) == "ABCABC"


def test_seed002_padded_rows():
    buffer = np.array([ord(c) for c in "ABCxxDEFxx"], np.uint8)
    assert letters(read_tensor(buffer, TensorDesc("uint8", (2, 3), strides=(5, 1)))) == "ABCDEF"
    # The buffer may stop right after the last element (8 elements, not 10).
    assert letters(read_tensor(buffer[:8], TensorDesc("uint8", (2, 3), strides=(5, 1)))) == "ABCDEF"
    written = write_tensor(
        np.full(10, ord("x"), np.uint8), TensorDesc("uint8", (2, 3), strides=(5, 1)), ABCDEF.reshape(2, 3)
    )
    assert letters(written) == "ABCxxDEFxx"


def test_seed002_nhwc_3x5():
    # Logical NCHW {1, 1, 3, 5} stored NHWC: strides {15, 1, 5, 1}.
    values = np.arange(15, dtype=np.float32)
    desc = TensorDesc("float32", (1, 1, 3, 5), strides=packed_strides((1, 1, 3, 5), "NHWC"))
    np.testing.assert_array_equal(read_tensor(values, desc), values.reshape(1, 1, 3, 5))


def test_nhwc_with_channels_matches_transpose():
    nhwc = np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3)
    desc = TensorDesc("float32", (2, 3, 4, 5), strides=packed_strides((2, 3, 4, 5), "NHWC"))
    np.testing.assert_array_equal(read_tensor(nhwc.reshape(-1), desc), nhwc.transpose(0, 3, 1, 2))
    back = write_tensor(np.zeros(nhwc.size, np.float32), desc, nhwc.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(back, nhwc.reshape(-1))


# --- random descriptors against the oracle --------------------------------------------


def random_desc(rng: np.random.Generator, dtype="float32") -> TensorDesc:
    rank = int(rng.integers(1, 9))
    sizes = tuple(int(n) for n in rng.integers(1, 5, rank))
    kind = rng.choice(["packed", "permuted", "padded", "broadcast", "arbitrary"])
    if kind == "packed":
        return TensorDesc(dtype, sizes)
    perm = rng.permutation(rank)
    strides = [0] * rank
    step = 1
    for d in reversed(perm):
        strides[d] = step
        step *= sizes[d] + (int(rng.integers(0, 3)) if kind == "padded" else 0)
    if kind == "broadcast":
        strides[int(rng.integers(rank))] = 0
    if kind == "arbitrary":
        strides = [int(s) for s in rng.integers(0, 7, rank)]
    return TensorDesc(dtype, sizes, strides=tuple(strides))


@pytest.mark.parametrize("seed", range(4))
def test_read_random_descriptors_match_oracle(seed):
    rng = np.random.default_rng(seed)
    read = jax.jit(read_tensor, static_argnums=1)
    for _ in range(15):
        desc = random_desc(rng)
        extra = int(rng.integers(0, 4))
        buffer = rng.standard_normal(desc.min_buffer_elements + extra).astype(np.float32)
        expected = reference.read_tensor(buffer, desc.sizes, desc.strides)
        np.testing.assert_array_equal(read_tensor(buffer, desc), expected)
        np.testing.assert_array_equal(read(buffer, desc), expected)


@pytest.mark.parametrize("seed", range(4))
def test_write_random_descriptors_match_oracle(seed):
    rng = np.random.default_rng(100 + seed)
    write = jax.jit(write_tensor, static_argnums=1)
    checked = 0
    while checked < 15:
        desc = random_desc(rng, "int32")
        if has_aliasing(desc.sizes, desc.strides):
            continue
        checked += 1
        buffer = rng.integers(-100, 0, desc.min_buffer_elements + int(rng.integers(0, 4))).astype(np.int32)
        value = rng.integers(0, 100, desc.sizes).astype(np.int32)
        expected = reference.write_tensor(buffer, desc.sizes, desc.strides, value)
        np.testing.assert_array_equal(write_tensor(buffer, desc, value), expected)
        np.testing.assert_array_equal(write(buffer, desc, value), expected)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8", "uint16", "bool", "complex64", "uint32"])
def test_read_write_every_type(dtype):
    desc = TensorDesc(dtype, (2, 3), strides=(1, 2))
    buffer = np.arange(6).astype(jnp.dtype(dtype))
    tensor = read_tensor(buffer, desc)
    assert tensor.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(write_tensor(np.zeros_like(buffer), desc, tensor), buffer)


def test_64bit_types_under_x64(x64):
    desc = TensorDesc("int64", (2, 3), strides=(1, 2))
    buffer = np.arange(6, dtype=np.int64) + 2**40
    np.testing.assert_array_equal(read_tensor(buffer, desc), buffer.reshape(3, 2).T)


def test_64bit_types_without_x64_say_how_to_enable():
    with pytest.raises(ValidationError, match=r"buffer.dtype must be FLOAT64 like the descriptor; 64-bit types need"):
        read_tensor(jnp.zeros(6), TensorDesc("float64", (2, 3)))


# --- the cheap lowering is what runs ----------------------------------------------------


@pytest.mark.parametrize(
    ("sizes", "strides", "nested"),
    [
        ((2, 3, 4, 5), None, True),
        ((2, 3, 4, 5), (60, 1, 15, 3), True),  # NHWC
        ((2, 3, 4), (0, 4, 1), True),  # broadcast
        ((2, 3, 4), (20, 6, 1), True),  # padded
        ((2, 3), (1, 1), False),  # overlapping windows
    ],
)
def test_layouts_lower_without_gather_when_nested(sizes, strides, nested):
    desc = TensorDesc("float32", sizes, strides=strides)
    assert plan_layout(desc.sizes, desc.strides).nested is nested
    buffer = jnp.zeros(desc.min_buffer_elements, jnp.float32)
    hlo = jax.jit(read_tensor, static_argnums=1).lower(buffer, desc).as_text()
    assert ("gather" in hlo) is not nested


# --- errors ----------------------------------------------------------------------------


def test_read_errors():
    desc = TensorDesc("float32", (2, 3), strides=(5, 1))
    with pytest.raises(
        ValidationError, match=r"read_tensor: buffer length must be at least 8 elements; got buffer length=7"
    ):
        read_tensor(np.zeros(7, np.float32), desc)
    with pytest.raises(
        ValidationError,
        match=r"read_tensor: buffer.dtype must be FLOAT32 like the descriptor; got buffer.dtype='int32'",
    ):
        read_tensor(np.zeros(8, np.int32), desc)
    with pytest.raises(
        ValidationError, match=r"read_tensor: buffer.shape must be 1-D \(a flat buffer\); got buffer.shape=\(2, 4\)"
    ):
        read_tensor(np.zeros((2, 4), np.float32), desc)
    with pytest.raises(TypeError, match=r"read_tensor: desc must be a TensorDesc; got desc=\(2, 3\)"):
        read_tensor(np.zeros(8, np.float32), (2, 3))


def test_write_errors():
    with pytest.raises(
        ValidationError,
        match=r"write_tensor: desc.strides must describe each element at its own offset .*; got desc.strides=\(0, 1\)",
    ):
        write_tensor(
            np.zeros(3, np.float32), TensorDesc("float32", (2, 3), strides=(0, 1)), np.zeros((2, 3), np.float32)
        )
    with pytest.raises(ValidationError, match=r"desc.strides=\(1, 1\)"):
        write_tensor(
            np.zeros(4, np.float32), TensorDesc("float32", (2, 3), strides=(1, 1)), np.zeros((2, 3), np.float32)
        )
    desc = TensorDesc("float32", (2, 3))
    with pytest.raises(
        ValidationError, match=r"write_tensor: value.shape must equal desc.sizes \(2, 3\); got value.shape=\(3, 2\)"
    ):
        write_tensor(np.zeros(6, np.float32), desc, np.zeros((3, 2), np.float32))
    with pytest.raises(ValidationError, match=r"write_tensor: value.dtype must be FLOAT32; got value.dtype='int32'"):
        write_tensor(np.zeros(6, np.float32), desc, np.zeros((2, 3), np.int32))


# --- transforms ---------------------------------------------------------------------------


def test_grad_of_broadcast_read_sums():
    desc = TensorDesc("float32", (4, 3), strides=(0, 1))
    grad = jax.grad(lambda b: jnp.sum(read_tensor(b, desc) * jnp.arange(12.0).reshape(4, 3)))(jnp.ones(3))
    np.testing.assert_allclose(grad, np.arange(12.0).reshape(4, 3).sum(0))


@pytest.mark.parametrize("strides", [None, (1, 2), (0, 1), (5, 1), (1, 1)])
def test_check_grads_read_and_write(strides):
    desc = TensorDesc("float32", (2, 3), strides=strides)
    buffer = jnp.linspace(-1.0, 1.0, desc.min_buffer_elements + 1)
    check_grads(lambda b: read_tensor(b, desc), (buffer,), order=2, modes=("fwd", "rev"))
    if not has_aliasing(desc.sizes, desc.strides):
        value = jnp.linspace(2.0, 3.0, 6).reshape(2, 3)
        check_grads(lambda b, v: write_tensor(b, desc, v), (buffer, value), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("strides", [None, (1, 2), (0, 1), (5, 1), (1, 1)])
def test_vmap_matches_loop(strides):
    desc = TensorDesc("float32", (2, 3), strides=strides)
    buffers = jnp.arange(4 * (desc.min_buffer_elements + 1), dtype=jnp.float32).reshape(4, -1)
    batched = jax.vmap(lambda b: read_tensor(b, desc))(buffers)
    np.testing.assert_array_equal(batched, jnp.stack([read_tensor(b, desc) for b in buffers]))
    if not has_aliasing(desc.sizes, desc.strides):
        values = -jnp.arange(24, dtype=jnp.float32).reshape(4, 2, 3)
        batched = jax.vmap(lambda b, v: write_tensor(b, desc, v))(buffers, values)
        looped = jnp.stack([write_tensor(b, desc, v) for b, v in zip(buffers, values, strict=True)])
        np.testing.assert_array_equal(batched, looped)


# --- no ops beyond the hand-written formulation -------------------------------------------


def _opcodes(fn, *args) -> list[str]:
    """The sorted opcodes of the optimised HLO's instructions (names and metadata dropped)."""
    text = jax.jit(fn).lower(*args).compile().as_text()
    codes = []
    for line in text.splitlines():
        if " = " in line and "(" in line and not line.lstrip().startswith(("HloModule", "ENTRY", "%fused", "%wrapped")):
            rhs = line.split(" = ", 1)[1]
            codes.append(rhs.split("(", 1)[0].split()[-1])
    return sorted(codes)


_HAND_WRITTEN = [
    ("packed", (2, 16, 8, 32), None, lambda b: b.reshape(2, 16, 8, 32)),
    ("nhwc", (2, 16, 8, 32), "NHWC", lambda b: b.reshape(2, 8, 32, 16).transpose(0, 3, 1, 2)),
    ("broadcast", (2, 16, 8, 32), (0, 0, 0, 1), lambda b: jnp.broadcast_to(b, (2, 16, 8, 32))),
    (
        "padded",
        (2, 16, 8, 32),
        (16 * 8 * 40, 8 * 40, 40, 1),
        lambda b: jnp.pad(b, (0, 8)).reshape(2, 16, 8, 40)[..., :32],
    ),
]


@pytest.mark.parametrize(("name", "sizes", "layout", "hand_written"), _HAND_WRITTEN, ids=[c[0] for c in _HAND_WRITTEN])
def test_read_compiles_to_the_hand_written_ops(name, sizes, layout, hand_written):
    strides = packed_strides(sizes, layout) if isinstance(layout, str) else layout
    desc = TensorDesc("float32", sizes, strides=strides)
    buffer = jnp.zeros(desc.min_buffer_elements, jnp.float32)
    assert _opcodes(lambda b: read_tensor(b, desc), buffer) == _opcodes(hand_written, buffer)
