"""torch.nn.functional's convolutions: conv1d/2d/3d and conv_transpose1d/2d/3d, with
PyTorch's signatures, calling gradgen's convolution operators (their numpy kernels and
PyTorch's derivative formulas live in the conv family)."""

from __future__ import annotations

from collections.abc import Sequence

from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]

IntOrInts = int | Sequence[int]


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrInts = 1,
    padding: IntOrInts | str = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
) -> Tensor:
    """A 1-d convolution (cross-correlation) of (N, C_in, L) or (C_in, L) with weight
    (C_out, C_in / groups, k); padding is a number, a tuple, 'same' or 'valid'."""
    return ops.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrInts = 1,
    padding: IntOrInts | str = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
) -> Tensor:
    """A 2-d convolution of (N, C_in, H, W) or (C_in, H, W) with weight
    (C_out, C_in / groups, kH, kW); padding is a number, a pair, 'same' or 'valid'."""
    return ops.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrInts = 1,
    padding: IntOrInts | str = 0,
    dilation: IntOrInts = 1,
    groups: int = 1,
) -> Tensor:
    """A 3-d convolution of (N, C_in, D, H, W) or (C_in, D, H, W) with weight
    (C_out, C_in / groups, kD, kH, kW); padding is a number, a triple, 'same' or
    'valid'."""
    return ops.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrInts = 1,
    padding: IntOrInts = 0,
    output_padding: IntOrInts = 0,
    groups: int = 1,
    dilation: IntOrInts = 1,
) -> Tensor:
    """The transposed 1-d convolution (the gradient of conv1d with respect to its
    input), weight (C_in, C_out / groups, k)."""
    return ops.conv_transpose1d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrInts = 1,
    padding: IntOrInts = 0,
    output_padding: IntOrInts = 0,
    groups: int = 1,
    dilation: IntOrInts = 1,
) -> Tensor:
    """The transposed 2-d convolution, weight (C_in, C_out / groups, kH, kW)."""
    return ops.conv_transpose2d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrInts = 1,
    padding: IntOrInts = 0,
    output_padding: IntOrInts = 0,
    groups: int = 1,
    dilation: IntOrInts = 1,
) -> Tensor:
    """The transposed 3-d convolution, weight (C_in, C_out / groups, kD, kH, kW)."""
    return ops.conv_transpose3d(
        input, weight, bias, stride, padding, output_padding, groups, dilation
    )
