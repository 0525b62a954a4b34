"""The stream in the output's own shape: every layout path of random_generator and the distributions.

Rows of whole blocks, long rows that start inside a block
(a per-row shift), short ones (a block per element), one unaligned row: each must give the
bits of the loop oracle, and every distribution the values of its word map on the flat stream.
"""

import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dmljax import config
from dmljax._random import philox_layout
from dmljax._random.philox import PHILOX_ROUNDS
from dmljax.random import make_state, normal, randint, random_generator, uniform
from tests import reference

STATE = make_state(0x0DDBA11, counter=2**32 - 77)

# (shape, the path `philox_layout.stream` takes for 4 values a block)
SHAPES = {
    "whole blocks": (3, 8),
    "block per element, rows of 6": (6, 6),
    "block per element, 3-D": (2, 4, 7),
    "shifted rows": (3, config.philox_short_row + 3),
    "shifted rows of 63": (5, 63),
    "shifted rows, 3-D": (2, 3, 101),
    "block per element": (3, 5),
    "one unaligned row": (1001,),
    "one long row": (2, 1, 1, 99),
}


def flat_words(state, n: int) -> np.ndarray:
    """The first ``n`` words of the stream, from the loop oracle."""
    return reference.random_generator(np.asarray(state), (n,))[0]


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_bits_match_the_loop_oracle(shape):
    bits, next_state = jax.jit(random_generator, static_argnums=1)(STATE, shape)
    want_bits, want_state = reference.random_generator(np.asarray(STATE), shape)
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(next_state, want_state)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_one_word_values_match_the_flat_word_map(shape):
    n = math.prod(shape)
    w = flat_words(STATE, n)
    u, _ = uniform(STATE, shape)
    np.testing.assert_array_equal(np.asarray(u).reshape(-1), ((w & 0x7FFFFF) | 0x3F800000).view(np.float32) - 1)
    r, _ = randint(STATE, shape, -7, 1000)
    np.testing.assert_array_equal(np.asarray(r).reshape(-1), -7 + w.astype(np.int64) % 1007)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_normal_pairs_match_box_muller_on_the_flat_words(shape):
    n = math.prod(shape)
    w = flat_words(STATE, n + n % 2)
    unit = ((w & 0x7FFFFF) | 0x3F800000).view(np.float32) - np.float32(1)
    radius = np.sqrt(-2 * np.log(np.maximum(unit[0::2], np.float32(1e-7))))
    angle = (np.float64(2 * np.pi) * unit[1::2].astype(np.float64)).astype(np.float32)  # in double, rounded once
    want = np.stack([np.sin(angle) * radius, np.cos(angle) * radius], axis=1).reshape(-1)[:n]
    z, _ = normal(STATE, shape)
    np.testing.assert_allclose(np.asarray(z).reshape(-1), want, rtol=3e-6, atol=3e-6)


TWO_WORD_SHAPES = {"whole blocks": (3, 4), "long rows": (4, 33), "shifted rows": (3, 65), "short rows": (3, 7)}


@pytest.mark.parametrize("shape", TWO_WORD_SHAPES.values(), ids=TWO_WORD_SHAPES.keys())
def test_two_word_values_match_the_flat_word_map(shape, x64):
    n = math.prod(shape)
    w = flat_words(STATE, 2 * n).astype(np.uint64)
    u, next_state = uniform(STATE, shape, jnp.float64)
    bits = (w[0::2] & 0xFFFFF) << np.uint64(32) | w[1::2] | np.uint64(1023 << 52)
    np.testing.assert_array_equal(np.asarray(u).reshape(-1), bits.view(np.float64) - 1)
    assert reference.counter_value(np.asarray(next_state)[:4]) == reference.counter_value(
        np.asarray(STATE)[:4]
    ) + math.ceil(n / 2)
    r, _ = randint(STATE, shape, -(2**40), 2**41, jnp.int64)
    pairs = [int(w[2 * i]) | int(w[2 * i + 1]) << 32 for i in range(n)]
    assert [int(v) for v in np.asarray(r).reshape(-1)] == [-(2**40) + p % (3 * 2**40) for p in pairs]


def test_array_bounds_broadcast_per_element():
    lo, hi = np.array([0, 10, -5], np.int32), np.array([[3], [1000]], np.int32) + 20
    r, _ = randint(STATE, (2, 3), lo, hi)
    w = flat_words(STATE, 6).astype(np.int64).reshape(2, 3)
    np.testing.assert_array_equal(r, lo + w % (hi - lo))


# --- the compiled program: every block computed once (a change in XLA's fusion fails here) ----------

COMPILED_SHAPES = {"whole blocks": (64, 1024), "shifted rows": (64, 1023), "one unaligned row": (1001,)}


def compiled_ops(fn, op: str, dtype: str) -> int:
    """How many ``op``s of ``dtype`` the compiled program of ``fn(STATE)`` holds: XLA CPU's under `cpu`."""
    hlo = jax.jit(fn).lower(STATE).compile().as_text()
    # Not XLA's expansion of the uint64 -> uint32 bitcast of the word-pair interleave, whose
    # shift amounts are ``32 * iota``: a multiply of an iota, no Philox round.
    return len(re.findall(rf"= {dtype}\[[\d,]*\]\S* {op}\((?![^)]*%iota)", hlo))


@pytest.mark.hlo
@pytest.mark.parametrize("shape", COMPILED_SHAPES.values(), ids=COMPILED_SHAPES.keys())
def test_compiled_rounds_run_once_per_block(shape, cpu):
    """If this fails: docs/design/philox-layout.md (one Philox block computed once for its four words)."""
    # Ten rounds of two widening multiplies, in one reduce: not repeated for each word of a block.
    for fn in (lambda s: random_generator(s, shape)[0], lambda s: uniform(s, shape)[0]):
        assert compiled_ops(fn, "multiply", "u64") == 2 * PHILOX_ROUNDS


@pytest.mark.hlo
@pytest.mark.parametrize("shape", COMPILED_SHAPES.values(), ids=COMPILED_SHAPES.keys())
def test_compiled_box_muller_runs_once_per_pair(shape, cpu):
    """If this fails: docs/design/philox-layout.md (Box-Muller once per pair inside the block reduce)."""
    # Two Box-Muller pairs a block, inside the reduce: a select among candidates must not recompute them.
    fn = lambda s: normal(s, shape)[0]  # noqa: E731
    # Philox's two widening multiplies a round, and two for each of the block's two angles.
    assert compiled_ops(fn, "multiply", "u64") == 2 * PHILOX_ROUNDS + 4
    for op in ("log", "sine", "cosine"):
        assert compiled_ops(fn, op, "f32") == 2


@pytest.mark.parametrize("v", [2, 3, 4])
def test_shifted_interleave_reads_each_row_from_its_start_inside_the_first_block(v):
    # Rows of m + 1 blocks of v values; row r starts shift[r] values into its first block.
    rng = np.random.default_rng(v)
    planes = rng.integers(0, 2**32, size=(v, 2, 5, 7), dtype=np.uint32)
    shift = rng.integers(0, v, size=(2, 5), dtype=np.uint32)
    out = philox_layout._shifted_interleave(tuple(jnp.asarray(p) for p in planes), jnp.asarray(shift))
    stream = np.moveaxis(planes, 0, -1).reshape(2, 5, 7 * v)  # block j, value l at j * v + l
    want = np.stack([stream[i, j, s : s + 6 * v] for (i, j), s in np.ndenumerate(shift)]).reshape(2, 5, 6 * v)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("pair_interleave", [True, False], ids=["uint64 pairs", "select"])
@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_interleave_puts_plane_j_at_every_kth_element(k, pair_interleave):
    # Both formulations, eager and jitted, against NumPy's stack-and-reshape.
    planes = np.random.default_rng(k).integers(0, 2**32, size=(k, 3, 5), dtype=np.uint32)
    want = np.moveaxis(planes, 0, -1).reshape(3, 5 * k)
    with config.override(philox_pair_interleave=pair_interleave):
        args = tuple(jnp.asarray(p) for p in planes)
        np.testing.assert_array_equal(philox_layout.interleave(args), want)
        np.testing.assert_array_equal(jax.jit(philox_layout.interleave)(args), want)


def test_pair_interleave_under_vmap_with_a_batch_axis_anywhere():
    # Batched along axis 1 of two planes, unbatched (broadcast) for the other two: a loop over the batch.
    rng = np.random.default_rng(7)
    batched = [rng.integers(0, 2**32, size=(3, 4, 5), dtype=np.uint32) for _ in range(2)]
    shared = [rng.integers(0, 2**32, size=(3, 5), dtype=np.uint32) for _ in range(2)]
    fn = jax.vmap(lambda a, b, c, d: philox_layout.interleave((a, b, c, d)), in_axes=(1, None, 1, None))
    out = fn(batched[0], shared[0], batched[1], shared[1])
    for i in range(4):
        planes = np.stack([batched[0][:, i], shared[0], batched[1][:, i], shared[1]], axis=-1)
        np.testing.assert_array_equal(out[i], planes.reshape(3, 20))


# --- off the CPU: each element computes its block (`philox_layout._per_element`, `philox_layout._flat`) --------------

COUNTER = tuple(jnp.asarray(w, jnp.uint32) for w in np.asarray(STATE)[:4])
KEY = tuple(jnp.asarray(w, jnp.uint32) for w in np.asarray(STATE)[4:])


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_off_cpu_stream_matches_the_loop_oracle(shape):
    # What a GPU runs for a whole output (`_flat`) and for a device's tile (per-element rows).
    want = reference.random_generator(np.asarray(STATE), shape)[0]
    flat = jax.jit(philox_layout._flat, static_argnums=(2, 3))(COUNTER, KEY, shape, philox_layout._words)
    np.testing.assert_array_equal(flat, want)
    first = np.arange(math.prod(shape[:-1]), dtype=np.uint32).reshape(shape[:-1]) * np.uint32(shape[-1])
    rows = philox_layout._per_element(COUNTER, KEY, jnp.asarray(first), shape[-1], philox_layout._words)
    np.testing.assert_array_equal(rows, want)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(5, 63), (3, 8), (2, 3, 101)], ids=str)
def test_off_cpu_distributions_equal_the_cpu_values(shape, dtype, cpu):
    # Both formulations on the CPU device (`cpu`: there `stream` takes the reduce layout). Uniform
    # bits are exact on both; Box-Muller runs the same float32 ops on the same words.
    from dmljax._random.distributions import _normal_block, _uniform_block

    for per_block in (_uniform_block(np.dtype(dtype)), _normal_block(np.dtype(dtype))):
        blocks = jax.jit(philox_layout.stream, static_argnums=(2, 3))(COUNTER, KEY, shape, per_block)
        elements = jax.jit(philox_layout._flat, static_argnums=(2, 3))(COUNTER, KEY, shape, per_block)
        np.testing.assert_array_equal(elements, blocks)


def lowered(fn, platform: str) -> str:
    return jax.export.export(jax.jit(fn), platforms=[platform])(STATE).mlir_module()


@pytest.mark.hlo
@pytest.mark.parametrize("shape", COMPILED_SHAPES.values(), ids=COMPILED_SHAPES.keys())
def test_gpu_program_has_no_block_reduce(shape):
    """If this fails: docs/design/philox-layout.md (why GPUs take the per-element branch)."""
    # Exported for CUDA (lowered here without a GPU): only the per-element branch is kept. On the
    # GPU the reduce of the CPU layout ran 6.6-13.9x JAX's philox4x32 time (module docstring).
    for fn in (lambda s: random_generator(s, shape)[0], lambda s: normal(s, shape)[0]):
        assert "stablehlo.reduce" not in lowered(fn, "cuda")
        assert "stablehlo.reduce" in lowered(fn, "cpu")
