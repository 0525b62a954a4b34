"""Compare dmljax's TensorFlow-seed path with real TensorFlow, outside pytest.

Usage (needs ``pip install "tensorflow-cpu==2.21.*"``)::

    python scripts/check_tf_seeds.py

For a few seeds (int32 and int64, negative ones too) it checks that
``state_from_tf_seed`` is TensorFlow's ``StatelessRandomGetKeyCounter`` and that
dmljax's uniform (float32/float16/bfloat16), randint, normal and the README's ports of
``stateless_split`` / ``stateless_fold_in`` give TensorFlow's values. Exit status 1 on a
mismatch.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from jax import lax  # noqa: E402

import dmljax  # noqa: E402

SEEDS = [[1, 2], [-1, 5], [2**31 - 1, -(2**31)], [2**40 + 3, -(2**50)]]


def check(seed: list[int]) -> list[str]:
    dtype = tf.int64 if any(not -(2**31) <= v < 2**31 for v in seed) else tf.int32
    tf_seed = tf.constant(seed, dtype)
    state = dmljax.random.state_from_tf_seed(seed)
    words = np.asarray(state).astype(np.uint64)
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=tf_seed)
    failures = []
    if int(key.numpy()[0]) != int(words[4] | words[5] << np.uint64(32)):
        failures.append("key")
    if counter.numpy().tolist() != [int(words[0] | words[1] << 32), int(words[2] | words[3] << 32)]:
        failures.append("counter")
    for name in ("float32", "float16", "bfloat16"):
        want = tf.random.stateless_uniform([64], seed=tf_seed, dtype=getattr(tf, name)).numpy()
        if not np.array_equal(np.asarray(dmljax.random.uniform(state, (64,), name)[0]), want):
            failures.append(f"uniform {name}")
    want = tf.random.stateless_uniform([64], seed=tf_seed, minval=-5, maxval=1000, dtype=tf.int32).numpy()
    if not np.array_equal(dmljax.random.randint(state, (64,), -5, 1000)[0], want):
        failures.append("randint int32")
    want = tf.random.stateless_normal([64], seed=tf_seed).numpy()
    if not np.allclose(dmljax.random.normal(state, (64,))[0], want, rtol=2e-6, atol=2e-6):
        failures.append("normal float32")
    if dtype == tf.int32:
        bits, _ = dmljax.random.random_generator(state, (3, 2))
        split = lax.bitcast_convert_type(bits, jnp.int32)
        if not np.array_equal(split, tf.random.experimental.stateless_split(tf_seed, 3).numpy()):
            failures.append("stateless_split port")
        folded = jnp.stack([split[0, 0], jnp.int32(17)])
        if not np.array_equal(folded, tf.random.experimental.stateless_fold_in(tf_seed, 17).numpy()):
            failures.append("stateless_fold_in port")
    return failures


def main() -> int:
    status = 0
    for seed in SEEDS:
        failures = check(seed)
        print(f"seed={seed}: {'ok' if not failures else 'MISMATCH ' + ', '.join(failures)}")
        status |= bool(failures)
    print(f"tensorflow {tf.__version__}, dmljax {dmljax.__version__}")
    return status


if __name__ == "__main__":
    sys.exit(main())
