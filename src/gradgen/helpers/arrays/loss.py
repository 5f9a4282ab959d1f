"""Array twins of the loss backward operators."""

from __future__ import annotations

import numpy as np

from ...numpy_kernels import mse_loss_backward as _mse_loss_backward
from ._common import in_dtype, promoted, result_dtype

__all__ = ["mse_loss_backward"]


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
