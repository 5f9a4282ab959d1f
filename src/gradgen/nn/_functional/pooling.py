"""torch.nn.functional's pooling: max_pool1d/2d/3d (return_indices), avg_pool1d/2d/3d,
adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d, with PyTorch's signatures,
calling gradgen's pooling operators; lp_pool1d/2d/3d and max_unpool1d/2d/3d written
with operators, as PyTorch composes them. A stride of None means the kernel size (the
operators' empty stride); None in a 2-d/3-d adaptive output size keeps the input's
size in that dimension."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradgen.dtypes import int64, spelling
from gradgen.factories import zeros
from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]

IntOrInts = int | Sequence[int]


def _stride(stride: IntOrInts | None) -> IntOrInts:
    """The operators' spelling of "the kernel size": an empty list."""
    return [] if stride is None else stride


def max_pool1d(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The largest value of each 1-d window (and, with return_indices=True, its flat
    index in the input's spatial row)."""
    arguments = (kernel_size, _stride(stride), padding, dilation, ceil_mode)
    if return_indices:
        return ops.max_pool1d_with_indices(input, *arguments)
    return ops.max_pool1d(input, *arguments)


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """max_pool1d(..., return_indices=True): (values, indices)."""
    return ops.max_pool1d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool2d(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The largest value of each 2-d window (and, with return_indices=True, its flat
    index in the input's spatial plane)."""
    arguments = (kernel_size, _stride(stride), padding, dilation, ceil_mode)
    if return_indices:
        return ops.max_pool2d_with_indices(input, *arguments)
    return ops.max_pool2d(input, *arguments)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """max_pool2d(..., return_indices=True): (values, indices)."""
    return ops.max_pool2d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool3d(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The largest value of each 3-d window (and, with return_indices=True, its flat
    index in the input's spatial volume)."""
    arguments = (kernel_size, _stride(stride), padding, dilation, ceil_mode)
    if return_indices:
        return ops.max_pool3d_with_indices(input, *arguments)
    return ops.max_pool3d(input, *arguments)


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    dilation: IntOrInts = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """max_pool3d(..., return_indices=True): (values, indices)."""
    return ops.max_pool3d_with_indices(
        input, kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def avg_pool1d(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """The mean of each 1-d window."""
    return ops.avg_pool1d(
        input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad
    )


def avg_pool2d(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each 2-d window (the sum divided by divisor_override if given)."""
    return ops.avg_pool2d(
        input,
        kernel_size,
        _stride(stride),
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def avg_pool3d(
    input: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each 3-d window (the sum divided by divisor_override if given)."""
    return ops.avg_pool3d(
        input,
        kernel_size,
        _stride(stride),
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def _list_with_default(
    output_size: int | Sequence[int | None], defaults: Sequence[int]
) -> int | list[int]:
    """`output_size` with each None replaced by the input's size in that dimension."""
    if isinstance(output_size, int):
        return output_size
    if len(defaults) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    tail = defaults[-len(output_size) :]
    return [d if v is None else v for v, d in zip(output_size, tail)]


def adaptive_avg_pool1d(input: Tensor, output_size: IntOrInts) -> Tensor:
    """The mean over each of output_size windows spread evenly over the last
    dimension."""
    return ops.adaptive_avg_pool1d(input, output_size)


def adaptive_avg_pool2d(
    input: Tensor, output_size: int | Sequence[int | None]
) -> Tensor:
    """The mean over an output_size grid of windows spread evenly over the last two
    dimensions."""
    return ops.adaptive_avg_pool2d(
        input, _list_with_default(output_size, tuple(input.shape))
    )


def adaptive_avg_pool3d(
    input: Tensor, output_size: int | Sequence[int | None]
) -> Tensor:
    """The mean over an output_size grid of windows spread evenly over the last three
    dimensions."""
    return ops.adaptive_avg_pool3d(
        input, _list_with_default(output_size, tuple(input.shape))
    )


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: IntOrInts, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool1d(..., return_indices=True)."""
    return ops.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: int | Sequence[int | None], return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool2d(..., return_indices=True)."""
    size = _list_with_default(output_size, tuple(input.shape))
    return ops.adaptive_max_pool2d(input, size)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: int | Sequence[int | None], return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool3d(..., return_indices=True)."""
    size = _list_with_default(output_size, tuple(input.shape))
    return ops.adaptive_max_pool3d(input, size)


def adaptive_max_pool1d(
    input: Tensor, output_size: IntOrInts, return_indices: bool = False
) -> Any:
    """The largest value of each of output_size windows spread evenly over the last
    dimension (and its index when return_indices=True)."""
    result = adaptive_max_pool1d_with_indices(input, output_size)
    return result if return_indices else result[0]


def adaptive_max_pool2d(
    input: Tensor, output_size: int | Sequence[int | None], return_indices: bool = False
) -> Any:
    """The largest value of each window of an output_size grid over the last two
    dimensions (and its flat index in the plane when return_indices=True)."""
    result = adaptive_max_pool2d_with_indices(input, output_size)
    return result if return_indices else result[0]


def adaptive_max_pool3d(
    input: Tensor, output_size: int | Sequence[int | None], return_indices: bool = False
) -> Any:
    """The largest value of each window of an output_size grid over the last three
    dimensions (and its flat index in the volume when return_indices=True)."""
    result = adaptive_max_pool3d_with_indices(input, output_size)
    return result if return_indices else result[0]


# -- power-average and unpooling (PyTorch's compositions) -----------------------------


def _lp_pool(
    average: Any,
    dims: int,
    input: Tensor,
    norm_type: float,
    kernel_size: IntOrInts,
    stride: IntOrInts | None,
    ceil_mode: bool,
) -> Tensor:
    """(sum over each window of x^p)^(1/p): the window mean of x^p times the window
    size; a negative mean (odd p) is clamped to zero, as PyTorch's."""
    kernel = _as_tuple(kernel_size, dims)
    out = average(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    clamped = ops.sign(out) * ops.relu(ops.abs(out))
    return clamped.mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: int,
    stride: IntOrInts | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The p-norm of each 1-d window."""
    return _lp_pool(avg_pool1d, 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The p-norm of each 2-d window."""
    return _lp_pool(avg_pool2d, 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor,
    norm_type: float,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The p-norm of each 3-d window."""
    return _lp_pool(avg_pool3d, 3, input, norm_type, kernel_size, stride, ceil_mode)


def _as_tuple(value: IntOrInts, dims: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, Sequence) else (value,) * dims


def _unpool_output_size(
    input: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_size: Sequence[int] | None,
) -> list[int]:
    """The spatial size of max_unpool's output: max_pool's input size by default, or
    output_size (checked to be one that pooling maps to the input's size)."""
    spatial = tuple(input.shape[-len(kernel) :])
    default = [
        (size - 1) * s + k - 2 * p
        for size, k, s, p in zip(spatial, kernel, stride, padding)
    ]
    if output_size is None:
        return default
    if len(output_size) == len(kernel) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel):
        raise ValueError(
            f"output_size should be a sequence containing {len(kernel)} or "
            f"{len(kernel) + 2} elements, but it has a length of '{len(output_size)}'"
        )
    for d, (size, s) in enumerate(zip(default, stride)):
        if not size - s < output_size[d] < size + s:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between '
                f"{size - s} and {size + s})"
            )
    return list(output_size)


def _check_unpool_indices(input: Tensor, indices: Tensor, sizes: list[int]) -> None:
    if indices.dtype != int64:
        raise RuntimeError(
            f"elements in indices should be type int64 but got: {spelling(indices.dtype).scalar_type}"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: "
            f"{list(indices.shape)}"
        )
    volume = math.prod(sizes)
    invalid = np.flatnonzero((indices._data < 0) | (indices._data >= volume))
    if invalid.size:
        first = int(indices._data.reshape(-1)[invalid[0]])
        shape = "x".join(
            str(size) for size in (sizes + [1] if len(sizes) == 1 else sizes)
        )
        raise RuntimeError(
            f"Found an invalid max index: {first} (output volumes are of size {shape})"
        )


def _max_unpool(
    dims: int,
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None,
    padding: IntOrInts,
    output_size: Sequence[int] | None,
) -> Tensor:
    """Each value written at its flat index (max_pool's return_indices) in a zero
    output of max_pool's input size; the gradient gathers from those places."""
    kernel = _as_tuple(kernel_size, dims)
    steps = kernel if stride is None else _as_tuple(stride, dims)
    sizes = _unpool_output_size(
        input, kernel, steps, _as_tuple(padding, dims), output_size
    )
    _check_unpool_indices(input, indices, sizes)
    batch = tuple(input.shape[:-dims])
    flat_input = input.reshape(*batch, -1)
    flat_indices = indices.reshape(*batch, -1)
    output = zeros(*batch, math.prod(sizes), dtype=input.dtype)
    return ops.scatter(output, -1, flat_indices, flat_input).reshape(*batch, *sizes)


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The inverse of max_pool1d: each value put back where max_pool1d found it,
    zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The inverse of max_pool2d: each value put back where max_pool2d found it,
    zeros elsewhere."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrInts,
    stride: IntOrInts | None = None,
    padding: IntOrInts = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The inverse of max_pool3d: each value put back where max_pool3d found it,
    zeros elsewhere."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
