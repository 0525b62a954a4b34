"""Per-platform formulations (`dmljax._core.platform`): flat on one CPU device, batching dims elsewhere.

The two formulations must give the same bits (the plain one runs on GPU/TPU and on several
devices, the flat one on a single CPU); the compiled HLO shows which one a platform gets, so
that a change in the choice or in XLA's handling fails here instead of silently. The bits
and XLA CPU's HLO are checked on the CPU device (the `cpu` fixture) on every machine: the
flat formulation runs nowhere else, and XLA GPU's scatter-add adds with atomics, in an
order (and so to last bits) that differs between runs and formulations.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import dmljax
from dmljax._ops.common.indices import IndexMode, normalize
from dmljax._ops.common.positions import flat_positions, use_flat
from dmljax._ops.index.gather import _gather_elements_lax
from dmljax._ops.index.gather_grad import flat_tangent, rows_tangent
from dmljax._ops.index.scatter import _scatter_flat, _scatter_lax

MODES = [IndexMode.CLIP, IndexMode.FILL, IndexMode.PROMISE_IN_BOUNDS]
SHAPES_AXES = [((5, 7), 0), ((5, 7), 1), ((3, 4, 6), 1), ((2, 3, 4, 5), 3), ((2, 3, 4, 5), 0)]


def _indices(rng, shape, axis, mode, dtype=np.int32):
    n = shape[axis]
    if mode is IndexMode.PROMISE_IN_BOUNDS:
        return rng.integers(-n, n, shape).astype(dtype)
    return rng.integers(-2 * n, 2 * n, shape).astype(dtype)  # out of range both ways


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_flat_and_plain_scatter_give_the_same_bits(shape, axis, mode, cpu):
    rng = np.random.default_rng(len(shape) * 10 + axis)
    x = rng.standard_normal(shape, dtype=np.float32)
    n = shape[axis]
    perm = np.argsort(rng.random(shape), axis=axis)  # distinct positions along the axis
    idx = np.where(rng.random(shape) < 0.3, perm - n, perm).astype(np.int32)
    if mode is not IndexMode.PROMISE_IN_BOUNDS:
        idx = np.where(rng.random(shape) < 0.2, idx + 3 * n, idx)  # dropped or clamped
    upd = rng.standard_normal(shape, dtype=np.float32)
    index = normalize(jnp.asarray(idx), n, mode)
    if mode is IndexMode.CLIP:  # clamped duplicates would make the winner unspecified: keep them unique
        index = normalize(jnp.asarray(perm.astype(np.int32)), n, mode)
    flat = jax.jit(lambda x, i, u: _scatter_flat(x, i, u, axis=axis, mode=mode))(x, index, upd)
    plain = jax.jit(lambda x, i, u: _scatter_lax(x, i, u, axis=axis, mode=mode))(x, index, upd)
    np.testing.assert_array_equal(flat, plain)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
def test_flat_tangent_equals_the_gather_and_its_transpose(shape, axis, mode, cpu):
    rng = np.random.default_rng(len(shape) * 10 + axis + 1)
    x = rng.standard_normal(shape, dtype=np.float32)
    index = normalize(jnp.asarray(_indices(rng, shape, axis, mode)), shape[axis], mode)
    flat = jax.tree_util.Partial(flat_tangent, axis=axis, mode=mode)
    plain = jax.tree_util.Partial(_gather_elements_lax, axis=axis, mode=mode)
    np.testing.assert_array_equal(flat(x, index), plain(x, index))
    ct = rng.standard_normal(shape, dtype=np.float32)
    (flat_ct,) = jax.linear_transpose(lambda d: flat(d, index), x)(ct)
    (plain_ct,) = jax.linear_transpose(lambda d: plain(d, index), x)(ct)
    np.testing.assert_array_equal(flat_ct, plain_ct)  # the same additions in the same (index) order


def test_flat_positions_keep_uint64_out_of_range_indices_out_of_range(x64):
    index = jnp.asarray(np.array([[0, 2**32 + 1], [2**63, 1]], np.uint64))
    lin = flat_positions(index, (2, 3), 1, IndexMode.FILL)
    assert lin.dtype == jnp.uint32
    np.testing.assert_array_equal(lin, [[0, 6], [6, 4]])  # 6 = the size: dropped
    np.testing.assert_array_equal(flat_positions(index, (2, 3), 1, IndexMode.CLIP), [[0, 2], [5, 4]])


def test_use_flat_is_false_for_symbolic_shapes_and_huge_arrays():
    # (Where it is true, the compiled CPU programs below show the flat scatter.)
    assert not use_flat(export.symbolic_shape("b, 16"))
    assert not use_flat((2**16, 2**16))
    assert not use_flat((7,))


def _scatter_fn(x, i, u):
    return dmljax.scatter(x, i, u, axis=1, mode="fill")


def _gather_elements_grad(x, i):
    return jax.grad(lambda x: jnp.sum(dmljax.gather_elements(x, i, axis=1, mode="clip") ** 2))(x)


def _gather_grad(x, i):
    return jax.grad(lambda x: jnp.sum(dmljax.gather(x, i, axis=1, mode="clip") ** 2))(x)


X = jax.ShapeDtypeStruct((64, 32), jnp.float32)
I_FULL, I_HALF = jax.ShapeDtypeStruct((64, 32), jnp.int32), jax.ShapeDtypeStruct((64, 16), jnp.int32)
U_HALF = jax.ShapeDtypeStruct((64, 16), jnp.float32)
PROGRAMS = {
    "scatter": (_scatter_fn, (X, I_HALF, U_HALF), "scatter"),
    "gather_elements grad": (_gather_elements_grad, (X, I_FULL), "scatter"),
}


@pytest.mark.hlo
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_cpu_program_scatters_at_flat_positions(name, cpu):
    """If this fails: docs/design/per-platform-formulations.md (why XLA CPU gets the flat formulation)."""
    fun, args, op = PROGRAMS[name]
    hlo = jax.jit(fun).lower(*args).compile().as_text()
    ranks = [len(s.split(",")) for s in re.findall(rf"= f32\[([\d,]+)\]\S* {op}\(", hlo)]
    assert ranks == [1], hlo  # one scatter(-add), on the flattened (64 * 32,) array


@pytest.mark.hlo
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("platform", ["cuda", "rocm", "tpu"])
def test_other_platforms_keep_batching_dimensions(name, platform):
    """If this fails: docs/design/per-platform-formulations.md (why other platforms keep batching dimensions).

    The gradient with config ``ordered_gather_gradients`` off (JAX's transpose); on, off the
    CPU it is the ordered add at flat positions (docs/design/gather-gradient.md)."""
    fun, args, _ = PROGRAMS[name]
    with dmljax.config.override(ordered_gather_gradients=False):
        text = export.export(jax.jit(fun), platforms=[platform])(*args).mlir_module()
    assert re.search(r"(input|operand)_batching_dims = \[0\]", text) and "tensor<2048xf32>" not in text


@pytest.mark.hlo
def test_compiled_cpu_gather_grad_scatters_whole_rows(cpu):
    """If this fails: docs/design/gather-gradient.md (the gradient scatters rows of the moved axis)."""
    hlo = jax.jit(_gather_grad).lower(X, jax.ShapeDtypeStruct((5,), jnp.int32)).compile().as_text()
    assert re.search(r"= f32\[32,64\]\S* scatter\(", hlo), hlo  # rows of the moved axis, not elements


def test_rows_tangent_moves_only_the_gathered_axis():
    x = jnp.arange(2 * 3 * 4, dtype=jnp.float32).reshape(2, 3, 4)
    index = normalize(jnp.array([[3, 0], [-1, 1]], jnp.int32), 4, IndexMode.CLIP)
    got = rows_tangent(x, index, axis=2, mode=IndexMode.CLIP)
    np.testing.assert_array_equal(got, np.take(np.asarray(x), np.asarray(index), axis=2))


@pytest.mark.parametrize(
    "fun,shapes,examples",
    [
        (lambda x, i: dmljax.gather_elements(x, i, 1, mode="clip"), ("b, 16", "b, 16"), ((3, 16), (3, 16))),
        (_gather_elements_grad, ("b, 16", "b, 16"), ((3, 16), (3, 16))),
        (lambda x, i: dmljax.scatter(x, i, x[:, :4], 1, mode="fill"), ("b, 16", "b, 4"), ((3, 16), (3, 4))),
        (_gather_grad, ("4, b", "3"), ((4, 6), (3,))),
    ],
    ids=["gather_elements", "gather_elements grad", "scatter", "gather grad symbolic axis"],
)
def test_export_with_a_symbolic_batch_dimension(fun, shapes, examples):
    scope = export.SymbolicScope()
    x_spec = jax.ShapeDtypeStruct(export.symbolic_shape(shapes[0], scope=scope), jnp.float32)
    i_spec = jax.ShapeDtypeStruct(export.symbolic_shape(shapes[1], scope=scope), jnp.int32)
    exported = export.export(jax.jit(fun))(x_spec, i_spec)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(examples[0], dtype=np.float32)
    i = rng.permutation(np.arange(-3, 3, dtype=np.int32).repeat(-(-np.prod(examples[1]) // 6)))
    i = i[: np.prod(examples[1])].reshape(examples[1])
    np.testing.assert_array_equal(exported.call(x, i), jax.jit(fun)(x, i))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize("shape,axis,index_shape", [((5, 7), 1, (9,)), ((3, 4, 6), 2, (2, 5)), ((2, 3, 4, 2), 2, (6,))])
def test_rows_tangent_and_its_transpose_equal_the_gathers_bits(shape, axis, index_shape, mode, cpu):
    from dmljax._ops.index.gather import _gather_lax

    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape, dtype=np.float32)
    index = normalize(jnp.asarray(_indices(rng, index_shape, 0, mode) % (2 * shape[axis])), shape[axis], mode)
    if mode is IndexMode.PROMISE_IN_BOUNDS:
        index = index % shape[axis]
    rows = jax.tree_util.Partial(rows_tangent, axis=axis, mode=mode)
    plain = jax.tree_util.Partial(_gather_lax, axis=axis, mode=mode)
    np.testing.assert_array_equal(rows(x, index), plain(x, index))
    ct = rng.standard_normal(plain(x, index).shape, dtype=np.float32)
    (rows_ct,) = jax.linear_transpose(lambda d: rows(d, index), x)(ct)
    (plain_ct,) = jax.linear_transpose(lambda d: plain(d, index), x)(ct)
    np.testing.assert_array_equal(rows_ct, plain_ct)


def test_one_bound_for_flat_positions():
    """`use_flat` and `flat_dtype` draw the line between uint32 and wider positions at one size."""
    from dmljax import ValidationError
    from dmljax._ops.common.positions import FLAT_LIMIT, flat_dtype

    below, at = (1, FLAT_LIMIT - 1), (1, FLAT_LIMIT)
    assert use_flat(below) and flat_dtype("scatter", below) == np.uint32
    assert not use_flat(at)
    with pytest.raises(ValidationError, match=rf"input.size must be below {FLAT_LIMIT}"):
        flat_dtype("scatter", at)  # jax_enable_x64 off: uint64 positions are not available
