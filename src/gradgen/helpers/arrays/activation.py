"""Array twins of the activation backward operators."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...numpy_kernels import (
    elu_backward as _elu_backward,
    gelu_backward as _gelu_backward,
    hardtanh_backward as _hardtanh_backward,
    leaky_relu_backward as _leaky_relu_backward,
    log_sigmoid_backward as _log_sigmoid_backward,
    silu_backward as _silu_backward,
    softmax_backward_data,
    softplus_backward as _softplus_backward,
    threshold_backward as _threshold_backward,
)
from ...numpy_kernels import (
    glu_backward as _glu_backward,
    hardshrink_backward as _hardshrink_backward,
    hardsigmoid_backward as _hardsigmoid_backward,
    hardswish_backward as _hardswish_backward,
    prelu_kernel_backward as _prelu_kernel_backward_kernel,
    softshrink_backward as _softshrink_backward,
)
from ...dtypes import _FROM_NUMPY
from ._common import as_array, in_dtype, kernel_result, promoted, result_dtype
from .elementwise import add, mul, sigmoid, sub, to

__all__ = [
    "threshold_backward",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "gelu_backward",
    "silu_backward",
    "leaky_relu_backward",
    "elu_backward",
    "softplus_backward",
    "log_sigmoid_backward",
    "hardtanh_backward",
    "hardswish_backward",
    "hardsigmoid_backward",
    "glu_backward",
    "hardshrink_backward",
    "softshrink_backward",
    "_prelu_kernel_backward",
    "infinitely_differentiable_silu_backward",
    "infinitely_differentiable_native_dropout_backward",
]


def threshold_backward(
    grad_output: np.ndarray, self: np.ndarray, threshold: Any
) -> np.ndarray:
    if (
        grad_output.__class__ is self.__class__ is np.ndarray
        and grad_output.dtype == self.dtype
        and self.dtype.kind == "f"
    ):
        # One floating dtype (relu's and threshold's backward): the kernel itself.
        return _threshold_backward(grad_output, self, threshold)
    common = result_dtype(grad_output, self)
    return in_dtype(
        _threshold_backward(
            promoted(grad_output, common), promoted(self, common), threshold
        ),
        common,
    )


def _softmax_backward_data(
    grad_output: np.ndarray, output: np.ndarray, dim: int, input_dtype: Any
) -> np.ndarray:
    return as_array(
        softmax_backward_data(as_array(grad_output), as_array(output), dim, False)
    )


def _log_softmax_backward_data(
    grad_output: np.ndarray, output: np.ndarray, dim: int, input_dtype: Any
) -> np.ndarray:
    return as_array(
        softmax_backward_data(as_array(grad_output), as_array(output), dim, True)
    )


# The activations' backward operators promote (grad_output, the saved tensor) to their
# common dtype and run their kernel there, as their generated kernels do.


def gelu_backward(
    grad_output: np.ndarray, self: np.ndarray, approximate: str = "none"
) -> np.ndarray:
    common = result_dtype(grad_output, self)
    return in_dtype(
        _gelu_backward(
            promoted(grad_output, common), promoted(self, common), approximate
        ),
        common,
    )


def silu_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    common = result_dtype(grad_output, self)
    return in_dtype(
        _silu_backward(promoted(grad_output, common), promoted(self, common)), common
    )


def leaky_relu_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    negative_slope: Any,
    self_is_result: bool,
) -> np.ndarray:
    common = result_dtype(grad_output, self)
    return in_dtype(
        _leaky_relu_backward(
            promoted(grad_output, common),
            promoted(self, common),
            negative_slope,
            self_is_result,
        ),
        common,
    )


def elu_backward(
    grad_output: np.ndarray,
    alpha: Any,
    scale: Any,
    input_scale: Any,
    is_result: bool,
    self_or_result: np.ndarray,
) -> np.ndarray:
    common = result_dtype(grad_output, self_or_result)
    return in_dtype(
        _elu_backward(
            promoted(grad_output, common),
            alpha,
            scale,
            input_scale,
            is_result,
            promoted(self_or_result, common),
        ),
        common,
    )


def softplus_backward(
    grad_output: np.ndarray, self: np.ndarray, beta: Any, threshold: Any
) -> np.ndarray:
    common = result_dtype(grad_output, self)
    return in_dtype(
        _softplus_backward(
            promoted(grad_output, common), promoted(self, common), beta, threshold
        ),
        common,
    )


def log_sigmoid_backward(
    grad_output: np.ndarray, self: np.ndarray, buffer: np.ndarray
) -> np.ndarray:
    common = result_dtype(grad_output, self)
    return in_dtype(
        _log_sigmoid_backward(
            promoted(grad_output, common), promoted(self, common), as_array(buffer)
        ),
        common,
    )


def hardtanh_backward(
    grad_output: np.ndarray, self: np.ndarray, min_val: Any, max_val: Any
) -> np.ndarray:
    common = result_dtype(grad_output, self)
    return in_dtype(
        _hardtanh_backward(
            promoted(grad_output, common), promoted(self, common), min_val, max_val
        ),
        common,
    )


def _promoted_pair(kernel: Any, grad_output: Any, self: Any, *rest: Any) -> np.ndarray:
    """A backward kernel over (grad_output, self) in their common dtype."""
    common = result_dtype(grad_output, self)
    return in_dtype(
        kernel(promoted(grad_output, common), promoted(self, common), *rest), common
    )


def hardswish_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    return _promoted_pair(_hardswish_backward, grad_output, self)


def hardsigmoid_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    return _promoted_pair(_hardsigmoid_backward, grad_output, self)


def glu_backward(grad_output: np.ndarray, self: np.ndarray, dim: int) -> np.ndarray:
    return _promoted_pair(_glu_backward, grad_output, self, dim)


def hardshrink_backward(
    grad_out: np.ndarray, self: np.ndarray, lambd: Any
) -> np.ndarray:
    return _promoted_pair(_hardshrink_backward, grad_out, self, lambd)


def softshrink_backward(
    grad_output: np.ndarray, self: np.ndarray, lambd: Any
) -> np.ndarray:
    return _promoted_pair(_softshrink_backward, grad_output, self, lambd)


def _prelu_kernel_backward(
    grad_output: np.ndarray, self: np.ndarray, weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    grad_self, grad_weight = _prelu_kernel_backward_kernel(
        as_array(grad_output), as_array(self), as_array(weight)
    )
    return kernel_result(grad_self), kernel_result(grad_weight)


def infinitely_differentiable_silu_backward(
    grad_output: np.ndarray, input: np.ndarray  # noqa: A002  (PyTorch's name)
) -> np.ndarray:
    """grad_output * s * (1 + input * (1 - s)), s = sigmoid(input): the tensor
    helper's operations in its order."""
    s = sigmoid(input)
    return mul(mul(grad_output, s), add(1.0, mul(input, sub(1.0, s))))


def infinitely_differentiable_native_dropout_backward(
    grad: np.ndarray, mask: np.ndarray, scale: float
) -> np.ndarray:
    return mul(grad, mul(to(mask, _FROM_NUMPY[grad.dtype]), scale))
