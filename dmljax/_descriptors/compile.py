"""`compile_operator`: validate a descriptor, then adapt buffers to the array function.

The flow of every compiled operator: each input buffer -> `read_tensor` through its
descriptor (`read_operand`: layout changes the operator fuses) -> the operator's one array
function, through its registration's ``apply`` (`dmljax._descriptors.registry`) ->
`write_tensor` into a zero buffer of ``total_tensor_size_in_bytes // itemsize`` elements
laid out by the output descriptor.
No operator semantics live here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from dmljax._buffers.strided import as_desc_type, check_buffer, read_operand, write_operand
from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._descriptors.feature_levels import FeatureLevel, as_feature_level
from dmljax._descriptors.registry import Operator
from dmljax._descriptors.validate import tensors_of, validate_operator_desc

__all__ = ["compile_operator"]


def compile_operator(desc: Any, feature_level: Any = FeatureLevel.LATEST) -> Callable[..., Any]:
    """Validate an operator descriptor at a feature level and return it as a jitted function.

    The counterpart of ``IDMLDevice::CreateOperator`` + ``CompileOperator`` on a device of
    ``feature_level``. Validation covers the operator's availability, every tensor's
    dimension count and data type in the level's row of the operator's support table,
    the shape rules between tensors, the axis, window, output and state sizes, buffer
    sizes (at most 2^32 - 1 elements) and that no output descriptor aliases, all before
    anything is traced.

    The returned function takes one flat 1-D buffer per input tensor, in the struct's
    order, each read through its descriptor's strides (packed, NHWC, padded and broadcast
    buffers all work). DirectML binds ``TotalTensorSizeInBytes``; dmljax reads only the
    elements the descriptor covers, so a buffer needs ``min_buffer_elements``. It
    returns the output buffer: ``total_tensor_size_in_bytes // itemsize`` elements laid
    out by the output descriptor's strides, zero where the descriptor covers no element.
    RandomGenerator with an ``output_state_tensor`` returns ``(output, output_state)``.
    The function is pure and jitted (descriptors are static), and differentiable in its
    float buffers.

    Indices inside a compiled operator are traced values, so the array functions' traced
    defaults apply, as DirectML's do: negative values of signed types count from the end
    of the axis; out-of-range values are read clamped by Gather and GatherElements
    ("all reads are safely clamped"), GatherND1 too (each index on its own axis), and
    dropped by Scatter and ScatterND (the input element stays). Duplicate Scatter and
    ScatterND indices leave unspecified which update wins.

    Args:
      desc: a `ScatterOperatorDesc`, `GatherOperatorDesc`, `GatherElementsOperatorDesc`,
        `GatherNDOperatorDesc`, `ScatterNDOperatorDesc`, `Slice1OperatorDesc`,
        `RandomGeneratorOperatorDesc`, `CumulativeSummationOperatorDesc`,
        `CumulativeProductOperatorDesc`, `TopKOperatorDesc` (returns ``(values, indices)``),
        `ArgMaxOperatorDesc`, `ArgMinOperatorDesc`, `OneHotOperatorDesc` or
        `NonzeroCoordinatesOperatorDesc` (returns ``(count, coordinates)``),
        `PaddingOperatorDesc`, `TileOperatorDesc`,
        `JoinOperatorDesc` (one buffer per input), `SplitOperatorDesc` (a tuple of outputs),
        `SpaceToDepthOperatorDesc`, `DepthToSpaceOperatorDesc`,
        `ReverseSubsequencesOperatorDesc`, `FillValueSequenceOperatorDesc` (no input
        buffer) or `SliceGradOperatorDesc`.
      feature_level: a `FeatureLevel`, DirectML's integer value or a string like ``"3.0"``.

    Returns:
      A jitted function from input buffers to the output buffer (or a tuple of them).

    Raises:
      ValidationError: the operator or a tensor is not supported at ``feature_level``, or a
        rule between members is broken; the message names the struct, the member, the
        rule, the level and the value. When called: a buffer is not 1-D, has another
        type than its descriptor (a host value converts only value-exact) or is too
        short, or a 64-bit output tensor needs ``jax_enable_x64``.
      TypeError: ``desc`` or ``feature_level`` is of an unknown kind.

    Examples:
      >>> from dmljax import TensorDesc
      >>> from dmljax.descriptors import ScatterOperatorDesc
      >>> data, index = TensorDesc("float32", (5,)), TensorDesc("uint32", (4,))
      >>> desc = ScatterOperatorDesc(data, index, TensorDesc("float32", (4,)), data, axis=0)
      >>> op = compile_operator(desc, "3.0")
      >>> op(jnp.arange(5.0), jnp.array([3, 1, 4, 0], jnp.uint32), jnp.array([5.0, 6, 7, 8]))  # unique indices
      Array([8., 6., 2., 5., 7.], dtype=float32)
      >>> compile_operator(desc, "2.1")
      Traceback (most recent call last):
      ...
      dmljax.ValidationError: ScatterOperatorDesc: input_tensor.dimension_count must be 4 at feature level...
    """
    level = as_feature_level(feature_level, "compile_operator")
    operator = validate_operator_desc(desc, level)
    struct = type(desc).__name__

    def compiled(*buffers: jax.typing.ArrayLike) -> Any:
        return _run(operator, desc, buffers)

    compiled.__name__ = compiled.__qualname__ = struct
    inputs = ", ".join(_buffer_name(m) for m in operator.inputs)
    compiled.__doc__ = f"{struct} compiled at feature level {level}: ({inputs}) -> output buffer(s)."
    jitted = jax.jit(compiled)

    # Host buffers are converted before `jax.jit` sees them: their own dtype decides, not
    # JAX's x64-dependent conversion (`as_desc_type`).
    @functools.wraps(compiled)
    def call(*buffers: jax.typing.ArrayLike) -> Any:
        return jitted(*_host_buffers(operator, desc, buffers))

    call.lower = lambda *buffers: jitted.lower(*_host_buffers(operator, desc, buffers))  # type: ignore[attr-defined]
    call.trace = lambda *buffers: jitted.trace(*_host_buffers(operator, desc, buffers))  # type: ignore[attr-defined]
    return call


def _host_buffers(operator: Any, desc: Any, buffers: tuple[Any, ...]) -> tuple[Any, ...]:
    """Host buffers in their descriptors' types, converted exactly or refused (`as_desc_type`)."""
    inputs = _tensors(desc, operator.inputs)
    if len(buffers) != len(inputs):  # `_run` names the count
        return buffers
    struct = type(desc).__name__
    return tuple(as_desc_type(struct, _buffer_name(m), b, t) for (m, t), b in zip(inputs, buffers, strict=True))


def _buffer_name(member: str) -> str:
    return member.replace("_tensors[", "_buffers[").removesuffix("_tensor") + ("" if "[" in member else "_buffer")


def _tensors(desc: Any, members: Any) -> list[tuple[str, TensorDesc]]:
    """``(name, descriptor)`` per buffer: a member holding a tuple of tensors (DML_JOIN's
    ``input_tensors``, DML_SPLIT's ``output_tensors``) gives one buffer per element."""
    named: list[tuple[str, TensorDesc]] = []
    for member in members:
        value = getattr(desc, member, None)
        if isinstance(value, tuple):
            named.extend((f"{member}[{i}]", tensor) for i, tensor in enumerate(value))
        elif value is not None:
            named.append((member, value))
    return named


def _run(operator: Operator, desc: Any, buffers: tuple[Any, ...]) -> Any:
    """Read every input buffer, apply the operator's array function, write every output buffer.

    ``desc`` was validated (`validate_operator_desc`): the array function and the writes run
    unchecked; only the buffers, which arrive now, are checked.
    """
    inputs = _tensors(desc, operator.inputs)
    if len(buffers) != len(inputs):
        names = ", ".join(_buffer_name(m) for m, _ in inputs)
        raise TypeError(f"{type(desc).__name__}: takes {len(inputs)} buffers ({names}); got {len(buffers)}.")
    struct = type(desc).__name__
    outputs = [(m, t) for m, t in tensors_of(desc).items() if m.startswith("output_")]  # the struct's order
    arrays = [_read(struct, member, tensor, buffer) for (member, tensor), buffer in zip(inputs, buffers, strict=True)]
    for member, tensor in _tensors(desc, [m for m, _ in outputs]):
        if tensor.dtype.is_64bit and not x64_enabled():  # JAX would make it a 32-bit buffer
            rule = "be 32-bit or narrower unless jax_enable_x64 is on (a buffer holds its descriptor's type)"
            hint = "64-bit types need jax.config.update('jax_enable_x64', True)"
            raise fail(struct, f"{member}.dtype", rule, tensor.dtype.name, hint)
    results = operator.apply(desc, *arrays)
    written = tuple(_write(tensor, value) for (_, tensor), value in zip(outputs, results, strict=False))
    return written[0] if len(written) == 1 else written


def _read(struct: str, member: str, tensor: TensorDesc, buffer: jax.typing.ArrayLike) -> jax.Array:
    """The logical tensor of ``tensor`` (the struct's ``member``) read from its flat buffer."""
    if not isinstance(buffer, jax.Array):  # under `jax.jit` every array argument is a tracer
        rule = f"be a 1-D array of {tensor.dtype.name} (a flat buffer)"
        raise TypeError(str(fail(struct, _buffer_name(member), rule, buffer)))
    buffer = check_buffer(struct, _buffer_name(member), buffer, tensor)
    return read_operand(buffer, tensor)  # the operator fuses the layout change (no tiles)


def _write(tensor: TensorDesc, value: jax.Array) -> jax.Array:
    """A zero buffer of ``total_tensor_size_in_bytes // itemsize`` with ``value`` laid out by ``tensor``."""
    zeros = jnp.zeros(tensor.buffer_elements, tensor.dtype.dtype)
    return write_operand(zeros, tensor, value.reshape(tensor.sizes))
