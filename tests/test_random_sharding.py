"""Shard-local Philox on 8 host devices: 1-D and 2-D meshes, any axis, last axes not a multiple of 4.

Each case compiles a generator with a sharded output in a subprocess with 8 host devices
and checks, from the compiled per-device program: no collectives; no array (fused or not)
larger than the device's shard plus two blocks a row; peak memory (XLA's buffer assignment)
at most twice the shard plus two blocks a row for
4-byte values; and the values equal the single-device ones.
"""

import json
import textwrap

import pytest

from tests.multidevice import run_json

# 8 host devices in a subprocess.
pytestmark = pytest.mark.system

# (function, shape, mesh shape, partition spec, pass out_sharding=)
CASES = [
    ("random_generator", (64, 1000), (8,), (None, "x"), True),  # 125 columns a device: blocks cut
    ("random_generator", (16, 1022), (4, 2), ("x", "y"), True),
    ("random_generator", (8, 24, 130), (4, 2), (None, "x", "y"), True),
    ("random_generator", (1000,), (8,), ("x",), True),
    ("random_generator", (40, 68), (4, 2), ("y", "x"), True),
    ("uniform", (64, 1000), (4, 2), (None, ("x", "y")), True),
    ("uniform", (64, 1000), (4, 2), ("x", "y"), False),  # whole blocks a device: the partitioner alone
    ("uniform", (48, 1001), (8,), ("x",), False),  # leading axis, rows shifted inside blocks
    ("normal", (32, 252), (4, 2), ("y", "x"), True),
    ("randint", (24, 8, 12), (4, 2), ("y", None, "x"), True),
    ("bernoulli", (16, 1000), (8,), (None, "x"), True),
    ("dropout", (8, 1000), (4, 2), ("y", "x"), True),
]

SCRIPT = textwrap.dedent(
    """
    import functools, json, math, re, sys
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import dmljax

    COLLECTIVES = r"all-gather|all-reduce|all-to-all|collective-permute|reduce-scatter"
    ARRAYS = r"\\b(?:pred|bf16|[suf]\\d+)\\[([\\d,]*)\\]"
    state = dmljax.random.make_state(7, counter=2**32 - 100)

    def call(name, shape, **kw):
        if name == "random_generator":
            return lambda s: dmljax.random.random_generator(s, shape, **kw)
        if name == "bernoulli":
            return lambda s: dmljax.random.bernoulli(s, 0.3, shape, **kw)
        if name == "dropout":
            return lambda s: dmljax.random.dropout(s, jnp.ones(shape), 0.25, **kw)
        if name == "randint":
            return lambda s: dmljax.random.randint(s, shape, -3, 1000, **kw)
        return lambda s: getattr(dmljax.random, name)(s, shape, **kw)

    results = []
    for name, shape, mesh_shape, spec, explicit in json.loads(sys.argv[1]):
        shape = tuple(shape)
        names = ("x", "y")[: len(mesh_shape)]
        mesh = Mesh(np.array(jax.devices()).reshape(mesh_shape), names)
        spec = P(*[tuple(e) if isinstance(e, list) else e for e in spec])
        sharding = NamedSharding(mesh, spec)
        kw = {"out_sharding": sharding} if explicit else {}
        sharded = jax.jit(call(name, shape, **kw), out_shardings=(sharding, NamedSharding(mesh, P())))
        compiled = sharded.lower(state).compile()
        hlo, memory = compiled.as_text(), compiled.memory_analysis()
        values, next_state = sharded(state)
        want, want_state = jax.jit(call(name, shape))(state)
        local = values.addressable_shards[0].data
        results.append({
            "same_values": bool(np.array_equal(values, want)),
            "same_state": bool(np.array_equal(next_state, want_state)),
            "collectives": sorted(set(re.findall(COLLECTIVES, hlo))),
            "local": local.size,
            "local_rows": local.size // local.shape[-1],
            "itemsize": local.dtype.itemsize,
            "largest": max(math.prod(int(d) for d in a.split(",") if d) for a in re.findall(ARRAYS, hlo)),
            "peak_bytes": memory.output_size_in_bytes + memory.temp_size_in_bytes,
            "shards": len({str(s.index) for s in values.addressable_shards}),
        })
    print(json.dumps(results))
    """
)


@pytest.fixture(scope="module")
def results():
    return run_json(SCRIPT, json.dumps(CASES), timeout=600)


@pytest.mark.hlo
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_each_device_computes_its_own_tile(results, case):
    """If this fails: docs/design/philox-layout.md (each device computes its own tile of the stream)."""
    result = results[case]
    assert result["same_values"] and result["same_state"]
    assert result["shards"] == 8
    assert result["collectives"] == []
    # Two blocks of 4 words a row at most beyond the shard, in any array of the program.
    assert result["largest"] <= result["local"] + 8 * result["local_rows"], result
    if result["itemsize"] == 4:  # the shard, its blocks (two more a row), a few scalars
        assert result["peak_bytes"] <= 4 * (2 * result["local"] + 8 * result["local_rows"]) + 1024, result
