"""Sharded generation: 8 host devices in a subprocess, identical bits, no cross-device traffic."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# (shape, partition spec) pairs; the first four hit the whole-block path, the rest the per-element path.
CASES = [
    ((1024, 64), ("x",)),
    ((64, 1024), (None, "x")),
    ((8000,), ("x",)),
    ((4, 8, 16), (None, "x")),
    ((16, 6), ("x",)),
    ((8, 3, 5), ("x",)),
]

SCRIPT = textwrap.dedent(
    """
    import json, math, re, sys
    import jax, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import dmljax

    COLLECTIVES = r"all-gather|all-reduce|all-to-all|collective-permute|reduce-scatter"
    mesh = Mesh(np.array(jax.devices()), ("x",))
    state = dmljax.make_state(7, counter=2**32 - 100)
    single = jax.jit(dmljax.random_generator, static_argnums=1)
    results = []
    for shape, spec in json.loads(sys.argv[1]):
        shape = tuple(shape)
        out = (NamedSharding(mesh, P(*spec)), NamedSharding(mesh, P()))
        sharded = jax.jit(dmljax.random_generator, static_argnums=1, out_shardings=out)
        hlo = sharded.lower(state, shape).compile().as_text()
        bits, next_state = sharded(state, shape)
        want_bits, want_state = single(state, shape)
        arrays = re.findall(r"u32\\[([\\d,]*)\\]", hlo)
        results.append({
            "devices": len(jax.devices()),
            "same_bits": bool(np.array_equal(bits, want_bits)),
            "same_state": bool(np.array_equal(next_state, want_state)),
            "collectives": sorted(set(re.findall(COLLECTIVES, hlo))),
            "local": math.prod(bits.addressable_shards[0].data.shape),
            "largest": max(math.prod(int(d) for d in a.split(",") if d) for a in arrays),
            "shards": len({str(s.index) for s in bits.addressable_shards}),
        })
    print(json.dumps(results))
    """
)


@pytest.fixture(scope="module")
def sharded_results():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(CASES)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(zip(range(len(CASES)), json.loads(done.stdout.strip().splitlines()[-1]), strict=True))


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{s}-{p}" for s, p in CASES])
def test_sharded_bits_equal_single_device_without_collectives(sharded_results, case):
    result = sharded_results[case]
    assert result["devices"] == 8 and result["shards"] == 8
    assert result["same_bits"] and result["same_state"]
    assert result["collectives"] == []
    # Each device computes only its own blocks: no array in its program outgrows its shard.
    assert result["largest"] <= result["local"]
