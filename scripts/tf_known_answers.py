"""Print ``tests/tf_known_answers.py``: TensorFlow's stateless Philox outputs as constants.

Usage (needs only ``pip install "tensorflow-cpu==2.21.*" numpy``; neither jax nor dmljax)::

    python scripts/tf_known_answers.py > tests/tf_known_answers.py

For a few seeds (int32 and int64, negative values too) and shapes it records what
TensorFlow's CPU kernels (default algorithm: Philox) return: the key and counter of
``StatelessRandomGetKeyCounter``; full-range ``uint32`` (the raw Philox words), ``int32``
and ``int64`` (``stateless_random_uniform`` with ``minval=maxval=None``); uniform floats
(float16, bfloat16, float32, float64); integers in a range (``StatelessRandomUniformInt``,
int32 and int64); normals (float16, bfloat16, float32, float64); uniforms on
``UNIFORM_RANGE`` and normals with ``NORMAL_MEAN_STDDEV`` (a multiply, then an add); and
``stateless_dropout`` of ``DROPOUT_X`` at each of ``DROPOUT_RATES``. Floats are stored as
their bit patterns in hex, integers in a range in decimal, every value in row-major
order, so the tests compare dmljax with TensorFlow bit for bit without TensorFlow.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

# (seed, shape): int32 seeds (a negative value is sign-extended), an int32 extreme, an int64 seed.
CASES = [((1, 2), (3, 7)), ((-1, 5), (4, 5)), ((2**31 - 1, -(2**31)), (2, 3, 3)), ((2**40 + 3, -(2**50)), (19,))]
# [minval, maxval) of the integers in a range: not powers of two, so the modulo matters.
RANGES = {"int32": (-7, 1000), "int64": (-(2**40), 2**41 + 5)}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
# Not powers of two, so the multiply and the add each round.
UNIFORM_RANGE = (-1.3, 2.4)
NORMAL_MEAN_STDDEV = (0.7, 1.9)
# Rates whose 1 / (1 - rate) rounds differently in double and in float16/bfloat16/float32.
DROPOUT_RATES = (0.3333, 0.7, 0.9)
DROPOUT_X = 1.5
# Bit-pattern views (bfloat16 through tf.bitcast: numpy has no bfloat16; signed ints in two's complement).
BITS = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}
BITS |= {"uint32": np.uint32, "int32": np.uint32, "int64": np.uint64}
WIDTH = {"float16": 4, "bfloat16": 4, "float32": 8, "float64": 16, "uint32": 8, "int32": 8, "int64": 16}


def tf_seed(seed: tuple[int, int]) -> tf.Tensor:
    """A list of ints is an int32 seed in TensorFlow unless a value needs 64 bits."""
    return tf.constant(seed, tf.int64 if any(not -(2**31) <= v < 2**31 for v in seed) else tf.int32)


def bit_patterns(values: tf.Tensor, dtype: str) -> list[int]:
    if dtype == "bfloat16":
        values = tf.bitcast(values, tf.uint16)
    return [int(v) for v in values.numpy().view(BITS[dtype]).ravel()]


def outputs(seed: tuple[int, int], shape: tuple[int, ...]) -> dict[tuple[str, str], str]:
    """(op, dtype) -> its values as a string literal, for one seed and shape."""
    s = tf_seed(seed)
    out = {}
    for dtype in ["uint32", "int32", "int64"]:
        full = tf.random.stateless_uniform(shape, s, minval=None, maxval=None, dtype=getattr(tf, dtype))
        out["full_int", dtype] = block(bit_patterns(full, dtype), WIDTH[dtype])
    for dtype in FLOATS:
        values = tf.random.stateless_uniform(shape, s, dtype=getattr(tf, dtype))
        out["uniform", dtype] = block(bit_patterns(values, dtype), WIDTH[dtype])
    for dtype, (lo, hi) in RANGES.items():
        values = tf.random.stateless_uniform(shape, s, minval=lo, maxval=hi, dtype=getattr(tf, dtype))
        out["randint", dtype] = block([int(v) for v in values.numpy().ravel()], None)
    for dtype in FLOATS:
        values = tf.random.stateless_normal(shape, s, dtype=getattr(tf, dtype))
        out["normal", dtype] = block(bit_patterns(values, dtype), WIDTH[dtype])
    for dtype in FLOATS:
        lo, hi = UNIFORM_RANGE
        values = tf.random.stateless_uniform(shape, s, minval=lo, maxval=hi, dtype=getattr(tf, dtype))
        out["uniform_range", dtype] = block(bit_patterns(values, dtype), WIDTH[dtype])
        mean, stddev = NORMAL_MEAN_STDDEV
        values = tf.random.stateless_normal(shape, s, mean=mean, stddev=stddev, dtype=getattr(tf, dtype))
        out["normal_mean_stddev", dtype] = block(bit_patterns(values, dtype), WIDTH[dtype])
        x = tf.fill(shape, tf.constant(DROPOUT_X, getattr(tf, dtype)))
        for rate in DROPOUT_RATES:
            values = tf.nn.experimental.stateless_dropout(x, rate=rate, seed=s)
            out[f"dropout_{rate}", dtype] = block(bit_patterns(values, dtype), WIDTH[dtype])
    return out


def block(values: list[int], digits: int | None) -> str:
    """Whitespace-separated values in a triple-quoted string (ruff leaves its text alone), lines of at most 100."""
    words = [f"0x{v:0{digits}X}" if digits else str(v) for v in values]
    per_line = max(1, 92 // (max(map(len, words)) + 1))
    lines = [" ".join(words[i : i + per_line]) for i in range(0, len(words), per_line)]
    return '"""\n' + "".join(f"        {line}\n" for line in lines) + '    """'


def main() -> int:
    cases = "".join(f"    {case!r},\n" for case in CASES)
    ranges = ", ".join(f'"{dtype}": {bounds!r}' for dtype, bounds in RANGES.items())
    print(f'''"""TensorFlow {tf.__version__}'s stateless Philox outputs (CPU kernels), as constants.

Generated by ``python scripts/tf_known_answers.py > tests/tf_known_answers.py``; do not
edit by hand. Parsed by `values`: whitespace-separated ints, bit patterns in hex (floats
and full-range integers, two's complement for signed ones), integers in a range in decimal.
"""

TENSORFLOW_VERSION = "{tf.__version__}"

# (seed, shape), as given to tf.random.stateless_* (int32 seeds unless a value needs int64).
CASES = [
{cases}]

# [minval, maxval) of the "randint" cases (tf.random.stateless_uniform with an integer dtype).
RANGES = {{{ranges}}}

# The "uniform_range" (minval, maxval), the "normal_mean_stddev" (mean, stddev), and the
# "dropout_<rate>" cases: stateless_dropout(fill(shape, DROPOUT_X), rate, seed).
UNIFORM_RANGE = {UNIFORM_RANGE!r}
NORMAL_MEAN_STDDEV = {NORMAL_MEAN_STDDEV!r}
DROPOUT_RATES = {DROPOUT_RATES!r}
DROPOUT_X = {DROPOUT_X!r}

# seed -> StatelessRandomGetKeyCounter: (key, counter[0], counter[1]) as uint64.
KEY_COUNTER = {{''')
    for seed, _ in CASES:
        key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=tf_seed(seed))
        words = [int(key.numpy()[0]) % 2**64, *(int(c) % 2**64 for c in counter.numpy())]
        print(f"    {seed!r}: ({', '.join(f'0x{w:016X}' for w in words)}),")
    print("}")
    print()
    print("# (op, dtype, seed, shape) -> TensorFlow's values in row-major order:")
    print("#   full_int: stateless_uniform(shape, seed, minval=None, maxval=None, dtype) (uint32: the Philox words);")
    print("#   uniform: stateless_uniform(shape, seed, dtype=dtype); randint: the same with RANGES[dtype];")
    print("#   normal: stateless_normal(shape, seed, dtype=dtype); uniform_range, normal_mean_stddev: the same with")
    print("#   UNIFORM_RANGE, NORMAL_MEAN_STDDEV;")
    print("#   dropout_<rate>: stateless_dropout(fill(shape, DROPOUT_X), rate, seed).")
    print("OUTPUTS = {")
    for seed, shape in CASES:
        for (op, dtype), text in outputs(seed, shape).items():
            print(f'    ("{op}", "{dtype}", {seed!r}, {shape!r}): {text},')
    print("}")
    print('''

def values(text: str) -> list[int]:
    """The ints of one OUTPUTS entry."""
    return [int(word, 0) for word in text.split()]''')
    return 0


if __name__ == "__main__":
    sys.exit(main())
