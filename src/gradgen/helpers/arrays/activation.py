"""Array twins of the activation backward operators."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...numpy_kernels import (
    softmax_backward_data,
    threshold_backward as _threshold_backward,
)
from ._common import as_array, in_dtype, promoted, result_dtype

__all__ = ["threshold_backward", "_softmax_backward_data", "_log_softmax_backward_data"]


def threshold_backward(
    grad_output: np.ndarray, self: np.ndarray, threshold: Any
) -> np.ndarray:
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
