"""Test configuration: strict rank promotion, 64-bit types only inside `enable_x64`, the CPU on demand."""

import jax
import pytest

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture
def x64():
    """Run the test with 64-bit types enabled, restoring the previous setting after."""
    with jax.enable_x64(True):
        yield


@pytest.fixture
def cpu():
    """Run the test with the CPU as JAX's default device, whatever the machine's; yields that device.

    For tests of dmljax's XLA CPU formulations and of XLA CPU's compiled HLO, so that they
    check the same programs on a GPU machine as on a CPU-only one. `jax.jit` lowers and
    compiles for the default device when no argument is committed to a device (NumPy
    arrays, `jax.ShapeDtypeStruct` without a sharding, JAX arrays made without
    `jax.device_put`; ``jax/_src/interpreters/pxla.py``, ``get_default_device``), and
    `lax.platform_dependent` picks its branch by that lowering platform. Arrays made
    inside the test are made on the CPU; one committed to another device (a GPU) would
    still take the computation there. The CPU formulations also need
    ``jax.device_count() == 1`` (`dmljax._core.platform.one_device_shape`): the default
    backend's count, 1 here and on a one-GPU machine.
    """
    device = jax.devices("cpu")[0]
    with jax.default_device(device):
        yield device
