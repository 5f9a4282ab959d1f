"""torch.nn.functional's activations over gradgen's operators: most call the
operator of their name (celu, glu, hardshrink, hardsigmoid, ...), a few are short
composites as PyTorch's (relu6 is hardtanh, selu is elu, softmin is softmax)."""

from __future__ import annotations

import warnings
from typing import Any


from gradgen.factories import zeros_like
from gradgen.generated import ops
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
    "rrelu",
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
    """relu6(x + 3) / 6 (HardsigmoidBackward0)."""
    return _in_place(input, ops.hardsigmoid(input), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6 (HardswishBackward0)."""
    return _in_place(input, ops.hardswish(input), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with SELU's fixed alpha and scale."""
    if inplace:
        return ops.elu_(input, _SELU_ALPHA, _SELU_SCALE)
    return ops.elu(input, _SELU_ALPHA, _SELU_SCALE)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (CeluBackward0; in place, elu_
    with input_scale 1 / alpha)."""
    if inplace:
        if alpha == 0:
            raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
        return ops.elu_(input, alpha, 1.0, 1.0 / alpha)
    return ops.celu(input, alpha)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of `input` along `dim` (GluBackward0)."""
    return ops.glu(input, dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x >= 0, else weight * x, the weight per channel (dimension 1) or one
    for all (PreluKernelBackward0)."""
    return ops.prelu(input, weight)


def threshold(
    input: Tensor, threshold: float, value: float, inplace: bool = False
) -> Tensor:
    """x where x > threshold, else value (ThresholdBackward0)."""
    return _in_place(input, ops.threshold(input, threshold, value), inplace)


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
    """x - lambd above lambd, x + lambd below -lambd, 0 between (SoftshrinkBackward0)."""
    return ops.softshrink(input, lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0 (HardshrinkBackward0)."""
    return ops.hardshrink(input, lambd)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """x where x >= 0, else x times a slope drawn from [lower, upper] in training, or
    times (lower + upper) / 2 (RreluWithNoiseBackward0)."""
    noise = zeros_like(input.detach())
    result = ops.rrelu_with_noise(input, noise, lower, upper, training)
    return _in_place(input, result, inplace)
