"""NumPy-only, loop-based oracles for every dmljax operator.

No JAX and no cleverness here: each function walks every coordinate with `np.ndindex`
and applies the rule as SPEC states it, so that it is obviously correct.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------------------
# Philox 4x32-10 and DML_RANDOM_GENERATOR (SPEC §4): Python ints, one block at a time
# --------------------------------------------------------------------------------------

_MASK32 = 0xFFFFFFFF
# Random123 philox.h: PHILOX_M4x32_0/1 (multipliers) and PHILOX_W32_0/1 (key bumps).
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counter, key) -> tuple[int, int, int, int]:
    """One Philox 4x32-10 block, exactly as Random123's philox4x32_R(10, ctr, key)."""
    x = [int(c) & _MASK32 for c in counter]
    k = [int(c) & _MASK32 for c in key]
    for r in range(10):
        if r:
            k = [(k[0] + _PHILOX_W[0]) & _MASK32, (k[1] + _PHILOX_W[1]) & _MASK32]
        p0 = _PHILOX_M[0] * x[0]
        p1 = _PHILOX_M[1] * x[2]
        x = [(p1 >> 32) ^ x[1] ^ k[0], p1 & _MASK32, (p0 >> 32) ^ x[3] ^ k[1], p0 & _MASK32]
    return tuple(x)


def counter_words(counter: int) -> tuple[int, int, int, int]:
    """A 128-bit counter (taken modulo 2^128) as four 32-bit words, least significant first."""
    counter %= 2**128
    return tuple((counter >> (32 * i)) & _MASK32 for i in range(4))


def counter_value(words) -> int:
    """Four 32-bit words (least significant first) as one 128-bit integer."""
    return sum(int(w) << (32 * i) for i, w in enumerate(words))


def random_generator(state, shape) -> tuple[np.ndarray, np.ndarray]:
    """SPEC §4: element n (row-major) is word n % 4 of block counter + n // 4; counter += ceil(n / 4)."""
    state = np.asarray(state, np.uint32).reshape(-1)
    counter, key = counter_value(state[:4]), state[4:]
    out = np.empty(tuple(shape), np.uint32)
    for n, c in enumerate(np.ndindex(*shape)):
        out[c] = philox4x32_10(counter_words(counter + n // 4), key)[n % 4]
    blocks = -(-out.size // 4)
    next_state = np.array([*counter_words(counter + blocks), *key], np.uint32)
    return out, next_state
