"""torch.nn.functional's activations over gradgen's operators: most call the
operator of their name (celu, glu, hardshrink, hardsigmoid, ...), a few are short
composites as PyTorch's (relu6 is hardtanh, selu is elu, softmin is softmax)."""

from __future__ import annotations

import warnings
from typing import Any

from gradgen.factories import empty_like, zeros_like
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
    "relu_",
    "elu_",
    "leaky_relu_",
    "selu_",
    "celu_",
    "hardtanh_",
    "threshold_",
    "rrelu_",
    "gumbel_softmax",
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
    """x where x > threshold, else value (ThresholdBackward0; in place, a masked
    fill, whose gradient is the same and needs no copy of the input)."""
    if inplace:
        return input.masked_fill_(input.detach() <= threshold, value)
    return ops.threshold(input, threshold, value)


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
    if inplace:
        return _rrelu_in_place(input, lower, upper, training)
    return ops.rrelu_with_noise(input, _noise(input), lower, upper, training)


def _noise(input: Tensor) -> Tensor:
    """rrelu's noise buffer: zeros like `input` (PyTorch's empty_like), made by
    operators so that under vmap it is batched as the input is."""
    return ops.zero_(ops.clone(input.detach()))


def _rrelu_in_place(
    input: Tensor, lower: float, upper: float, training: bool
) -> Tensor:
    """rrelu written into `input`: leaky_relu_ with the mean slope, or in training
    input times the drawn noise (1 where x >= 0), whose gradient is the noise, as
    rrelu_with_noise_'s backward."""
    if not training:
        return ops.leaky_relu_(input, (lower + upper) / 2)
    noise = _noise(input)
    ops.rrelu_with_noise(input.detach(), noise, lower, upper, training)
    return input.mul_(noise)


# -- the in-place forms (torch.nn.functional's relu_, elu_, ...) ---------------------


def relu_(input: Tensor) -> Tensor:
    """relu written into `input`."""
    return ops.relu_(input)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """elu written into `input`."""
    return ops.elu_(input, alpha)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """leaky_relu written into `input`."""
    return ops.leaky_relu_(input, negative_slope)


def selu_(input: Tensor) -> Tensor:
    """selu written into `input`."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """celu written into `input`."""
    return celu(input, alpha, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """hardtanh written into `input`."""
    return ops.hardtanh_(input, min_val, max_val)


threshold_function = threshold


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """threshold written into `input`."""
    return threshold_function(input, threshold, value, inplace=True)


def rrelu_(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
) -> Tensor:
    """rrelu written into `input`."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(
    logits: Tensor,
    tau: float = 1,
    hard: bool = False,
    eps: float = 1e-10,
    dim: int = -1,
) -> Tensor:
    """softmax((logits + g) / tau) along `dim`, g Gumbel(0, 1) noise from gradgen's
    generator; with hard, the one-hot of its argmax, whose gradient is the soft
    sample's (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # Gumbel(0, 1) noise: -log of Exponential(1) draws (a random operator, so that
    # gradgen.compile records the draw and makes a fresh one on every call).
    gumbels = -(empty_like(logits).exponential_().log())
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = ops.scatter(zeros_like(logits.detach()), dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
