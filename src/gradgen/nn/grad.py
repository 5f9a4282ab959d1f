"""torch.nn.grad: the gradients of a convolution with respect to its input and its
weight, from the output's gradient (convolution_backward with one output asked)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradgen.generated import ops
from gradgen.tensor import Tensor

from .modules.utils import _pair, _single, _triple

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

IntOrTuple = int | Sequence[int]


def _backward(
    grad_output: Tensor,
    input: Tensor,
    weight: Tensor,
    arguments: tuple[Any, Any, Any, int],
    to_tuple: Callable[[Any], tuple[int, ...]],
    which: int,
) -> Tensor:
    """One of convolution_backward's gradients: 0 the input's, 1 the weight's."""
    stride, padding, dilation, groups = arguments
    mask = [which == 0, which == 1, False]
    gradients = ops.convolution_backward(
        grad_output,
        input,
        weight,
        None,
        list(to_tuple(stride)),
        list(to_tuple(padding)),
        list(to_tuple(dilation)),
        False,
        [0],
        groups,
        mask,
    )
    gradient: Tensor = gradients[which]
    return gradient


def _placeholder(like: Tensor, size: Sequence[int]) -> Tensor:
    """A tensor of `size` standing for the argument whose values the gradient does
    not read (only its shape)."""
    return like.new_zeros(1).expand(*size)


def conv1d_input(
    input_size: Sequence[int],
    weight: Tensor,
    grad_output: Tensor,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """The gradient of conv1d with respect to an input of `input_size`."""
    input = _placeholder(grad_output, input_size)
    arguments = (stride, padding, dilation, groups)
    return _backward(grad_output, input, weight, arguments, _single, 0)


def conv1d_weight(
    input: Tensor,
    weight_size: Sequence[int],
    grad_output: Tensor,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """The gradient of conv1d with respect to a weight of `weight_size`."""
    weight = _placeholder(grad_output, weight_size)
    arguments = (stride, padding, dilation, groups)
    return _backward(grad_output, input, weight, arguments, _single, 1)


def conv2d_input(
    input_size: Sequence[int],
    weight: Tensor,
    grad_output: Tensor,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """The gradient of conv2d with respect to an input of `input_size`."""
    input = _placeholder(grad_output, input_size)
    arguments = (stride, padding, dilation, groups)
    return _backward(grad_output, input, weight, arguments, _pair, 0)


def conv2d_weight(
    input: Tensor,
    weight_size: Sequence[int],
    grad_output: Tensor,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """The gradient of conv2d with respect to a weight of `weight_size`."""
    weight = _placeholder(grad_output, weight_size)
    arguments = (stride, padding, dilation, groups)
    return _backward(grad_output, input, weight, arguments, _pair, 1)


def conv3d_input(
    input_size: Sequence[int],
    weight: Tensor,
    grad_output: Tensor,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """The gradient of conv3d with respect to an input of `input_size`."""
    input = _placeholder(grad_output, input_size)
    arguments = (stride, padding, dilation, groups)
    return _backward(grad_output, input, weight, arguments, _triple, 0)


def conv3d_weight(
    input: Tensor,
    weight_size: Sequence[int],
    grad_output: Tensor,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """The gradient of conv3d with respect to a weight of `weight_size`."""
    weight = _placeholder(grad_output, weight_size)
    arguments = (stride, padding, dilation, groups)
    return _backward(grad_output, input, weight, arguments, _triple, 1)
