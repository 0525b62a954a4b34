"""FillValueSequence's float loop in closed form: runs of a constant step in the bits.

The loop ``value[i] = value[i-1] + delta`` rounds each addition to the output's type. Within
one binade (one sign, one exponent field) the type's values are evenly spaced, one unit in
the last place (ulp) ``q`` apart, and their bit patterns count those steps: a value ``m q``
plus ``delta = (k + f) q`` (``0 <= f < 1``) rounds to ``(m + k) q`` when ``f < 1/2``, to
``(m + k + 1) q`` when ``f > 1/2``, and on a tie (``f = 1/2``) to whichever of the two is
even. A tie's result is even, so from the second element on every step within the binade is
the same number of ulps: the loop is ``bits[j] = bits[0] + j * t`` for a run of elements,
and a new run starts where the sequence leaves the binade. The runs are found here on the
host, from the static ``start`` and ``delta``, with the type's own arithmetic (NumPy
scalars: IEEE round to nearest even, subnormals kept); each run is checked on two steps and
ends before its prediction could touch the binade's lowest value (the one place a smaller
binade's finer grid could round differently). A sequence that stops moving (``delta`` below
half an ulp, an infinity, a NaN) is one constant run. The device then computes each run as
``first + j * step`` in the type, in parallel (both exact within a binade); there are a few
runs per binade the sequence crosses, so their count grows with the logarithm of its length.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

__all__ = ["float_runs"]


def float_runs(count: int, dtype: np.dtype, start: float, delta: float) -> list[tuple[int, int, int]]:
    """The loop's ``count`` values of ``dtype`` as runs ``(length, first bits, step in bits)``.

    Element ``j`` of a run has the bits ``first + j * step`` (modulo 2^bits, in the unsigned
    integer type of ``dtype``'s width); the lengths add up to ``count``.

    Examples:
      >>> float_runs(6, np.dtype(np.float32), 1.0, 1.0)  # 1, 2, 3 one by one; 4, 5, 6 a run of 2^21
      [(1, 1065353216, 0), (1, 1073741824, 0), (1, 1077936128, 0), (3, 1082130432, 2097152)]
      >>> float_runs(4, np.dtype(np.float16), 2048.0, 1.0)  # 2048 + 1 rounds back to 2048 (even)
      [(4, 26624, 0)]
    """
    with np.errstate(over="ignore", invalid="ignore"):  # the loop's own overflow to inf, inf - inf
        return _runs(count, np.dtype(dtype), start, delta)


def _runs(count: int, dtype: np.dtype, start: float, delta: float) -> list[tuple[int, int, int]]:
    unsigned = np.dtype(f"uint{dtype.itemsize * 8}")
    mant = int(ml_dtypes.finfo(dtype).nmant)
    exp_ones = ((1 << (dtype.itemsize * 8 - 1)) - 1) >> mant  # the exponent field of inf and NaN
    value, step = np.asarray(start, dtype)[()], np.asarray(delta, dtype)[()]

    def bits(v: Any) -> int:
        return int(np.asarray(v, dtype).view(unsigned))

    def same_binade(a: int, b: int) -> bool:  # one sign, one finite exponent field
        return a >> mant == b >> mant and (a >> mant) & exp_ones != exp_ones

    runs: list[tuple[int, int, int]] = []
    i = 0
    while i < count:
        first = bits(value)
        nxt = value + step
        if bits(nxt) == first or (np.isnan(value) and np.isnan(nxt)):  # the loop stands still
            runs.append((count - i, first, 0))
            break
        length, t = 1, 0
        one = bits(nxt)
        if same_binade(first, one) and one & ((1 << mant) - 1):
            two = bits(nxt + step)
            if same_binade(first, two) and two & ((1 << mant) - 1) and two - one == one - first:
                t = one - first
                low = (first >> mant) << mant  # the binade's bits: [low + 1, low + 2^mant - 1] predicted
                room = (low + (1 << mant) - 1 - first) // t if t > 0 else (first - low - 1) // -t
                length = min(1 + room, count - i)
        runs.append((length, first, t))
        i += length
        last = first + (length - 1) * t
        value = np.asarray(last, unsigned).view(dtype)[()] + step
    return runs
