"""Normalization kernels: layer norm and its backward."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import _check_floating

__all__ = ["native_layer_norm", "native_layer_norm_backward"]


def _layer_norm_axis(
    input: np.ndarray,
    normalized_shape: Sequence[int],
    weight: np.ndarray | None,
    bias: np.ndarray | None,
) -> int:
    """PyTorch's checks of layer_norm's arguments; the first normalized dimension."""
    normalized = list(normalized_shape)
    if not normalized:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            f"least one element, but got normalized_shape = {normalized}"
        )
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and list(parameter.shape) != normalized:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got "
                f"{name} of shape {list(parameter.shape)} and normalized_shape = "
                f"{normalized}"
            )
    axis = input.ndim - len(normalized)
    if axis < 0 or list(input.shape[axis:]) != normalized:
        expected = ", ".join(["*"] + [str(n) for n in normalized])
        raise RuntimeError(
            f"Given normalized_shape={normalized}, expected input with shape [{expected}], "
            f"but got input of size{list(input.shape)}"
        )
    _check_floating("LayerNormKernelImpl", input)
    parameters = [p for p in (weight, bias) if p is not None]
    if any(p.dtype != input.dtype for p in parameters):
        if input.dtype == np.float32:
            raise RuntimeError(
                "mixed dtype (CPU): expect parameter to have scalar type of Float"
            )
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return axis


def native_layer_norm(
    input: np.ndarray,
    normalized_shape: Sequence[int],
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, mean, rstd): each row over the normalized (last) dimensions minus its mean,
    times rstd = 1 / sqrt(biased variance + eps), then times weight plus bias. mean and
    rstd keep the normalized dimensions with size 1."""
    axis = _layer_norm_axis(input, normalized_shape, weight, bias)
    dims = tuple(range(axis, input.ndim))
    stats_shape = input.shape[:axis] + (1,) * len(dims)
    x = input.astype(np.float64)
    if 0 in input.shape[axis:]:  # rows of no elements: mean 0, variance 0 / 0
        mean = np.zeros(stats_shape)
        variance = np.full(stats_shape, np.nan)
    else:
        mean = x.mean(axis=dims, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=dims, keepdims=True)
    rstd = 1.0 / np.sqrt(variance + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    dtype = input.dtype
    return out.astype(dtype), mean.astype(dtype), rstd.astype(dtype)


def native_layer_norm_backward(
    grad_out: np.ndarray,
    input: np.ndarray,
    normalized_shape: Sequence[int],
    mean: np.ndarray,
    rstd: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grad_input, grad_weight, grad_bias) of native_layer_norm. With x_hat = (x - mean)
    * rstd and g = grad_out * weight, per row: grad_input = rstd * (g - mean(g) - x_hat *
    mean(g * x_hat)); grad_weight = sum over rows of grad_out * x_hat; grad_bias = sum
    over rows of grad_out. An output output_mask leaves out is zeros (PyTorch's is
    undefined)."""
    axis = _layer_norm_axis(input, normalized_shape, weight, None)
    dims = tuple(range(axis, input.ndim))
    rows = tuple(range(axis))
    dtype = np.result_type(grad_out, input)
    parameter_shape = tuple(normalized_shape)
    x_hat = (input - mean) * rstd
    if output_mask[0]:
        g = grad_out if weight is None else grad_out * weight
        if input.size:
            grad_input = rstd * (
                g
                - g.mean(axis=dims, keepdims=True)
                - x_hat * (g * x_hat).mean(axis=dims, keepdims=True)
            )
        else:
            grad_input = np.zeros(input.shape)
    else:
        grad_input = np.zeros(input.shape)
    grad_weight = (
        np.sum(grad_out * x_hat, axis=rows).reshape(parameter_shape)
        if output_mask[1]
        else np.zeros(parameter_shape)
    )
    grad_bias = (
        np.sum(np.broadcast_to(grad_out, input.shape), axis=rows).reshape(
            parameter_shape
        )
        if output_mask[2]
        else np.zeros(parameter_shape)
    )
    return (
        np.asarray(grad_input).astype(dtype),
        np.asarray(grad_weight).astype(dtype),
        np.asarray(grad_bias).astype(dtype),
    )
