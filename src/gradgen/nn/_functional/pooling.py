"""torch.nn.functional's pooling: max_pool1d/2d/3d (return_indices), avg_pool1d/2d/3d,
adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d, with PyTorch's signatures,
calling gradgen's pooling operators. A stride of None means the kernel size (the
operators' empty stride); None in a 2-d/3-d adaptive output size keeps the input's
size in that dimension."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
