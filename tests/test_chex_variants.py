"""Every operator eagerly and under `jax.jit` (chex variants) against the loop oracles of `tests.reference`.

Eager calls see concrete indices (checked on the host), jitted ones traced indices (the
default mode then clamps); with in-range indices, negative ones included, both must equal
the oracle bit for bit, with the oracle's shape and dtype.
"""

import chex
import jax.numpy as jnp
import numpy as np
from absl.testing import parameterized

import dmljax
from tests import reference


def _indices(rng: np.random.Generator, size: int, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-size, size, shape).astype(np.int32)


class OperatorVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(0, 1, 2)
    def test_gather(self, axis):
        rng = np.random.default_rng(axis)
        data = rng.standard_normal((4, 5, 6)).astype(np.float32)
        indices = _indices(rng, data.shape[axis], (2, 3))
        got = self.variant(lambda x, i: dmljax.gather(x, i, axis))(data, indices)
        expected = reference.gather(data, indices, axis)
        chex.assert_shape(got, expected.shape)
        chex.assert_type(got, jnp.float32)
        chex.assert_trees_all_equal(got, expected)

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(0, 1, 2)
    def test_gather_elements(self, axis):
        rng = np.random.default_rng(10 + axis)
        data = rng.standard_normal((4, 5, 6)).astype(np.float32)
        shape = tuple(7 if k == axis else n for k, n in enumerate(data.shape))
        indices = _indices(rng, data.shape[axis], shape)
        got = self.variant(lambda x, i: dmljax.gather_elements(x, i, axis))(data, indices)
        chex.assert_trees_all_equal(got, reference.gather_elements(data, indices, axis))

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(0, 1, 2)
    def test_scatter(self, axis):
        rng = np.random.default_rng(20 + axis)
        data = rng.standard_normal((4, 5, 6)).astype(np.float32)
        # A permutation along the axis: unique targets, half of them written as negative indices.
        indices = np.argsort(rng.random(data.shape), axis=axis).astype(np.int32)
        indices = np.where(rng.random(data.shape) < 0.5, indices - data.shape[axis], indices).astype(np.int32)
        updates = rng.standard_normal(data.shape).astype(np.float32)
        got = self.variant(lambda x, i, u: dmljax.scatter(x, i, u, axis))(data, indices, updates)
        chex.assert_trees_all_equal(got, reference.scatter(data, indices, updates, axis))

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(((0, 1), (7, 3), (1, 2)), ((6, 6), (3, 4), (-3, -2)), ((2, 0), (2, 10), (-1, 1)))
    def test_slice1(self, offsets, sizes, strides):
        data = np.arange(9 * 10, dtype=np.int32).reshape(9, 10)
        got = self.variant(lambda x: dmljax.slice(x, offsets, sizes, strides))(data)
        expected = reference.slice1(data, offsets, sizes, strides)
        chex.assert_type(got, jnp.int32)
        chex.assert_trees_all_equal(got, expected)

    @chex.variants(with_jit=True, without_jit=True)
    def test_random_generator_and_its_next_state(self):
        state = dmljax.random.make_state(0x0123456789ABCDEF, counter=2**64 - 2)  # a carry into counter word 2
        bits, next_state = self.variant(lambda s: dmljax.random.random_generator(s, (3, 7)))(state)
        expected_bits, expected_state = reference.random_generator(np.asarray(state), (3, 7))
        chex.assert_trees_all_equal((bits, next_state), (expected_bits, expected_state))
