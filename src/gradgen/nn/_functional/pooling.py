"""torch.nn.functional's pooling: max_pool1d/2d/3d (return_indices), avg_pool1d/2d/3d,
adaptive_avg_pool1d/2d/3d and adaptive_max_pool1d/2d/3d, with PyTorch's signatures,
calling gradgen's pooling operators; lp_pool1d/2d/3d written with operators, as
PyTorch composes them; max_unpool1d/2d/3d and fractional_max_pool2d/3d over PyTorch's
operators. A stride of None means the kernel size (the
operators' empty stride); None in a 2-d/3-d adaptive output size keeps the input's
size in that dimension."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


from gradgen.random import rand
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
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
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
    output of max_pool's input size: PyTorch's max_unpool2d (1d: over a width of one)
    and max_unpool3d, whose gradient gathers from those places."""
    kernel = _as_tuple(kernel_size, dims)
    steps = kernel if stride is None else _as_tuple(stride, dims)
    pads = _as_tuple(padding, dims)
    sizes = _unpool_output_size(input, kernel, steps, pads, output_size)
    if dims == 1:
        return ops.max_unpool2d(
            input.unsqueeze(-1), indices.unsqueeze(-1), sizes + [1]
        ).squeeze(-1)
    if dims == 2:
        return ops.max_unpool2d(input, indices, sizes)
    return ops.max_unpool3d(input, indices, sizes, list(steps), list(pads))


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


def _fractional(
    dims: int,
    input: Tensor,
    kernel_size: IntOrInts,
    output_size: IntOrInts | None,
    output_ratio: float | Sequence[float] | None,
    random_samples: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """PyTorch's fractional_max_pool{dims}d with the output size from output_ratio
    when not given, and one sample per plane and dimension from gradgen's generator
    (gradgen.rand) when random_samples is None."""
    name = f"fractional_max_pool{dims}d"
    if output_size is None and output_ratio is None:
        raise ValueError(
            f"{name} requires specifying either an output_size or an output_ratio"
        )
    if output_size is None:
        assert output_ratio is not None
        ratio = _as_tuple(output_ratio, dims)  # type: ignore[arg-type]
        if len(ratio) > dims:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of "
                "Ints."
            )
        spatial = input.shape[-dims:]
        output_size = [int(size * r) for size, r in zip(spatial, ratio)]
    if random_samples is None:
        batch = 1 if input.dim() == dims + 1 else input.shape[0]
        random_samples = rand(batch, input.shape[-dims - 1], dims, dtype=input.dtype)
    operator = ops.fractional_max_pool2d if dims == 2 else ops.fractional_max_pool3d
    kernel = list(_as_tuple(kernel_size, dims))
    sizes = list(_as_tuple(output_size, dims))
    return operator(input, kernel, sizes, random_samples)


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: IntOrInts,
    output_size: IntOrInts | None = None,
    output_ratio: float | Sequence[float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """The maxima of pseudo-random windows of kernel_size (Graham's fractional max
    pooling), and their flat indices in each plane."""
    return _fractional(
        2, input, kernel_size, output_size, output_ratio, _random_samples
    )


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: IntOrInts,
    output_size: IntOrInts | None = None,
    output_ratio: float | Sequence[float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """fractional_max_pool2d_with_indices's values (and indices if return_indices)."""
    result = _fractional(
        2, input, kernel_size, output_size, output_ratio, _random_samples
    )
    return result if return_indices else result[0]


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: IntOrInts,
    output_size: IntOrInts | None = None,
    output_ratio: float | Sequence[float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """The 3d fractional max pooling's maxima and their flat indices."""
    return _fractional(
        3, input, kernel_size, output_size, output_ratio, _random_samples
    )


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: IntOrInts,
    output_size: IntOrInts | None = None,
    output_ratio: float | Sequence[float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """fractional_max_pool3d_with_indices's values (and indices if return_indices)."""
    result = _fractional(
        3, input, kernel_size, output_size, output_ratio, _random_samples
    )
    return result if return_indices else result[0]
