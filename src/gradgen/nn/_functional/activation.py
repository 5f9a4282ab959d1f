"""torch.nn.functional's activations that are short composites of gradgen's
operators (hardtanh, elu, where, softmax, ...): the values and gradients of
PyTorch's kernels (away from the kinks, where one-sided choices may differ)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gradgen.dtypes import spelling
from gradgen.generated import ops
from gradgen.numpy_kernels._common import _wrap_dim
from gradgen.tensor import Tensor

__all__ = [
    "relu6",
    "hardsigmoid",
    "hardswish",
    "selu",
    "celu",
    "glu",
    "prelu",
    "threshold",
    "softmin",
    "tanhshrink",
    "softshrink",
    "hardshrink",
]

# SELU's constants (Klambauer et al., 2017), as ATen's.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _in_place(input: Tensor, result: Tensor, inplace: bool) -> Tensor:
    """`result`, or written into `input` when `inplace`."""
    if not inplace:
        return result
    return input.copy_(result)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)."""
    if inplace:
        return ops.hardtanh_(input, 0.0, 6.0)
    return ops.hardtanh(input, 0.0, 6.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    result = ops.hardtanh(input + 3, 0.0, 6.0) / 6
    return _in_place(input, result, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    result = input * ops.hardtanh(input + 3, 0.0, 6.0) / 6
    return _in_place(input, result, inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with SELU's fixed alpha and scale."""
    if inplace:
        return ops.elu_(input, _SELU_ALPHA, _SELU_SCALE)
    return ops.elu(input, _SELU_ALPHA, _SELU_SCALE)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if inplace:
        return ops.elu_(input, alpha, 1.0, 1.0 / alpha)
    return ops.elu(input, alpha, 1.0, 1.0 / alpha)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of `input` along `dim`."""
    if input.dim() == 0:
        raise RuntimeError(
            "glu does not support scalars because halving size must be even"
        )
    dim = _wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim} is size {size}"
        )
    first, second = input.chunk(2, dim)
    return first * ops.sigmoid(second)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x, the weight per channel (dimension 1) or one
    for all."""
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else input.shape[0]
        if weight.numel() != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {weight.numel()} and channel size = {channels}."
            )
        if input.dim() >= 2:
            weight = weight.reshape((channels,) + (1,) * (input.dim() - 2))
    return ops.where(input > 0, input, weight * input)


def threshold(
    input: Tensor, threshold: float, value: float, inplace: bool = False
) -> Tensor:
    """x where x > threshold, else value."""
    result = ops.where(input > threshold, input, value)
    return _in_place(input, result, inplace)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """softmax(-x) along `dim`."""
    if dim is None:
        warnings.warn(
            "Implicit dimension choice for softmin has been deprecated. Change the "
            "call to include dim=X as an argument.",
            stacklevel=_stacklevel,
        )
        dim = 0 if input.dim() in (0, 1, 3) else 1
    if dtype is None:
        return (-input).softmax(dim)
    return (-input).softmax(dim, dtype=dtype)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - ops.tanh(input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        largest = float(np.finfo(input._data.dtype).max)
        raise RuntimeError(
            f"lambda must be in range [0, {largest:g}] for input dtype "
            f"{spelling(input).scalar_type}, but found {lambd:g}"
        )
    shrunk = ops.where(input < -lambd, input + lambd, 0.0)
    return ops.where(input > lambd, input - lambd, shrunk)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return ops.where((input > lambd) | (input < -lambd), input, 0.0)
