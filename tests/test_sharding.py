"""Sharding on 8 host devices (subprocesses): identical results, only the collectives the data needs.

Random generation is shard-local (no collective, no array larger than a shard); every operator,
forward and backward, under 1-D and 2-D meshes and vmap: collectives counted in the compiled HLO.
"""

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from tests._util import child_env
from tests.multidevice import run_json

# 8 host devices in subprocesses.
pytestmark = pytest.mark.system

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
    state = dmljax.random.make_state(7, counter=2**32 - 100)
    single = jax.jit(dmljax.random.random_generator, static_argnums=1)
    results = []
    for shape, spec in json.loads(sys.argv[1]):
        shape = tuple(shape)
        out = (NamedSharding(mesh, P(*spec)), NamedSharding(mesh, P()))
        sharded = jax.jit(dmljax.random.random_generator, static_argnums=1, out_shardings=out)
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
    return dict(zip(range(len(CASES)), run_json(SCRIPT, json.dumps(CASES)), strict=True))


@pytest.mark.hlo
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{s}-{p}" for s, p in CASES])
def test_sharded_bits_equal_single_device_without_collectives(sharded_results, case):
    """If this fails: docs/design/philox-layout.md (each device computes its own tile of the stream)."""
    result = sharded_results[case]
    assert result["devices"] == 8 and result["shards"] == 8
    assert result["same_bits"] and result["same_state"]
    assert result["collectives"] == []
    # Each device computes only its own blocks: no array in its program outgrows its shard.
    assert result["largest"] <= result["local"]


# Collectives per operator and sharding (`python -m dmljax.bench.collectives`), 8 host devices.
# Along its own sharded axis an operator needs exactly these (forward, backward) collectives,
# keyed by (operator, mesh, operator's axis sharded); every other case needs none:
NEEDED = {
    # masked local gather, then one all-reduce adding the one shard holding each row (exact)
    ("gather axis=0", "data", True): ({"all-reduce": 1}, {}),
    ("gather axis=1", "data x model", True): ({"all-reduce": 1}, {}),
    ("gather axis=2", "data x model", True): ({"all-reduce": 1}, {}),
    # every shard may read any element along the axis: the data is all-gathered once; the
    # cotangent's partial scatter-adds are summed across shards (one all-reduce)
    ("gather_elements axis=0", "data", True): ({"all-gather": 1}, {"all-reduce": 1}),
    ("gather_elements axis=2", "data x model", True): ({"all-gather": 1}, {"all-reduce": 1}),
    # any update may land on any shard: indices and updates are all-gathered (forward), the
    # cotangent and the indices (backward)
    ("scatter axis=0", "data", True): ({"all-gather": 2}, {"all-gather": 2}),
    ("scatter axis=2", "data x model", True): ({"all-gather": 2}, {"all-gather": 2}),
    # reversing a sharded axis moves each shard to its mirror device
    ("slice1 axis=0 reversed", "data", True): ({"collective-permute": 1}, {"collective-permute": 1}),
    # a replicated embedding table's gradient sums over the batch shards
    ("gather axis=0 (embedding)", "data", False): ({}, {"all-reduce": 1}),
}


@pytest.fixture(scope="module")
def collective_run():
    # JAX's own gather transposes: the ordered gather gradients (the default) replicate the
    # operands on several devices by design (docs/guides/sharding.md), so they are not this table.
    env = dict(child_env(), DMLJAX_ORDERED_GATHER_GRADIENTS="0")
    command = [sys.executable, "-m", "dmljax.bench.collectives", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    *table, raw = done.stdout.strip().splitlines()
    return "\n".join(table), json.loads(raw)


@pytest.mark.hlo
def test_collectives_cover_every_operator_forward_and_backward(collective_run):
    """If this fails: docs/design/per-platform-formulations.md (the multi-device formulations)."""
    results = collective_run[1]
    ops = {r["op"].split()[0].removeprefix("vmap(").removesuffix(")") for r in results}
    assert ops == {"gather", "gather_elements", "scatter", "random_generator", "dropout", "slice1"}
    assert all(r["bwd"] is not None for r in results if not r["op"].startswith("random"))
    assert {r["mesh"] for r in results} == {"data", "data x model"}


@pytest.mark.hlo
def test_no_collectives_along_an_unsharded_axis(collective_run):
    """If this fails: docs/design/per-platform-formulations.md (the multi-device formulations)."""
    for r in collective_run[1]:
        if (r["op"], r["mesh"], r["axis_sharded"]) not in NEEDED:
            assert not r["axis_sharded"], r
            assert r["fwd"] == {} and r["bwd"] in ({}, None), r


@pytest.mark.hlo
@pytest.mark.parametrize("key", sorted(NEEDED), ids=lambda k: f"{k[0]}-{k[1]}")
def test_exactly_the_collectives_the_data_needs(collective_run, key):
    """If this fails: docs/design/per-platform-formulations.md (the multi-device formulations)."""
    (result,) = [r for r in collective_run[1] if (r["op"], r["mesh"], r["axis_sharded"]) == key]
    assert (result["fwd"], result["bwd"]) == NEEDED[key]


def test_bit_identical_to_one_device_except_cross_shard_sums(collective_run):
    for r in collective_run[1]:
        if not r["same"]:  # only a sum across shards (an all-reduce of partial gradients) may round differently
            assert "all-reduce" in (r["bwd"] or {}), r
    assert sum(r["same"] for r in collective_run[1]) >= len(collective_run[1]) - 3


def test_sharding_guide_table_is_the_scripts_output(collective_run):
    assert collective_run[0] in (ROOT / "docs" / "guides" / "sharding.md").read_text()


@pytest.mark.hlo
def test_data_parallel_training_step_has_only_the_gradient_all_reduce():
    """If this fails: docs/design/per-platform-formulations.md (the multi-device formulations)."""
    env = dict(child_env(), DMLJAX_ORDERED_GATHER_GRADIENTS="0")  # as collective_run
    command = [sys.executable, "-m", "dmljax.bench.training", "--rounds", "1"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if "collectives" in line)
    # the replicated parameters' gradients are summed over the batch shards, in one combined all-reduce
    assert lines["dmljax"] == "collectives {'all-reduce': 1}"


def test_sharded_reductions_benchmark_reports_every_dmljax_result_exact(tmp_path):
    """``python -m dmljax.bench.sharded_reductions`` at a small size: well-formed output, and
    every dmljax result bit-equal to NumPy's ``ufunc.at`` loop on the same sharded operands."""
    path = tmp_path / "sharded.json"
    module = "dmljax.bench.sharded_reductions"
    command = [sys.executable, "-m", module, "--rounds", "1", "--updates", "4096", "--json", str(path)]
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    header, *lines, footer = done.stdout.splitlines()
    assert header.startswith("sharded reductions: 8 cpu devices, 4096 float32 updates"), header
    assert "load average [" in header and footer.startswith("load average at the end [")
    result = json.loads(path.read_text())
    assert (result["devices"], result["elements"], result["updates"], result["rounds"]) == (8, 65536, 4096, 1)
    cases = {(c["reduction"], c["targets"]): c for c in result["cases"]}
    assert sorted(cases) == sorted((r, d) for r in ("add", "max", "min") for d in ("random", "zipf", "hot"))
    assert len(lines) == len(cases) and all("dmljax yes, jnp " in line for line in lines), lines
    assert all(c["dmljax_exact"] and c["dmljax_ms"] > 0 and c["jnp_ms"] > 0 for c in cases.values())
    # The comparison can fail: jnp's max/min do not follow onnxruntime's fold on the signed zeros (the later of
    # equal values wins) and the NaN update that the operands hold.
    assert not any(c["jnp_exact"] for (reduction, _), c in cases.items() if reduction != "add")
