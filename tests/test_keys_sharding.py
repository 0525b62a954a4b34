"""The shard_map recipe (shard i starts at advance(state, i * blocks_per_shard)) and prng_impl keys, 8 devices."""

import textwrap

import pytest

from tests.multidevice import run_json

# 8 host devices in a subprocess.
pytestmark = pytest.mark.system

SCRIPT = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import dmljax

    mesh = Mesh(np.array(jax.devices()), ("x",))
    state = dmljax.random.make_state(7, counter=2**64 - 300)  # the shards' starts carry into word 2
    per_shard = 1024
    blocks_per_shard = per_shard // 4

    def shard_bits(state):
        i = jax.lax.axis_index("x").astype(jnp.uint32)
        return dmljax.random.random_generator(dmljax.random.advance(state, i * blocks_per_shard), (per_shard,))[0]

    recipe = jax.jit(jax.shard_map(shard_bits, mesh=mesh, in_specs=P(), out_specs=P("x")))
    whole = dmljax.random.random_generator(state, (8 * per_shard,))[0]

    key = jax.random.wrap_key_data(state, impl=dmljax.random.prng_impl)
    sharded_bits = jax.jit(lambda k: jax.random.bits(k, (64, 32), jnp.uint32),
                           out_shardings=NamedSharding(mesh, P("x")))(key)
    keys = jax.random.split(key, 8)
    per_device = jax.jit(jax.shard_map(lambda k: jax.random.uniform(k[0], (1, 4)), mesh=mesh,
                                        in_specs=P("x"), out_specs=P("x")))(keys)
    print(json.dumps({
        "devices": len(jax.devices()),
        "recipe": bool(np.array_equal(recipe(state), whole)),
        "bits": bool(np.array_equal(sharded_bits, dmljax.random.random_generator(state, (64, 32))[0])),
        "split_keys": bool(np.array_equal(per_device, jnp.stack([jax.random.uniform(k, (4,)) for k in keys]))),
    }))
    """
)


@pytest.fixture(scope="module")
def results():
    return run_json(SCRIPT)


def test_shard_map_recipe_cuts_one_stream_in_order(results):
    assert results["devices"] == 8
    assert results["recipe"]


def test_prng_impl_bits_sharded_equal_single_device(results):
    assert results["bits"]


def test_prng_impl_split_keys_per_device(results):
    assert results["split_keys"]
