"""Formula helpers of the conv family: convolution's forward-mode formula and the
derivatives of convolution_backward, conv_tbc's backward.

A convolution is bilinear in (input, weight), for the transposed one too, so every
derivative here is a convolution or a convolution_backward again (operators, hence
differentiable once more)."""

from __future__ import annotations

from collections.abc import Sequence

from ..generated.ops import convolution, convolution_backward
from ..tensor import Tensor
from ._common import zeros_like

__all__ = [
    "convolution_jvp",
    "_convolution_double_backward_symint",
    "convolution_backward_jvp_grad_bias",
    "conv_tbc_backward",
    "_convolution_jvp",
]


def convolution_jvp(
    input_p: Tensor,
    input_t: Tensor,
    weight_p: Tensor,
    weight_t: Tensor,
    bias_p: Tensor | None,
    bias_t: Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Tensor:
    """The tangent of convolution: conv(input_t, weight) + conv(input, weight_t) +
    bias_t (the product rule of a bilinear map)."""
    arguments = (stride, padding, dilation, transposed, output_padding, groups)
    return convolution(input_t, weight_p, bias_t, *arguments) + convolution(
        input_p, weight_t, None, *arguments
    )


def _convolution_double_backward_symint(
    ggI: Tensor | None,
    ggW: Tensor | None,
    ggb: Tensor | None,
    gO: Tensor,
    weight: Tensor,
    input: Tensor,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The gradients of convolution_backward for (grad_output, input, weight), given
    the gradients ggI, ggW, ggb of its three outputs (None when one got none).

    grad_input is linear in (gO, weight), grad_weight in (gO, input), grad_bias in gO,
    with <ggI, grad_input> = <conv(ggI, weight), gO> and <ggW, grad_weight> =
    <conv(input, ggW), gO>; so gO gets conv(ggI, weight) + conv(input, ggW) + ggb,
    input gets the input gradient of conv(input, ggW), and weight the weight
    gradient of conv(ggI, weight), both at gO."""
    arguments = (stride, padding, dilation, transposed, output_padding, groups)
    g_output: Tensor | None = None
    if output_mask[0]:
        g_output = zeros_like(gO)
        if ggI is not None:
            g_output = g_output + convolution(ggI, weight, None, *arguments)
        if ggW is not None:
            g_output = g_output + convolution(input, ggW, None, *arguments)
        if ggb is not None:
            g_output = g_output + ggb.reshape([-1] + [1] * (gO.dim() - 2))
    g_input: Tensor | None = None
    if output_mask[1] and ggW is not None:
        g_input = convolution_backward(
            gO, input, ggW, None, *arguments, [True, False, False]
        )[0]
    g_weight: Tensor | None = None
    if output_mask[2] and ggI is not None:
        g_weight = convolution_backward(
            gO, ggI, weight, None, *arguments, [False, True, False]
        )[1]
    return g_output, g_input, g_weight


def convolution_backward_jvp_grad_bias(grad_out_t: Tensor, grad_bias: Tensor) -> Tensor:
    """The tangent of convolution_backward's grad_bias: grad_out_t summed over every
    dimension but the channels."""
    dims = [0] + list(range(2, grad_out_t.dim()))
    return grad_out_t.sum(dims).reshape(grad_bias.shape)


def conv_tbc_backward(
    self: Tensor, input: Tensor, weight: Tensor, bias: Tensor, pad: int
) -> tuple[Tensor, Tensor, Tensor]:
    """(grad_input, grad_weight, grad_bias) of conv_tbc, whose output gradient is
    `self` (an operator in PyTorch, which its input and self arguments keep out of
    gradgen's schemas; without a derivative there, so twice differentiable only here): convolution_backward with time, batch and channels moved to PyTorch's
    (batch, channels, time) and the weight to (out, in, width)."""
    grad_input, grad_weight, grad_bias = convolution_backward(
        self.permute(1, 2, 0),
        input.permute(1, 2, 0),
        weight.permute(2, 1, 0),
        [bias.shape[0]],
        [1],
        [pad],
        [1],
        False,
        [0],
        1,
        [True, True, True],
    )
    return grad_input.permute(2, 0, 1), grad_weight.permute(2, 1, 0), grad_bias


def _convolution_jvp(
    input_p: Tensor,
    input_t: Tensor,
    weight_p: Tensor,
    weight_t: Tensor,
    bias_p: Tensor | None,
    bias_t: Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    benchmark: bool,
    deterministic: bool,
    cudnn_enabled: bool,
    allow_tf32: bool,
) -> Tensor:
    """The tangent of _convolution: convolution_jvp (the backend flags change nothing
    here)."""
    return convolution_jvp(
        input_p,
        input_t,
        weight_p,
        weight_t,
        bias_p,
        bias_t,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )
