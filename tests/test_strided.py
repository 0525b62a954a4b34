"""read_tensor / write_tensor against the strides page's examples and the NumPy loop oracle.

The page: https://learn.microsoft.com/en-us/windows/ai/directml/dml-strides
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export, lax
from jax.test_util import check_grads

import dmljax
from dmljax import TensorDesc, ValidationError, config, packed_strides, read_tensor, write_tensor
from dmljax._buffers.layout import has_aliasing, plan_layout, plan_offsets
from dmljax._buffers.transpose import _inner_axis_out, _tiled, inner_axis_target
from tests import reference

ABCDEF = np.array([ord(c) for c in "ABCDEF"], np.uint8)


def letters(array) -> str:
    return "".join(chr(int(v)) for v in np.asarray(array).reshape(-1))


# --- the strides page's examples -------------------------------------------------------


def test_strides_page_row_major_hw():
    assert letters(read_tensor(ABCDEF, TensorDesc("uint8", (2, 3)))) == "ABCDEF"


def test_strides_page_column_major_wh():
    # Buffer A D B E C F holds the logical 2x3 tensor ABC/DEF with strides {1, 2}.
    buffer = np.array([ord(c) for c in "ADBECF"], np.uint8)
    assert letters(read_tensor(buffer, TensorDesc("uint8", (2, 3), strides=(1, 2)))) == "ABCDEF"
    logical = ABCDEF.reshape(2, 3)
    written = write_tensor(np.zeros(6, np.uint8), TensorDesc("uint8", (2, 3), strides=(1, 2)), logical)
    assert letters(written) == "ADBECF"


def test_strides_page_dhw_element_h():
    buffer = np.array([ord(c) for c in "ABCDEFGHIJKL"], np.uint8)
    tensor = read_tensor(buffer, TensorDesc("uint8", (2, 2, 3)))
    assert chr(int(tensor[1, 0, 1])) == "H"


def test_strides_page_broadcast_rows():
    out = read_tensor(ABCDEF[:3], TensorDesc("uint8", (2, 3), strides=(0, 1)))
    assert letters(out) == "ABCABC"


def test_strides_page_padded_rows():
    buffer = np.array([ord(c) for c in "ABCxxDEFxx"], np.uint8)
    assert letters(read_tensor(buffer, TensorDesc("uint8", (2, 3), strides=(5, 1)))) == "ABCDEF"
    # The buffer may stop right after the last element (8 elements, not 10).
    assert letters(read_tensor(buffer[:8], TensorDesc("uint8", (2, 3), strides=(5, 1)))) == "ABCDEF"
    written = write_tensor(
        np.full(10, ord("x"), np.uint8), TensorDesc("uint8", (2, 3), strides=(5, 1)), ABCDEF.reshape(2, 3)
    )
    assert letters(written) == "ABCxxDEFxx"


def test_strides_page_nhwc_3x5():
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.hlo
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
    """If this fails: docs/design/strided-lowering.md (nested layouts are slices and reshapes, others a gather)."""
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


@pytest.mark.slow
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
    """The sorted opcodes of the optimised HLO's instructions (names and metadata dropped): XLA CPU's under `cpu`."""
    text = jax.jit(fn).lower(*args).compile().as_text()
    codes = []
    for line in text.splitlines():
        if " = " in line and "(" in line and not line.lstrip().startswith(("HloModule", "ENTRY", "%fused", "%wrapped")):
            rhs = line.split(" = ", 1)[1]
            codes.append(rhs.split("(", 1)[0].split()[-1])
    return sorted(codes)


_HAND_WRITTEN = [
    ("packed", (2, 16, 8, 32), None, lambda b: b.reshape(2, 16, 8, 32)),
    (  # XLA CPU: 16-pixel tiles, fused into one loop below config.tiled_transpose_two_pass_min_bytes
        "nhwc",
        (2, 16, 8, 32),
        "NHWC",
        lambda b: b.reshape(2, 16, 16, 16).transpose(0, 1, 3, 2).transpose(0, 2, 1, 3).reshape(2, 16, 8, 32),
    ),
    ("broadcast", (2, 16, 8, 32), (0, 0, 0, 1), lambda b: jnp.broadcast_to(b, (2, 16, 8, 32))),
    (
        "padded",
        (2, 16, 8, 32),
        (16 * 8 * 40, 8 * 40, 40, 1),
        lambda b: jnp.pad(b, (0, 8)).reshape(2, 16, 8, 40)[..., :32],
    ),
]


@pytest.mark.hlo
@pytest.mark.parametrize(("name", "sizes", "layout", "hand_written"), _HAND_WRITTEN, ids=[c[0] for c in _HAND_WRITTEN])
def test_read_compiles_to_the_hand_written_ops(name, sizes, layout, hand_written, cpu):
    """If this fails: docs/design/strided-lowering.md (each layout's hand-written equivalent)."""
    strides = packed_strides(sizes, layout) if isinstance(layout, str) else layout
    desc = TensorDesc("float32", sizes, strides=strides)
    buffer = jnp.zeros(desc.min_buffer_elements, jnp.float32)
    assert _opcodes(lambda b: read_tensor(b, desc), buffer) == _opcodes(hand_written, buffer)


# --- offsets past 2**31 -------------------------------------------------------------------

# Interleaved: no dimension's stride reaches past the other's extent, so both stay in the
# offsets core; the largest offset is 3 * 2**30 + 1, inside [2**31, 2**32).
_BIG_INTERLEAVED = TensorDesc("uint32", (3, 2), strides=(2**30, 2**30 + 1))
# A batch of overlapping windows whose rows start near 2**31: one level, a small core.
_BIG_BATCHED = TensorDesc("uint32", (2, 4, 3), strides=(2**31 - 1, 1, 1))


def _expected_offsets(desc: TensorDesc) -> np.ndarray:
    """What a read of an iota buffer returns: each element's offset (the oracle's `offset`)."""
    out = np.zeros(desc.sizes, np.uint32)
    for c in np.ndindex(*desc.sizes):
        out[c] = reference.offset(c, desc.strides)
    return out


@pytest.mark.parametrize("desc", [_BIG_INTERLEAVED, _BIG_BATCHED], ids=["interleaved", "batched-windows"])
def test_read_offsets_past_2_31_are_exact(desc):
    # The buffer is an iota inside jit: XLA fuses it into the gather, no 16 GiB buffer exists.
    length = 2**32 - 1
    assert desc.min_buffer_elements > 2**31 and not jax.config.jax_enable_x64
    read = jax.jit(lambda: read_tensor(lax.iota(jnp.uint32, length), desc))
    np.testing.assert_array_equal(read(), _expected_offsets(desc))


def test_write_offsets_past_2_31_are_exact():
    # A uint8 buffer of 2**31 + 3 elements (2 GiB, made inside jit); only slices come back.
    desc = TensorDesc("uint8", (3, 2), strides=(0x2AAAAAAB, 0x2AAAAAAC))
    length = desc.min_buffer_elements
    offsets = sorted(int(reference.offset(c, desc.strides)) for c in np.ndindex(*desc.sizes))
    assert offsets[-1] >= 2**31 and not plan_offsets(desc.sizes, desc.strides).levels
    value = np.arange(200, 206, dtype=np.uint8).reshape(3, 2)

    positions = sorted({p for o in offsets for p in (o - 1, o, o + 1) if 0 <= p < length})

    @jax.jit
    def around_offsets(value):
        out = write_tensor(lax.iota(jnp.uint8, length), desc, value)
        return jnp.concatenate([lax.slice(out, (p,), (p + 1,)) for p in positions])

    written = {int(reference.offset(c, desc.strides)): value[c] for c in np.ndindex(*desc.sizes)}
    want = np.array([written.get(p, p % 256) for p in positions], np.uint8)
    np.testing.assert_array_equal(around_offsets(value), want)


def test_offsets_core_beyond_uint32_needs_x64_and_names_the_call():
    desc = TensorDesc("float32", (3, 2), strides=(2**31, 2**31 + 1))
    with pytest.raises(ValidationError, match=r"^write_tensor: desc.strides must keep the offsets .*largest"):
        jax.eval_shape(lambda b, v: write_tensor(b, desc, v), *_shapes(desc))
    with pytest.raises(ValidationError, match=r"^read_tensor: desc.strides must .*got desc.strides=\(2147483648, "):
        jax.eval_shape(lambda b: read_tensor(b, desc), _shapes(desc)[0])


def _shapes(desc: TensorDesc):
    buffer = jax.ShapeDtypeStruct((desc.min_buffer_elements,), desc.dtype.dtype)
    return buffer, jax.ShapeDtypeStruct(desc.sizes, desc.dtype.dtype)


@pytest.mark.parametrize(
    ("sizes", "strides", "levels", "core"),
    [
        ((4, 3, 3), (100, 1, 1), ((0, 4, 100),), (1, 2)),  # batch of overlapping windows
        ((3, 4, 5), (1, 100, 1), ((1, 4, 100),), (0, 2)),  # the batch need not be dimension 0
        ((2, 3, 4), (20, 6, 1), ((0, 2, 20), (1, 3, 6), (2, 4, 1)), ()),  # padded by uneven amounts
        ((3, 2), (2, 3), (), (0, 1)),  # interleaved: nothing to split
        ((5, 1, 3), (0, 7, 1), ((2, 3, 1),), ()),  # broadcast and size-1 dimensions are not levels
    ],
)
def test_plan_offsets_splits_nested_outer_levels(sizes, strides, levels, core):
    plan = plan_offsets(sizes, strides)
    assert (plan.levels, plan.core_dims) == (levels, core)
    # Every level's stride reaches past all offsets inside it.
    for i, (_, _, stride) in enumerate(plan.levels):
        core = list(zip(plan.core_sizes, plan.core_strides, strict=True))
        inner = [(n, s) for _, n, s in plan.levels[i + 1 :]] + core
        assert stride >= sum((n - 1) * s for n, s in inner) + 1


@pytest.mark.parametrize(
    ("sizes", "strides"),
    [((4, 3, 3), (100, 1, 1)), ((3, 4, 5), (1, 100, 1)), ((2, 3, 4), (20, 6, 1)), ((2, 3, 2), (7, 2, 3))],
)
def test_split_layouts_read_and_write_match_oracle(sizes, strides):
    desc = TensorDesc("int32", sizes, strides=strides)
    plan = plan_offsets(sizes, strides)
    whole_rows = plan.levels[0][1] * plan.levels[0][2] if plan.levels else desc.min_buffer_elements
    # Short of whole rows: one flat gather/scatter; whole rows (or more): split into levels.
    for length in {desc.min_buffer_elements, desc.min_buffer_elements + 1, whole_rows, whole_rows + 3}:
        buffer = -np.arange(length, dtype=np.int32)
        np.testing.assert_array_equal(read_tensor(buffer, desc), reference.read_tensor(buffer, sizes, strides))
        if not has_aliasing(sizes, strides):
            value = np.arange(desc.element_count, dtype=np.int32).reshape(sizes)
            expected = reference.write_tensor(buffer, sizes, strides, value)
            np.testing.assert_array_equal(write_tensor(buffer, desc, value), expected)


# --- aliasing ------------------------------------------------------------------------------


def test_has_aliasing_matches_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(600):
        rank = int(rng.integers(1, 5))
        sizes = tuple(int(n) for n in rng.integers(1, 6, rank))
        strides = tuple(int(s) for s in rng.integers(0, 14, rank))
        offsets = [reference.offset(c, strides) for c in np.ndindex(*sizes)]
        assert has_aliasing(sizes, strides) == (len(set(offsets)) != len(offsets)), (sizes, strides)


@pytest.mark.parametrize(
    ("sizes", "strides", "aliases"),
    [
        ((4096, 4096), (4097, 2), False),  # decided from the strides (two interleaved dimensions)
        ((256, 256, 256), (65537, 257, 2), True),  # sorted once
        ((2, 4096, 2048), (3, 8194, 4), False),
    ],
)
def test_aliasing_of_16m_interleaved_elements_is_fast(sizes, strides, aliases):
    # Generous bound for a shared machine: ~0.3 s measured; np.unique took 40-80 s.
    start = time.perf_counter()
    assert TensorDesc("float32", sizes, strides=strides).has_aliasing is aliases
    assert time.perf_counter() - start < 5.0


# --- jax.export -------------------------------------------------------------------------


@pytest.mark.parametrize("strides", [None, (1, 2), (5, 1), (1, 1), (0, 1)], ids=str)
def test_export_serialises_and_runs(strides):
    desc = TensorDesc("float32", (2, 3), strides=strides)
    buffer = np.arange(desc.min_buffer_elements + 1, dtype=np.float32)
    buffer_shape = jax.ShapeDtypeStruct(buffer.shape, jnp.float32)
    read = export.deserialize(export.export(jax.jit(lambda b: read_tensor(b, desc)))(buffer_shape).serialize())
    np.testing.assert_array_equal(read.call(buffer), reference.read_tensor(buffer, desc.sizes, desc.strides))
    if not has_aliasing(desc.sizes, desc.strides):
        value = -np.arange(6, dtype=np.float32).reshape(2, 3)
        exported = export.export(jax.jit(lambda b, v: write_tensor(b, desc, v)))(
            buffer_shape, jax.ShapeDtypeStruct(desc.sizes, jnp.float32)
        )
        write = export.deserialize(exported.serialize())
        expected = reference.write_tensor(buffer, desc.sizes, desc.strides, value)
        np.testing.assert_array_equal(write.call(buffer, value), expected)


def _concat_padded_write(buffer, value):
    """The fastest padded-row write found: value rows next to the buffer's pad columns."""
    full = jnp.pad(buffer, (0, 8)).reshape(2, 16, 8, 40)
    rows = jnp.concatenate([value, full[..., 32:]], axis=3)
    return rows.reshape(-1)[: buffer.shape[0]]


@pytest.mark.hlo
def test_padded_write_compiles_to_one_concatenate(cpu):
    """If this fails: docs/design/strided-lowering.md (a padded write is one concatenate)."""
    desc = TensorDesc("float32", (2, 16, 8, 32), strides=(16 * 8 * 40, 8 * 40, 40, 1))
    buffer = jnp.zeros(desc.min_buffer_elements, jnp.float32)
    value = jnp.ones(desc.sizes, jnp.float32)
    ours = _opcodes(lambda b, v: write_tensor(b, desc, v), buffer, value)
    assert ours == _opcodes(_concat_padded_write, buffer, value)
    assert "dynamic-update-slice" not in ours
    np.testing.assert_array_equal(write_tensor(buffer, desc, value), _concat_padded_write(buffer, value))


@pytest.mark.slow
@pytest.mark.parametrize("length", [78, 80], ids=["short-of-whole-rows", "whole-rows"])
def test_split_offsets_path_under_grad_and_vmap(length):
    # A batch of 8 interleaved (3, 2) tensors in rows of 10 (logical dimension 1 is the batch).
    desc = TensorDesc("float32", (3, 8, 2), strides=(2, 10, 3))
    assert plan_offsets(desc.sizes, desc.strides).levels == ((1, 8, 10),) and not desc.has_aliasing
    buffer = jnp.linspace(-1.0, 1.0, length)
    value = jnp.linspace(2.0, 3.0, 48).reshape(3, 8, 2)
    check_grads(lambda b: read_tensor(b, desc), (buffer,), order=2, modes=("fwd", "rev"))
    check_grads(lambda b, v: write_tensor(b, desc, v), (buffer, value), order=2, modes=("fwd", "rev"))
    buffers, values = jnp.stack([buffer, -buffer]), jnp.stack([value, -value])
    looped = jnp.stack([write_tensor(b, desc, v) for b, v in zip(buffers, values, strict=True)])
    np.testing.assert_array_equal(jax.vmap(lambda b, v: write_tensor(b, desc, v))(buffers, values), looped)
    looped = jnp.stack([read_tensor(b, desc) for b in buffers])
    np.testing.assert_array_equal(jax.vmap(lambda b: read_tensor(b, desc))(buffers), looped)
    expected = reference.read_tensor(np.asarray(buffer), desc.sizes, desc.strides)
    np.testing.assert_array_equal(read_tensor(buffer, desc), expected)


# --- NHWC -> NCHW in two passes on XLA CPU --------------------------------------------------

_BIG_NHWC = TensorDesc("float32", (1, 16, 2048, 256), packed_strides((1, 16, 2048, 256), "NHWC"))  # 32 MiB


def _fusions(text: str) -> list[str]:
    return [line for line in text.splitlines() if " fusion(" in line]


@pytest.mark.hlo
def test_big_nhwc_read_compiles_to_two_passes_on_cpu(cpu):
    """If this fails: docs/design/tiled-transpose.md (the two passes and the conditional that keeps them apart)."""
    # Pass 1 inside a conditional (two identical branches, one tile-transposing fusion each),
    # pass 2 after it. If XLA ever folds the conditional or fuses across it, this fails.
    assert _BIG_NHWC.element_count * 4 >= config.tiled_transpose_two_pass_min_bytes
    buffer = jax.ShapeDtypeStruct((_BIG_NHWC.element_count,), jnp.float32)
    text = jax.jit(lambda b: read_tensor(b, _BIG_NHWC)).lower(buffer).compile().as_text()
    assert text.count(" conditional(") == 1
    entry = text.split("ENTRY", 1)[1]
    assert "conditional(" in entry and entry.count(" fusion(") == 2  # the predicate and pass 2
    assert len(_fusions(text)) == 4  # + one per branch
    # Pass 1's output: 2048 * 256 / 16 tiles of 16 channels x 16 pixels, in row-major order.
    assert "(f32[1,32768,256]{2,1,0}) conditional(" in entry


@pytest.mark.slow
def test_big_nhwc_read_bits_and_gradient():
    rng = np.random.default_rng(12)
    host = rng.standard_normal(_BIG_NHWC.element_count).astype(np.float32)
    host[:3] = [np.nan, -0.0, np.inf]  # bits, not values: the predicate's element is a NaN
    expected = host.reshape(1, 2048, 256, 16).transpose(0, 3, 1, 2)
    out = jax.jit(lambda b: read_tensor(b, _BIG_NHWC))(host)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint32), expected.view(np.uint32))
    del out
    cotangent = rng.standard_normal(_BIG_NHWC.sizes).astype(np.float32)
    grad = jax.jit(jax.grad(lambda b, ct: jnp.vdot(read_tensor(b, _BIG_NHWC), ct)))(np.ones_like(host), cotangent)
    np.testing.assert_array_equal(grad, cotangent.transpose(0, 2, 3, 1).reshape(-1))


@pytest.mark.hlo
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8", "uint16", "float32", "int32"])
@pytest.mark.parametrize("k", [0, 1])
def test_two_pass_transpose_is_bit_exact_for_every_width(dtype, k):
    """If this fails: docs/design/tiled-transpose.md (the two passes and the conditional that keeps them apart)."""
    # min_bytes=0 forces the conditional on a small tensor; the batch axes stay outside.
    np_dtype = np.dtype(jnp.dtype(dtype))
    shape = (3, 2, 8, 64 // np_dtype.itemsize, 5)  # 8 tiles of 64 bytes per batch row
    host = np.random.default_rng(1).bytes(int(np.prod(shape)) * np_dtype.itemsize)
    host = np.frombuffer(host, np_dtype).reshape(shape)  # any bits: NaNs, infinities, -0.0
    x = jnp.asarray(host)
    perm = tuple(range(k)) + (4,) + tuple(range(k, 4))
    assert inner_axis_target(perm) == k
    fn = jax.jit(lambda v: _tiled(v, k, min_bytes=0))
    assert "conditional(" in fn.lower(x).compile().as_text()
    out = np.asarray(fn(x))
    np.testing.assert_array_equal(out.view(np.uint8), np.ascontiguousarray(host.transpose(perm)).view(np.uint8))


@pytest.mark.slow
def test_two_pass_transpose_under_vmap_and_jvp():
    x = jnp.arange(2 * 64 * 3, dtype=jnp.float32).reshape(2, 64, 3)
    expected = np.asarray(x).transpose(0, 2, 1)
    np.testing.assert_array_equal(jax.vmap(lambda v: _inner_axis_out(v, 0))(x), expected)
    primal, tangent = jax.jvp(lambda v: _inner_axis_out(v, 1), (x,), (x * 2,))
    np.testing.assert_array_equal(primal, expected)
    np.testing.assert_array_equal(tangent, expected * 2)
    with jax.enable_x64(True):  # float32 finite differences over 384 elements miss rtol 2e-3
        wide = jnp.asarray(np.random.default_rng(2).standard_normal((2, 8, 3)))  # 8 float64 pixels: one tile
        check_grads(lambda v: _tiled(v, 1, min_bytes=0), (wide,), order=2, modes=("fwd", "rev"))
        check_grads(lambda v: _inner_axis_out(v, 1), (wide,), order=2, modes=("fwd", "rev"))


@pytest.mark.hlo
def test_big_nhwc_read_is_one_plain_transpose_for_gpus():
    """If this fails: docs/design/tiled-transpose.md (GPUs keep the plain transpose)."""
    # Exported for CUDA (lowered here without a GPU), only the default branch is kept.
    buffer = jax.ShapeDtypeStruct((_BIG_NHWC.element_count,), jnp.float32)
    read = jax.jit(lambda b: read_tensor(b, _BIG_NHWC))
    gpu = export.export(read, platforms=["cuda"])(buffer).mlir_module()
    cpu = export.export(read, platforms=["cpu"])(buffer).mlir_module()
    assert gpu.count("stablehlo.transpose") == 1 and "dims = [2, 0, 1]" in gpu  # (h, w, c) -> (c, h, w)
    assert cpu.count("stablehlo.transpose") == 3  # the tiles in each of the conditional's branches, the rows


# --- host buffers of another type: their own dtype decides, with x64 on or off alike ---------


def _x64_calls():
    from dmljax.descriptors import ScatterOperatorDesc, compile_operator

    desc = TensorDesc("float32", (2, 3), (1, 2))
    data, index = TensorDesc("float32", (5,)), TensorDesc("uint32", (4,))
    op = compile_operator(ScatterOperatorDesc(data, index, TensorDesc("float32", (4,)), data, axis=0), "3.0")
    where, updates = np.array([3, 1, 4, 0], np.uint32), np.array([5.0, 6, 7, 8], np.float32)
    return {
        "read_tensor": lambda b: dmljax.read_tensor(b, desc),
        "write_tensor buffer": lambda b: dmljax.write_tensor(b, desc, np.ones((2, 3), np.float32)),
        "write_tensor value": lambda b: dmljax.write_tensor(np.zeros(6, np.float32), desc, b.reshape(2, 3)),
        "compile_operator": lambda b: op(b[:5], where, updates),
    }


@pytest.mark.parametrize("x64", [False, True], ids=["x64 off", "x64 on"])
@pytest.mark.parametrize("call", ["read_tensor", "write_tensor buffer", "write_tensor value", "compile_operator"])
def test_a_float64_host_buffer_for_float32_is_decided_by_its_own_dtype(call, x64):
    f = _x64_calls()[call]
    want = np.asarray(f(np.arange(6, dtype=np.float32)))
    param = {"write_tensor value": "value", "compile_operator": "input_buffer"}.get(call, "buffer")
    with jax.enable_x64(x64):
        exact = f(np.arange(6.0))  # every float64 value is a float32: converted, the same both ways
        assert exact.dtype == np.float32
        np.testing.assert_array_equal(exact, want)
        with pytest.raises(
            ValidationError, match=rf"{param}.dtype must be FLOAT32.*exactly.*got {param}.dtype='float64'"
        ):
            f(np.arange(6.0) + 0.1)  # would be rounded: refused, both ways
        with pytest.raises(ValidationError, match=rf"{param}.dtype must be FLOAT32.*; got {param}.dtype='int64'"):
            f(np.arange(6))  # another kind: refused
        if x64:  # a JAX array's own dtype: float64 is not float32
            with pytest.raises(ValidationError, match=rf"{param}.dtype must be FLOAT32.*; got {param}.dtype='float64'"):
                f(jnp.arange(6.0, dtype=jnp.float64))


@pytest.mark.parametrize("x64", [False, True], ids=["x64 off", "x64 on"])
def test_int64_host_buffers_for_int32_convert_when_they_fit(x64):
    desc = TensorDesc("int32", (4,))
    with jax.enable_x64(x64):
        got = dmljax.read_tensor(np.arange(4), desc)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, np.arange(4))
        with pytest.raises(ValidationError, match=r"buffer.dtype must be INT32.*exactly.*got buffer.dtype='int64'"):
            dmljax.read_tensor(np.array([0, 1, 2, 2**40]), desc)


@pytest.mark.parametrize("x64", [False, True], ids=["x64 off", "x64 on"])
@pytest.mark.parametrize(("host", "target"), [(np.int32, "uint32"), (np.int8, "uint8"), (np.int64, "uint64")])
def test_host_buffers_convert_value_exact_never_by_bits(host, target, x64):
    """Issue 39 class 19: an int32 -1 for a UINT32 descriptor round-trips through uint32, so
    it was read as 4294967295; the rule is value-exact: refused, naming the first such value."""
    if target == "uint64" and not x64:
        pytest.skip("64-bit descriptors need x64")
    desc = TensorDesc(target, (3,))
    with jax.enable_x64(x64):
        np.testing.assert_array_equal(dmljax.read_tensor(np.array([0, 5, 7], host), desc), [0, 5, 7])
        with pytest.raises(
            ValidationError, match=r"buffer.dtype must be UINT.*exactly.*got buffer.dtype='int.*buffer\[1\] = -1"
        ):
            dmljax.read_tensor(np.array([0, -1, 7], host), desc)
        bits = dmljax.read_tensor(np.array([0, -1, 7], host).view(np.dtype(target)), desc)  # the bytes: a view
        assert int(bits[1]) == np.iinfo(target).max
    with pytest.raises(ValidationError, match=r"buffer.dtype must be INT8.*buffer\[0\] = 200"):
        dmljax.read_tensor(np.array([200], np.uint8), TensorDesc("int8", (1,)))
