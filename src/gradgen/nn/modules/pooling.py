"""torch.nn's pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
AdaptiveMaxPool1d/2d/3d, LPPool1d/2d/3d, MaxUnpool1d/2d/3d and
FractionalMaxPool2d/3d, with PyTorch's
constructor arguments and repr."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradgen.tensor import Tensor

from .. import functional as F
from .module import Module
from .utils import _pair, _single, _triple

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
]

IntOrInts = int | Sequence[int]


class _MaxPoolNd(Module):
    """The largest value of each window; the arguments are kept as given (a stride
    of None becomes the kernel size), as PyTorch's repr shows them."""

    _pool: Callable[..., Any]

    def __init__(
        self,
        kernel_size: IntOrInts,
        stride: IntOrInts | None = None,
        padding: IntOrInts = 0,
        dilation: IntOrInts = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, "
            f"ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Max pooling over (N, C, L) or (C, L)."""

    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max pooling over (N, C, H, W) or (C, H, W)."""

    _pool = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max pooling over (N, C, D, H, W) or (C, D, H, W)."""

    _pool = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )


class AvgPool1d(_AvgPoolNd):
    """Average pooling over (N, C, L) or (C, L); the arguments are kept as 1-tuples,
    as PyTorch's."""

    def __init__(
        self,
        kernel_size: IntOrInts,
        stride: IntOrInts | None = None,
        padding: IntOrInts = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )


class _AvgPool(_AvgPoolNd):
    """Average pooling in 2 or 3 dimensions, with divisor_override."""

    _pool: Callable[..., Tensor]

    def __init__(
        self,
        kernel_size: IntOrInts,
        stride: IntOrInts | None = None,
        padding: IntOrInts = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool2d(_AvgPool):
    """Average pooling over (N, C, H, W) or (C, H, W)."""

    _pool = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPool):
    """Average pooling over (N, C, D, H, W) or (C, D, H, W)."""

    _pool = staticmethod(F.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    """The mean over an output_size grid of windows spread evenly over the input."""

    _pool: Callable[..., Tensor]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Adaptive average pooling over (N, C, L) or (C, L)."""

    _pool = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Adaptive average pooling over (N, C, H, W) or (C, H, W); None in output_size
    keeps the input's size."""

    _pool = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Adaptive average pooling over (N, C, D, H, W) or (C, D, H, W); None in
    output_size keeps the input's size."""

    _pool = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    """The largest value of each window of an output_size grid spread evenly over the
    input (with its index when return_indices=True)."""

    _pool: Callable[..., Any]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over (N, C, L) or (C, L)."""

    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over (N, C, H, W) or (C, H, W); None in output_size keeps
    the input's size."""

    _pool = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling over (N, C, D, H, W) or (C, D, H, W); None in output_size
    keeps the input's size."""

    _pool = staticmethod(F.adaptive_max_pool3d)


class _LPPoolNd(Module):
    """The p-norm of each window (power-average pooling)."""

    _pool: Callable[..., Tensor]

    def __init__(
        self,
        norm_type: float,
        kernel_size: IntOrInts,
        stride: IntOrInts | None = None,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._pool(
            input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling over (N, C, L) or (C, L)."""

    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (N, C, H, W) or (C, H, W)."""

    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W)."""

    _pool = staticmethod(F.lp_pool3d)


class _MaxUnpoolNd(Module):
    """The inverse of max pooling: values put back at the indices the pooling
    returned, zeros elsewhere; the arguments are kept as tuples, as PyTorch's."""

    _tuple: Callable[[Any], tuple[Any, ...]]
    _unpool: Callable[..., Tensor]

    def __init__(
        self,
        kernel_size: IntOrInts,
        stride: IntOrInts | None = None,
        padding: IntOrInts = 0,
    ) -> None:
        super().__init__()
        to_tuple = type(self)._tuple
        self.kernel_size = to_tuple(kernel_size)
        self.stride = to_tuple(stride if stride is not None else kernel_size)
        self.padding = to_tuple(padding)

    def forward(
        self,
        input: Tensor,
        indices: Tensor,
        output_size: Sequence[int] | None = None,
    ) -> Tensor:
        return type(self)._unpool(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of MaxPool1d."""

    _tuple = staticmethod(_single)
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of MaxPool2d."""

    _tuple = staticmethod(_pair)
    _unpool = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of MaxPool3d."""

    _tuple = staticmethod(_triple)
    _unpool = staticmethod(F.max_unpool3d)


class _FractionalMaxPoolNd(Module):
    """F.fractional_max_pool{dims}d with a fixed output_size or output_ratio; the
    windows' random offsets are drawn anew at every call unless _random_samples is
    given (kept as a buffer)."""

    dims = 2
    _pool: Callable[..., Any]

    def __init__(
        self,
        kernel_size: IntOrInts,
        output_size: IntOrInts | None = None,
        output_ratio: float | Sequence[float] | None = None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        as_tuple = _pair if self.dims == 2 else _triple
        self.kernel_size = as_tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else as_tuple(output_size)
        self.output_ratio = None if output_ratio is None else as_tuple(output_ratio)
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError(
                "only one of output_size and output_ratio may be specified"
            )
        if self.output_ratio is not None and not all(
            0 < ratio < 1 for ratio in self.output_ratio
        ):
            raise ValueError(
                f"output_ratio must be between 0 and 1 (got {output_ratio})"
            )

    def forward(self, input: Tensor) -> Any:
        return type(self)._pool(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over the last two dimensions."""

    _pool = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over the last three dimensions."""

    dims = 3
    _pool = staticmethod(F.fractional_max_pool3d)
