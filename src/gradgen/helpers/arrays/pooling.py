"""Array twins of the pooling and padding backward operators (the numpy kernels of
native_functions.yaml, called as their dispatcher calls them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...numpy_kernels import (
    adaptive_avg_pool_backward,
    avg_pool_backward,
    border_pad_backward,
    max_pool_with_indices_backward,
)
from ._common import as_array, kernel_result

__all__ = [
    "max_pool2d_with_indices_backward",
    "max_pool3d_with_indices_backward",
    "avg_pool2d_backward",
    "avg_pool3d_backward",
    "_adaptive_avg_pool2d_backward",
    "_adaptive_avg_pool3d_backward",
    "adaptive_max_pool2d_backward",
    "adaptive_max_pool3d_backward",
    "reflection_pad1d_backward",
    "reflection_pad2d_backward",
    "reflection_pad3d_backward",
    "replication_pad1d_backward",
    "replication_pad2d_backward",
    "replication_pad3d_backward",
]


def max_pool2d_with_indices_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    indices: np.ndarray,
) -> np.ndarray:
    return kernel_result(
        max_pool_with_indices_backward(
            as_array(grad_output), as_array(self), as_array(indices), 2
        )
    )


def max_pool3d_with_indices_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    indices: np.ndarray,
) -> np.ndarray:
    return kernel_result(
        max_pool_with_indices_backward(
            as_array(grad_output), as_array(self), as_array(indices), 3
        )
    )


def _avg_pool_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    dims: int,
) -> np.ndarray:
    return kernel_result(
        avg_pool_backward(
            as_array(grad_output),
            as_array(self),
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
            dims,
        )
    )


def avg_pool2d_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> np.ndarray:
    return _avg_pool_backward(
        grad_output,
        self,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        2,
    )


def avg_pool3d_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> np.ndarray:
    return _avg_pool_backward(
        grad_output,
        self,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        3,
    )


def _adaptive_avg_pool2d_backward(
    grad_output: np.ndarray, self: np.ndarray
) -> np.ndarray:
    return kernel_result(
        adaptive_avg_pool_backward(as_array(grad_output), as_array(self), 2)
    )


def _adaptive_avg_pool3d_backward(
    grad_output: np.ndarray, self: np.ndarray
) -> np.ndarray:
    return kernel_result(
        adaptive_avg_pool_backward(as_array(grad_output), as_array(self), 3)
    )


def adaptive_max_pool2d_backward(
    grad_output: np.ndarray, self: np.ndarray, indices: np.ndarray
) -> np.ndarray:
    return kernel_result(
        max_pool_with_indices_backward(
            as_array(grad_output), as_array(self), as_array(indices), 2
        )
    )


def adaptive_max_pool3d_backward(
    grad_output: np.ndarray, self: np.ndarray, indices: np.ndarray
) -> np.ndarray:
    return kernel_result(
        max_pool_with_indices_backward(
            as_array(grad_output), as_array(self), as_array(indices), 3
        )
    )


def _pad_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    padding: Sequence[int],
    dims: int,
    mode: str,
) -> np.ndarray:
    return kernel_result(
        border_pad_backward(as_array(grad_output), as_array(self), padding, dims, mode)
    )


def reflection_pad1d_backward(
    grad_output: np.ndarray, self: np.ndarray, padding: Sequence[int]
) -> np.ndarray:
    return _pad_backward(grad_output, self, padding, 1, "reflect")


def reflection_pad2d_backward(
    grad_output: np.ndarray, self: np.ndarray, padding: Sequence[int]
) -> np.ndarray:
    return _pad_backward(grad_output, self, padding, 2, "reflect")


def reflection_pad3d_backward(
    grad_output: np.ndarray, self: np.ndarray, padding: Sequence[int]
) -> np.ndarray:
    return _pad_backward(grad_output, self, padding, 3, "reflect")


def replication_pad1d_backward(
    grad_output: np.ndarray, self: np.ndarray, padding: Sequence[int]
) -> np.ndarray:
    return _pad_backward(grad_output, self, padding, 1, "replicate")


def replication_pad2d_backward(
    grad_output: np.ndarray, self: np.ndarray, padding: Sequence[int]
) -> np.ndarray:
    return _pad_backward(grad_output, self, padding, 2, "replicate")


def replication_pad3d_backward(
    grad_output: np.ndarray, self: np.ndarray, padding: Sequence[int]
) -> np.ndarray:
    return _pad_backward(grad_output, self, padding, 3, "replicate")
