"""Test configuration: strict rank promotion, and 64-bit types only inside `enable_x64`."""

import jax
import pytest

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture
def x64():
    """Run the test with 64-bit types enabled, restoring the previous setting after."""
    with jax.enable_x64(True):
        yield
