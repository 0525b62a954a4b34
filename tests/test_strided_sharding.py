"""Batch-sharded strided buffers : 8 host devices in a subprocess, no collectives, same bits."""

import json
import textwrap

import pytest

from tests.multidevice import run_json

# 8 host devices in a subprocess.
pytestmark = pytest.mark.system

# (sizes, strides, buffer length): the batch dimension is outermost in the buffer and each
# device's shard of the flat buffer holds whole batch rows.
CASES = [
    ((8, 64, 16), (80, 1, 1), 640),  # a batch of overlapping sliding windows
    ((16, 3, 2), (10, 2, 3), 160),  # a batch of interleaved (3, 2) tensors, rows of 10
    ((8, 3, 4), (20, 6, 1), 160),  # padded by uneven amounts (the write takes the offsets path)
    ((4, 8, 5), (1, 40, 1), 320),  # the batch is logical dimension 1, overlapping windows inside
    ((3, 8, 2), (2, 10, 3), 80),  # the batch is logical dimension 1, interleaved inside
    ((8, 16, 4, 16), (1024, 1, 256, 16), 8192),  # NHWC (dmljax._buffers.transpose: the plain transpose here)
]

SCRIPT = textwrap.dedent(
    """
    import json, re, sys
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import dmljax

    COLLECTIVES = r"all-gather|all-reduce|all-to-all|collective-permute|reduce-scatter"
    mesh = Mesh(np.array(jax.devices()), ("x",))
    results = []
    for sizes, strides, length in json.loads(sys.argv[1]):
        desc = dmljax.TensorDesc("int32", sizes, strides=strides)
        batch = max(range(len(sizes)), key=lambda d: strides[d])
        spec = P(*[("x" if d == batch else None) for d in range(len(sizes))])
        flat, tensor = NamedSharding(mesh, P("x")), NamedSharding(mesh, spec)
        buffer = jnp.arange(length, dtype=jnp.int32) * 7 - 5
        value = jnp.arange(desc.element_count, dtype=jnp.int32).reshape(sizes) + 1000
        read = jax.jit(lambda b: dmljax.read_tensor(b, desc), in_shardings=flat, out_shardings=tensor)
        write = jax.jit(
            lambda b, v: dmljax.write_tensor(b, desc, v), in_shardings=(flat, tensor), out_shardings=flat
        )
        read_hlo = read.lower(buffer).compile().as_text()
        aliases = desc.has_aliasing  # overlapping windows can be read, not written
        write_hlo = "" if aliases else write.lower(buffer, value).compile().as_text()
        results.append({
            "devices": len(jax.devices()),
            "read_collectives": sorted(set(re.findall(COLLECTIVES, read_hlo))),
            "write_collectives": sorted(set(re.findall(COLLECTIVES, write_hlo))),
            "same_read": bool(np.array_equal(read(buffer), dmljax.read_tensor(np.asarray(buffer), desc))),
            "same_write": aliases or bool(
                np.array_equal(write(buffer, value), dmljax.write_tensor(np.asarray(buffer), desc, np.asarray(value)))
            ),
            "read_shards": len({str(s.index) for s in read(buffer).addressable_shards}),
        })
    print(json.dumps(results))
    """
)


@pytest.fixture(scope="module")
def sharded_results():
    return run_json(SCRIPT, json.dumps(CASES))


@pytest.mark.hlo
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{s}-{t}" for s, t, _ in CASES])
def test_batch_sharded_offsets_path_stays_local(sharded_results, case):
    """If this fails: docs/design/strided-lowering.md (the offsets path and why it stays per shard)."""
    result = sharded_results[case]
    assert result["devices"] == 8 and result["read_shards"] == 8
    assert result["same_read"] and result["same_write"]
    assert result["read_collectives"] == [] and result["write_collectives"] == []
