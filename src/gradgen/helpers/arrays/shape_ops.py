"""Array twins of the shape-building operators a backward formula calls (flip, roll,
pads, select/slice backward, shuffles, im2col/col2im): each its numpy kernel, called
as the dispatcher calls it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...numpy_kernels import (
    channel_shuffle as _channel_shuffle,
    col2im as _col2im,
    constant_pad_nd as _constant_pad_nd,
    diagonal as _diagonal,
    flip as _flip,
    im2col as _im2col,
    pixel_shuffle as _pixel_shuffle,
    pixel_unshuffle as _pixel_unshuffle,
    repeat as _repeat,
    roll as _roll,
    rot90 as _rot90,
    select_backward as _select_backward,
    slice_backward as _slice_backward,
    tril as _tril,
    triu as _triu,
)
from ._common import as_array, kernel_result

__all__ = [
    "flip",
    "roll",
    "rot90",
    "repeat",
    "constant_pad_nd",
    "diagonal",
    "tril",
    "triu",
    "select_backward",
    "slice_backward",
    "slice_backward_wrapper",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "im2col",
    "col2im",
]


def flip(self: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    return kernel_result(_flip(as_array(self), dims))


def roll(
    self: np.ndarray, shifts: Sequence[int], dims: Sequence[int] = ()
) -> np.ndarray:
    return kernel_result(_roll(as_array(self), shifts, dims))


def rot90(self: np.ndarray, k: int = 1, dims: Sequence[int] = (0, 1)) -> np.ndarray:
    return kernel_result(_rot90(as_array(self), k, dims))


def repeat(self: np.ndarray, repeats: Sequence[int]) -> np.ndarray:
    return kernel_result(_repeat(as_array(self), repeats))


def constant_pad_nd(self: np.ndarray, pad: Sequence[int], value: Any = 0) -> np.ndarray:
    return kernel_result(_constant_pad_nd(as_array(self), pad, value))


def diagonal(
    self: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> np.ndarray:
    return kernel_result(_diagonal(as_array(self), offset, dim1, dim2))


def tril(self: np.ndarray, diagonal: int = 0) -> np.ndarray:
    return kernel_result(_tril(as_array(self), diagonal))


def triu(self: np.ndarray, diagonal: int = 0) -> np.ndarray:
    return kernel_result(_triu(as_array(self), diagonal))


def select_backward(
    grad_output: np.ndarray, input_sizes: Sequence[int], dim: int, index: int
) -> np.ndarray:
    return kernel_result(
        _select_backward(as_array(grad_output), input_sizes, dim, index)
    )


def slice_backward(
    grad_output: np.ndarray,
    input_sizes: Sequence[int],
    dim: int,
    start: int,
    end: int,
    step: int,
) -> np.ndarray:
    return kernel_result(
        _slice_backward(as_array(grad_output), input_sizes, dim, start, end, step)
    )


def slice_backward_wrapper(
    grad: np.ndarray,
    input_sizes: Sequence[int],
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> np.ndarray:
    """slice_backward with None bounds filled in (the tensor helper's)."""
    return slice_backward(
        grad,
        input_sizes,
        dim,
        0 if start is None else start,
        end if end is not None else 2**63 - 1,
        step,
    )


def pixel_shuffle(self: np.ndarray, upscale_factor: int) -> np.ndarray:
    return kernel_result(_pixel_shuffle(as_array(self), upscale_factor))


def pixel_unshuffle(self: np.ndarray, downscale_factor: int) -> np.ndarray:
    return kernel_result(_pixel_unshuffle(as_array(self), downscale_factor))


def channel_shuffle(self: np.ndarray, groups: int) -> np.ndarray:
    return kernel_result(_channel_shuffle(as_array(self), groups))


def im2col(
    self: np.ndarray,
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> np.ndarray:
    return kernel_result(
        _im2col(as_array(self), kernel_size, dilation, padding, stride)
    )


def col2im(
    self: np.ndarray,
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> np.ndarray:
    return kernel_result(
        _col2im(as_array(self), output_size, kernel_size, dilation, padding, stride)
    )
