"""TensorFlow's Box-Muller angle, ``float32(double(2 * M_PI) * u)``, for every one of its 2^23 inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dmljax._random.box_muller import float32_angle


def tensorflows_angle(m: np.ndarray) -> np.ndarray:
    """BoxMullerFloat's ``2.0f * M_PI * Uint32ToFloat(x1)``: a double product, rounded to float32 once."""
    return (np.float64(2 * np.pi) * (m.astype(np.float64) * 2.0**-23)).astype(np.float32)


def test_every_angle_is_tensorflows_bit_for_bit():
    m = np.arange(2**23, dtype=np.uint32)
    got = np.asarray(jax.jit(float32_angle)(m | np.uint32(0xA5800000)))  # the high 9 bits do not count
    want = tensorflows_angle(m)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # What a float32 multiply gives instead differs in a third of them:
    float32_product = np.float32(2 * np.pi) * (m.astype(np.float32) * np.float32(2.0**-23))
    assert 0.3 < np.mean(float32_product != want) < 0.4


@pytest.mark.slow
def test_angles_at_the_binade_edges_and_under_vmap():
    m = np.array([0, 1, 2, 3, 2**22 - 1, 2**22, 2**22 + 1, 2**23 - 1, 0x1921FB, 0x5A5A5A], np.uint32)
    want = tensorflows_angle(m)
    np.testing.assert_array_equal(np.asarray(float32_angle(jnp.asarray(m))), want)
    np.testing.assert_array_equal(np.asarray(jax.vmap(float32_angle)(jnp.asarray(m.reshape(2, 5)))).ravel(), want)
    assert float(float32_angle(jnp.uint32(2**23 - 1))) < 2 * np.pi
