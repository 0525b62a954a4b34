"""Resample (DML_RESAMPLE1/2, ONNX Resize) and ResampleGrad (DML_RESAMPLE_GRAD/GRAD1).

The coordinate rules, per axis, are `dmljax._ops.vision.resample_plan`'s; the indices and
weights are constants of the trace. ``"nearest"`` is one gather per resized axis;
``"linear"`` reads the ``2^d`` corners of the ``d`` resized axes and sums
``weight * value`` over them in row-major corner order (the first resized axis the
slowest), each weight the product of the per-axis weights in axis order. 16-bit floats
are computed in float32 and rounded once.

`resample_grad` is the adjoint: every output element ``o`` (row-major) gives each of its
corners ``weight * gradient[o]``, and these updates are added into a zero input in that
order by `dmljax._ops.ordered.ordered_add` (the same bits on every platform and device
count). `resample`'s reverse-mode derivative is registered (``jax.custom_vjp``) as exactly
`resample_grad`, so ``jax.vjp(resample)`` never lets XLA's scatter-add choose the order;
being a custom VJP, `resample` has no forward-mode derivative (``jax.jvp`` raises), while
`resample_grad` (made of the ordered add) has both. Design note:
docs/design/resample-gradient.md.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._core.markers import mark, traced
from dmljax._ops.common.indices import as_data, check_rank
from dmljax._ops.common.positions import flat_dtype
from dmljax._ops.ordered.ordered_add import ordered_add
from dmljax._ops.vision.resample_plan import AxisPlan, check_resample_args, output_shape, plan_axes

__all__ = ["ResampleSpec", "onnx_modes", "resample", "resample_grad", "resample_grad_validated", "resample_validated"]


@dataclasses.dataclass(frozen=True)
class ResampleSpec:
    """A validated resampling: shapes, mode, rounding and the float32 scales and offsets (hashable)."""

    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    mode: str
    rounding_direction: str | None
    scales: tuple[float, ...]
    input_pixel_offsets: tuple[float, ...]
    output_pixel_offsets: tuple[float, ...]
    antialiased: bool = False

    @functools.cached_property
    def plans(self) -> tuple[AxisPlan, ...]:
        args = (self.mode, self.rounding_direction, self.scales, self.input_pixel_offsets, self.output_pixel_offsets)
        return plan_axes(self.input_shape, self.output_shape, *args, self.antialiased)


def resample(
    x: jax.typing.ArrayLike,
    scales: float | Sequence[float],
    *,
    mode: str = "nearest",
    input_pixel_offsets: float | Sequence[float] = 0.5,
    output_pixel_offsets: float | Sequence[float] = -0.5,
    rounding_direction: str | None = None,
    antialiased: bool = False,
) -> jax.Array:
    """Resample ``x`` by ``scales``: DML_RESAMPLE1 (RESAMPLE2 with ``rounding_direction``), ONNX Resize.

    The output has ``floor(size * scale)`` elements per axis (the product in float32).
    Output element ``o`` reads input coordinate ``c = (o - output_pixel_offset) / scale -
    input_pixel_offset`` per axis (DirectML's ``output = (input + input_pixel_offset) *
    scale + output_pixel_offset`` inverted; float32 arithmetic). The defaults (0.5, -0.5)
    map pixel centres to pixel centres (ONNX ``half_pixel``); (0, 0) is ``asymmetric``.

    * ``"nearest"``: index ``floor(c + 0.5)``: ties go up (RESAMPLE1; ONNX
      ``nearest_mode="round_prefer_ceil"``); with ``rounding_direction="decreasing"``
      ``floor(c)`` (ONNX ``"floor"``), ``"increasing"`` ``ceil(c)`` (``"ceil"``), as
      RESAMPLE2's member. Indices are clamped to the input.
    * ``"linear"``: multilinear over every resized axis: ``c`` clamped to ``[0, size-1]``,
      weights ``1 - f`` and ``f`` on ``floor(c)`` and the next element (the last one
      repeated at the border); corners summed in row-major order. With ``antialiased``
      (RESAMPLE3's member, ONNX ``antialias=1``) an axis scaled below 1 averages a triangle
      ``1 / scale`` elements wide (ONNX's reference weights, edge elements repeated).

    Reverse mode is `resample_grad` (bit for bit; ``jax.custom_vjp``); ``jax.jvp`` is not
    available for this function.

    Args:
      x: array of 1 to 8 dimensions; float for ``"linear"``, any type for ``"nearest"``.
      scales: a float > 0 per dimension (or one for all), static.
      mode: ``"nearest"`` or ``"linear"`` (DML_INTERPOLATION_MODE).
      input_pixel_offsets: a float per dimension (or one for all), static.
      output_pixel_offsets: a float per dimension (or one for all), static.
      rounding_direction: None (RESAMPLE1's rule), ``"increasing"`` or ``"decreasing"``
        (RESAMPLE2's ``RoundingDirection``); only ``"nearest"`` uses it.
      antialiased: RESAMPLE3's ``Antialiased``; only ``"linear"`` uses it.

    Returns:
      Array of the output shape and ``x``'s type.

    Raises:
      ValidationError: a scale is not > 0, an output size would be 0, an argument has the
        wrong length, is traced or not finite, or ``mode``/``rounding_direction`` is unknown.
      TypeError: ``x`` has an unsupported type, or is not float for ``"linear"``.

    Examples:
      >>> resample(jnp.array([[1.0, 2.0], [3.0, 4.0]]), (1.0, 1.5))
      Array([[1., 2., 2.],
             [3., 4., 4.]], dtype=float32)
      >>> resample(jnp.array([1.0, 2.0]), 2.0, mode="linear")
      Array([1.  , 1.25, 1.75, 2.  ], dtype=float32)
    """
    spec, x = _validated("resample", x, scales, mode, input_pixel_offsets, output_pixel_offsets, rounding_direction)
    return resample_validated(x, _with_antialias("resample", spec, antialiased))


def resample_grad(
    output_gradient: jax.typing.ArrayLike,
    input_shape: Sequence[int],
    scales: float | Sequence[float],
    *,
    mode: str,
    input_pixel_offsets: float | Sequence[float] = 0.5,
    output_pixel_offsets: float | Sequence[float] = -0.5,
    rounding_direction: str | None = None,
    antialiased: bool = False,
) -> jax.Array:
    """The gradient of `resample` in its input: DML_RESAMPLE_GRAD (GRAD1 with ``rounding_direction``).

    Exactly ``jax.vjp`` of `resample` with the same arguments: each input element receives
    the sum of ``weight * output_gradient[o]`` over the output elements ``o`` that read it,
    added in output row-major order (corners in row-major order within one output
    element) by the ordered add, so the bits are the same on every platform and device
    count (XLA's scatter-add gives no order). Elements no output reads get 0.

    Args:
      output_gradient: float array of the shape `resample` gives for ``input_shape``
        (DirectML's InputGradientTensor).
      input_shape: the shape of `resample`'s input (OutputGradientTensor's sizes), static.
      scales: as in `resample`, and so are ``mode``, ``input_pixel_offsets``,
        ``output_pixel_offsets``, ``rounding_direction`` and ``antialiased``.

    Returns:
      Array of ``input_shape`` and ``output_gradient``'s type.

    Raises:
      ValidationError: as `resample`, or ``output_gradient``'s shape is not the output shape.
      TypeError: ``output_gradient`` is not float.

    Examples:
      DirectML's worked example (rows scaled by 0.5, columns by 1.5) holds with RESAMPLE2's
      floor (``rounding_direction="decreasing"``); RESAMPLE1's halves-up rule reads the
      second row:

      >>> g = jnp.array([[4.0, 5.0, 6.0]])
      >>> resample_grad(g, (2, 2), (0.5, 1.5), mode="nearest", rounding_direction="decreasing")
      Array([[9., 6.],
             [0., 0.]], dtype=float32)
      >>> resample_grad(g, (2, 2), (0.5, 1.5), mode="nearest")
      Array([[ 0.,  0.],
             [ 4., 11.]], dtype=float32)
    """
    op = "resample_grad"
    grad = as_data(op, "output_gradient", output_gradient)
    if isinstance(input_shape, jax.core.Tracer):
        raise fail(op, "input_shape", "be static ints (not traced)", input_shape)
    shape = tuple(int(n) if hasattr(n, "__index__") and not isinstance(n, bool) else n for n in input_shape)
    if not all(isinstance(n, int) and n >= 1 for n in shape) or not 1 <= len(shape) <= MAX_DIMENSIONS:
        raise fail(op, "input_shape", f"be 1 to {MAX_DIMENSIONS} ints >= 1", tuple(input_shape))
    spec, _ = _validated(
        op,
        jnp.zeros((), grad.dtype),
        scales,
        mode,
        input_pixel_offsets,
        output_pixel_offsets,
        rounding_direction,
        shape,
    )
    if grad.shape != spec.output_shape:
        raise fail(
            op,
            "output_gradient.shape",
            f"be resample's output shape {spec.output_shape}",
            grad.shape,
            f"input_shape {shape}",
        )
    _check_float(op, "output_gradient", grad.dtype, "always")
    return resample_grad_validated(grad, _with_antialias(op, spec, antialiased))


def _with_antialias(op: str, spec: ResampleSpec, antialiased: object) -> ResampleSpec:
    if not isinstance(antialiased, bool | np.bool_):
        raise fail(op, "antialiased", "be a bool", antialiased)
    return dataclasses.replace(spec, antialiased=bool(antialiased) and spec.mode == "linear")


def _check_float(op: str, param: str, dtype: np.dtype, mode: str) -> None:
    if mode != "nearest" and not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(str(fail(op, f"{param}.dtype", f"be a float type (mode {mode!r})", np.dtype(dtype).name)))


def _validated(
    op: str,
    x: jax.typing.ArrayLike,
    scales: object,
    mode: object,
    input_pixel_offsets: object,
    output_pixel_offsets: object,
    rounding_direction: object,
    shape: tuple[int, ...] | None = None,
) -> tuple[ResampleSpec, jax.Array]:
    """Check the arguments (``shape``: the input's, when ``x`` only carries the type); the spec and ``x``."""
    x = as_data(op, "x", x)
    if shape is None:
        check_rank(op, "x", x.shape)
        shape = x.shape
    context = f"input shape {shape}"
    args = (mode, input_pixel_offsets, output_pixel_offsets, rounding_direction, context)
    scales, offsets_in, offsets_out = check_resample_args(op, shape, scales, *args)
    _check_float(op, "x", x.dtype, str(mode))
    out_shape = output_shape(op, shape, scales, context)
    flat_dtype(op, shape)  # positions into the input must fit (uint64 needs jax_enable_x64)
    rounding = str(rounding_direction) if mode == "nearest" and rounding_direction is not None else None
    spec = ResampleSpec(shape, out_shape, str(mode), rounding, scales, offsets_in, offsets_out)
    return spec, x


def onnx_modes(spec: ResampleSpec) -> tuple[str, str] | None:
    """ONNX Resize's ``(coordinate_transformation_mode, nearest_mode)`` for ``spec``, or None.

    ``half_pixel`` is offsets (0.5, -0.5) on every axis, ``asymmetric`` (0, 0); the nearest
    rules are ``round_prefer_ceil`` (RESAMPLE1), ``floor`` and ``ceil`` (RESAMPLE2).
    DirectML cannot express ``round_prefer_floor`` in RESAMPLE1 (RESAMPLE2 can: ``ceil``
    after an input offset of +0.5; no single ONNX mode maps back); other offsets have no
    ONNX mode (None: the export keeps the gathers).

    Examples:
      >>> spec = _validated("resample", jnp.ones((1, 2)), (1.0, 2.0), "nearest", 0.5, -0.5, None)[0]
      >>> onnx_modes(spec)
      ('half_pixel', 'round_prefer_ceil')
    """
    pairs = set(zip(spec.input_pixel_offsets, spec.output_pixel_offsets, strict=True))
    names = {(0.5, -0.5): "half_pixel", (0.0, 0.0): "asymmetric"}
    if len(pairs) != 1 or next(iter(pairs)) not in names:
        return None
    rounding = {None: "round_prefer_ceil", "decreasing": "floor", "increasing": "ceil"}[spec.rounding_direction]
    return names[next(iter(pairs))], rounding


def _mark(out: jax.Array, x: jax.Array, spec: ResampleSpec) -> jax.Array:
    """Mark the result as an ONNX Resize where one expresses ``spec``."""
    modes = None if spec.antialiased else onnx_modes(spec)  # antialias: the gathers are exported
    sizes = tuple(
        int(np.floor(np.float32(n) * np.float32(s))) for n, s in zip(spec.input_shape, spec.scales, strict=True)
    )
    if modes is None or sizes != spec.output_shape or not traced(out, x):  # Resize's sizes are floor(size * scale)
        return out
    return mark(
        out, x, op="resample", mode=spec.mode, scales=spec.scales, coordinate_mode=modes[0], nearest_mode=modes[1]
    )


def resample_validated(x: jax.Array, spec: ResampleSpec) -> jax.Array:
    """`resample` on validated arguments: no checks."""
    return _mark(_resample_jit(x, spec), x, spec)


def resample_grad_validated(output_gradient: jax.Array, spec: ResampleSpec) -> jax.Array:
    """`resample_grad` on validated arguments: no checks."""
    return _backward_jit(output_gradient, spec)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """float32 for 16-bit floats (rounded once at the end), else the type itself."""
    if jnp.issubdtype(dtype, jnp.floating) and np.dtype(dtype).itemsize < 4:
        return np.dtype(np.float32)
    return np.dtype(dtype)


def _along(values: np.ndarray, axis: int, rank: int, dtype: np.dtype) -> jax.Array:
    """A per-axis constant shaped to broadcast along ``axis`` of a rank-``rank`` array."""
    shape = [1] * rank
    shape[axis] = values.shape[0]
    return jnp.asarray(values.astype(dtype).reshape(shape))


def _corners(spec: ResampleSpec) -> list[tuple[int, ...]]:
    """The corners' taps (one per resized axis) in row-major order."""
    return list(itertools.product(*(range(p.indices.shape[0]) for p in spec.plans)))


def _weight(spec: ResampleSpec, taps: tuple[int, ...], dtype: np.dtype) -> jax.Array | None:
    """The corner's weight per output element: the per-axis weights multiplied in axis order."""
    rank, weight = len(spec.output_shape), None
    for plan, tap in zip(spec.plans, taps, strict=True):
        if plan.weights is None:
            continue
        w = _along(plan.weights[tap], plan.axis, rank, dtype)
        weight = w if weight is None else weight * w
    return weight


def _rounded(like: jax.Array, dtype: np.dtype) -> jax.Array:
    """``-0.0`` times a runtime 0 or 1 (whether ``like``'s first element is NaN): added to a
    product, XLA's contraction ``fma(a, b, -0.0)`` is the rounded product, so the sums that
    follow add rounded products on every platform (as
    `dmljax._ops.ordered.sorted_fold.combiner` does; a comparison, not a bitcast, so that
    the ONNX export has no BitCast node).
    """
    first = like.reshape(-1)[:1]
    return jnp.asarray(-0.0, dtype) * (first != first).astype(dtype)[0]


def _forward(x: jax.Array, spec: ResampleSpec) -> jax.Array:
    dtype = _compute_dtype(x.dtype)
    z = _rounded(x, dtype)  # unused (dead code) for nearest

    def term(taps: tuple[int, ...]) -> jax.Array:
        value = x
        for plan, tap in zip(spec.plans, taps, strict=True):
            value = jnp.take(value, jnp.asarray(plan.indices[tap], jnp.int32), axis=plan.axis, mode="clip")
        weight = _weight(spec, taps, dtype)
        return value if weight is None else value.astype(dtype) * weight + z

    first, *rest = _corners(spec)
    total = term(first)
    for taps in rest:
        total = total + term(taps)
    return total.astype(x.dtype)


def _targets(spec: ResampleSpec, taps: tuple[int, ...], dtype: np.dtype) -> jax.Array:
    """The flat input position each output element reads at the corner ``taps``."""
    shape, out_shape = spec.input_shape, spec.output_shape
    by_axis = {plan.axis: plan.indices[tap] for plan, tap in zip(spec.plans, taps, strict=True)}
    position = jnp.zeros(out_shape, dtype)
    for axis in range(len(shape)):
        index = by_axis.get(axis, np.arange(out_shape[axis]))
        stride = math.prod(shape[axis + 1 :])
        position = position + _along(np.asarray(index) * stride, axis, len(shape), dtype)
    return position


def _backward(g: jax.Array, spec: ResampleSpec) -> jax.Array:
    dtype, positions = _compute_dtype(g.dtype), flat_dtype("resample_grad", spec.input_shape)
    corners = _corners(spec)
    targets = jnp.stack([_targets(spec, taps, positions) for taps in corners], axis=-1)
    gc = g.astype(dtype)
    z = _rounded(g, dtype)  # unused (dead code) for nearest
    updates = []
    for taps in corners:
        weight = _weight(spec, taps, dtype)
        updates.append(gc if weight is None else gc * weight + z)
    flat = jnp.zeros(math.prod(spec.input_shape), dtype)
    out = ordered_add(flat, targets.reshape(-1), jnp.stack(updates, axis=-1).reshape(-1))
    return out.reshape(spec.input_shape).astype(g.dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _resample_core(x: jax.Array, spec: ResampleSpec) -> jax.Array:
    return _forward(x, spec)


def _core_fwd(x: jax.Array, spec: ResampleSpec) -> tuple[jax.Array, None]:
    return _forward(x, spec), None


def _core_bwd(spec: ResampleSpec, _: None, g: jax.Array) -> tuple[jax.Array]:
    return (_backward(g, spec),)


_resample_core.defvjp(_core_fwd, _core_bwd)
_resample_jit = jax.jit(_resample_core, static_argnums=1)
_backward_jit = jax.jit(_backward, static_argnums=1)
