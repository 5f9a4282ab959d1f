"""Array twins of the normalization backward operators (the numpy kernels of
native_functions.yaml, called as their dispatcher calls them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...numpy_kernels import (
    native_batch_norm_backward as _native_batch_norm_backward,
    native_layer_norm_backward as _native_layer_norm_backward,
)
from ._common import as_array, kernel_result, optional_array

__all__ = [
    "native_batch_norm_backward",
    "native_layer_norm_backward",
    "batch_norm_backward",
]


def native_batch_norm_backward(
    grad_out: np.ndarray,
    input: np.ndarray,  # noqa: A002  (PyTorch's name)
    weight: np.ndarray | None,
    running_mean: np.ndarray | None,
    running_var: np.ndarray | None,
    save_mean: np.ndarray | None,
    save_invstd: np.ndarray | None,
    train: bool,
    eps: float,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    results = _native_batch_norm_backward(
        as_array(grad_out),
        as_array(input),
        optional_array(weight),
        optional_array(running_mean),
        optional_array(running_var),
        optional_array(save_mean),
        optional_array(save_invstd),
        train,
        eps,
        output_mask,
    )
    return (
        kernel_result(results[0]),
        kernel_result(results[1]),
        kernel_result(results[2]),
    )


def batch_norm_backward(
    grad_out: np.ndarray,
    input: np.ndarray,  # noqa: A002  (PyTorch's name)
    weight: np.ndarray,
    running_mean: np.ndarray | None,
    running_var: np.ndarray | None,
    save_mean: np.ndarray | None,
    save_var: np.ndarray | None,
    update: bool,
    eps: float,
    output_mask: Sequence[bool],
    reserve: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return native_batch_norm_backward(
        grad_out,
        input,
        weight,
        running_mean,
        running_var,
        save_mean,
        save_var,
        update,
        eps,
        output_mask,
    )


def native_layer_norm_backward(
    grad_out: np.ndarray,
    input: np.ndarray,  # noqa: A002  (PyTorch's name)
    normalized_shape: Sequence[int],
    mean: np.ndarray,
    rstd: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    results = _native_layer_norm_backward(
        as_array(grad_out),
        as_array(input),
        normalized_shape,
        as_array(mean),
        as_array(rstd),
        optional_array(weight),
        optional_array(bias),
        output_mask,
    )
    return (
        kernel_result(results[0]),
        kernel_result(results[1]),
        kernel_result(results[2]),
    )
