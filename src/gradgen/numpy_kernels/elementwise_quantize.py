"""Kernels of the elementwise family's fake quantization (quantization-aware training):
values rounded to a quantized grid and back, with the mask of those inside the range,
per tensor or per channel along an axis, as PyTorch's CPU kernels compute them."""

from __future__ import annotations

import numpy as np

from ..dtypes import scalar_type_name
from ._common import _wrap_dim

__all__ = [
    "fake_quantize_per_tensor_cachemask",
    "fake_quantize_per_channel_cachemask",
    "fake_quantize_cachemask_backward",
]


def _check_range(quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError(
            "`quant_min` should be less than or         equal to `quant_max`."
        )


def _check_zero_points(zero_point: np.ndarray, quant_min: int, quant_max: int) -> None:
    if ((zero_point < quant_min) | (zero_point > quant_max)).any():
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")


def _check_floating(self: np.ndarray, kernel: str) -> None:
    if self.dtype.kind != "f":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{scalar_type_name(self)}'"
        )


def _quantize(
    self: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray,
    quant_min: int,
    quant_max: int,
    integer_zero_point: bool = True,
    single_precision_output: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(fake quantized values, mask): the scale is single precision, its inverse too,
    as PyTorch's kernels take them."""
    scale = np.asarray(scale, dtype=np.float32)
    inverse = (np.float32(1.0) / scale).astype(self.dtype)
    if integer_zero_point:
        quantized = np.rint(self * inverse) + zero_point
    else:
        quantized = np.rint(self * inverse + zero_point)
    mask = (quantized >= quant_min) & (quantized <= quant_max)
    clamped = np.clip(quantized, quant_min, quant_max)
    steps = clamped - zero_point
    if single_precision_output:  # PyTorch's per-tensor kernel: a float times a float
        return (steps.astype(np.float32) * scale).astype(self.dtype), mask
    return (steps * scale.astype(self.dtype)).astype(self.dtype), mask


def fake_quantize_per_tensor_cachemask(
    self: np.ndarray, scale: float, zero_point: int, quant_min: int, quant_max: int
) -> tuple[np.ndarray, np.ndarray]:
    """One scale and zero point for the whole tensor."""
    _check_range(quant_min, quant_max)
    _check_zero_points(np.asarray(zero_point), quant_min, quant_max)
    _check_floating(self, "fake_quantize_tensor_cachemask_kernel_type_handling")
    return _quantize(
        self,
        np.asarray(scale),
        np.asarray(zero_point),
        quant_min,
        quant_max,
        True,
        True,
    )


def fake_quantize_per_channel_cachemask(
    self: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray,
    axis: int,
    quant_min: int,
    quant_max: int,
) -> tuple[np.ndarray, np.ndarray]:
    """A scale and zero point for each index along `axis`."""
    if zero_point.dtype not in (np.int32, np.float32, np.float16):
        raise RuntimeError(
            "Zero-point must be Int32, Float or Half, found "
            f"{scalar_type_name(zero_point)}"
        )
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.shape != zero_point.shape:
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    axis = _wrap_dim(axis, self.ndim)
    if scale.shape[0] != self.shape[axis]:
        raise RuntimeError(
            "dimensions of scale and zero-point are not consistent with input tensor"
        )
    _check_range(quant_min, quant_max)
    _check_zero_points(zero_point, quant_min, quant_max)
    _check_floating(self, "fake_quantize_channel_cachemask_kernel_type_handling")
    shape = [1] * self.ndim
    shape[axis] = -1
    integer = zero_point.dtype == np.int32
    zero_points = zero_point.astype(np.int64 if integer else np.float32).reshape(shape)
    return _quantize(
        self, scale.reshape(shape), zero_points, quant_min, quant_max, integer
    )


def fake_quantize_cachemask_backward(grad: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The straight-through gradient: grad where the value was in range, else 0."""
    if grad.shape != mask.shape:
        raise RuntimeError("Gradient shape and the fake-quantize mask shape must match")
    return grad * mask
