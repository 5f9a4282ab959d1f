"""Array twins of the loss backward operators."""

from __future__ import annotations

import numpy as np

from ...numpy_kernels import (
    binary_cross_entropy_backward as _binary_cross_entropy_backward,
    huber_loss_backward as _huber_loss_backward,
    mse_loss_backward as _mse_loss_backward,
    nll_loss2d_backward as _nll_loss2d_backward,
    nll_loss_backward as _nll_loss_backward,
    smooth_l1_loss_backward as _smooth_l1_loss_backward,
)
from ._common import (
    as_array,
    in_dtype,
    kernel_result,
    optional_array,
    promoted,
    result_dtype,
)

__all__ = [
    "mse_loss_backward",
    "nll_loss_backward",
    "nll_loss2d_backward",
    "binary_cross_entropy_backward",
    "smooth_l1_loss_backward",
    "huber_loss_backward",
]


def mse_loss_backward(
    grad_output: np.ndarray, self: np.ndarray, target: np.ndarray, reduction: int
) -> np.ndarray:
    common = result_dtype(grad_output, self, target)
    return in_dtype(
        _mse_loss_backward(
            promoted(grad_output, common),
            promoted(self, common),
            promoted(target, common),
            reduction,
        ),
        common,
    )


def nll_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
) -> np.ndarray:
    return kernel_result(
        _nll_loss_backward(
            as_array(grad_output),
            as_array(self),
            as_array(target),
            optional_array(weight),
            reduction,
            ignore_index,
            as_array(total_weight),
        )
    )


def nll_loss2d_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
) -> np.ndarray:
    return kernel_result(
        _nll_loss2d_backward(
            as_array(grad_output),
            as_array(self),
            as_array(target),
            optional_array(weight),
            reduction,
            ignore_index,
            as_array(total_weight),
        )
    )


def binary_cross_entropy_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None = None,
    reduction: int = 1,
) -> np.ndarray:
    return kernel_result(
        _binary_cross_entropy_backward(
            as_array(grad_output),
            as_array(self),
            as_array(target),
            optional_array(weight),
            reduction,
        )
    )


def smooth_l1_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    reduction: int,
    beta: float,
) -> np.ndarray:
    common = result_dtype(grad_output, self, target)
    return in_dtype(
        _smooth_l1_loss_backward(
            promoted(grad_output, common),
            promoted(self, common),
            promoted(target, common),
            reduction,
            beta,
        ),
        common,
    )


def huber_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    reduction: int,
    delta: float,
) -> np.ndarray:
    return kernel_result(
        _huber_loss_backward(
            as_array(grad_output), as_array(self), as_array(target), reduction, delta
        )
    )
