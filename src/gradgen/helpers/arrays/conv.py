"""Array twins of the convolution backward operators (the numpy kernels of
native_functions.yaml, called as their dispatcher calls them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...numpy_kernels import convolution_backward as _convolution_backward
from ._common import as_array, kernel_result

__all__ = ["convolution_backward"]


def convolution_backward(
    grad_output: np.ndarray,
    input: np.ndarray,  # noqa: A002  (PyTorch's name)
    weight: np.ndarray,
    bias_sizes: Sequence[int] | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    grad_input, grad_weight, grad_bias = _convolution_backward(
        as_array(grad_output),
        as_array(input),
        as_array(weight),
        bias_sizes,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        output_mask,
    )
    return (
        kernel_result(grad_input),
        kernel_result(grad_weight),
        kernel_result(grad_bias),
    )
