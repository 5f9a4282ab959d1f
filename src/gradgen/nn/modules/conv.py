"""torch.nn's convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d, with
PyTorch's constructor arguments, checks, default initialisation and repr, and their
lazy forms (LazyConv*d, LazyConvTranspose*d: in_channels from the first input)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from gradgen.factories import empty
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin, _materialize
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]

_PADDING_STRINGS = ("same", "valid")
_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _check_arguments(
    in_channels: int,
    out_channels: int,
    stride: tuple[int, ...],
    padding: str | tuple[int, ...],
    groups: int,
    padding_mode: str,
) -> None:
    """PyTorch's constructor checks, in PyTorch's order and words."""
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups != 0:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups != 0:
        raise ValueError("out_channels must be divisible by groups")
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise ValueError(
                f"Invalid padding string {padding!r}, should be one of "
                "{'same', 'valid'}"
            )
        if padding == "same" and any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(
            "padding_mode must be one of {'zeros', 'reflect', 'replicate', "
            f"'circular'}}, but got padding_mode='{padding_mode}'"
        )


def _pad_amounts(
    padding: str | tuple[int, ...],
    kernel_size: tuple[int, ...],
    dilation: tuple[int, ...],
) -> tuple[int, ...]:
    """F.pad's amounts (last dimension first, before and after) for a padding_mode
    other than zeros; 'same' puts the odd one of dilation * (k - 1) after."""
    if not isinstance(padding, str):
        return _reverse_repeat_tuple(padding, 2)
    amounts = [0, 0] * len(kernel_size)
    if padding == "same":
        last = len(kernel_size) - 1
        for d, (k, rate) in enumerate(zip(kernel_size, dilation)):
            total = rate * (k - 1)
            amounts[2 * (last - d)] = total // 2
            amounts[2 * (last - d) + 1] = total - total // 2
    return tuple(amounts)


class _ConvNd(Module):
    """What the convolution layers share: the arguments as tuples, the weight
    (out, in / groups, *kernel) or, transposed, (in, out / groups, *kernel), the
    optional bias, PyTorch's initialisation and repr."""

    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: str | tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int
    padding_mode: str
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple[int, ...],
        stride: tuple[int, ...],
        padding: str | tuple[int, ...],
        dilation: tuple[int, ...],
        transposed: bool,
        output_padding: tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_arguments(
            in_channels, out_channels, stride, padding, groups, padding_mode
        )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _pad_amounts(
            padding, kernel_size, dilation
        )
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: weight from kaiming_uniform_(a=sqrt(5)), that is
        U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias from the same range."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, "
            f"kernel_size={self.kernel_size}, stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            text += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class _Conv(_ConvNd):
    """A convolution of a fixed number of spatial dimensions; `_tuple` makes its
    arguments tuples, `_conv` is its functional."""

    _tuple: Callable[[Any], tuple[Any, ...]]
    _conv: Callable[..., Tensor]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: str | int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        to_tuple = type(self)._tuple
        super().__init__(
            in_channels,
            out_channels,
            to_tuple(kernel_size),
            to_tuple(stride),
            padding if isinstance(padding, str) else to_tuple(padding),
            to_tuple(dilation),
            False,
            to_tuple(0),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(
        self, input: Tensor, weight: Tensor, bias: Tensor | None
    ) -> Tensor:
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            padded = F.pad(
                input, self._reversed_padding_repeated_twice, mode=self.padding_mode
            )
            zero = type(self)._tuple(0)
            return conv(
                padded, weight, bias, self.stride, zero, self.dilation, self.groups
            )
        return conv(
            input, weight, bias, self.stride, self.padding, self.dilation, self.groups
        )

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """A 1-d convolution over (N, C_in, L) or (C_in, L)."""

    _tuple = staticmethod(_single)
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """A 2-d convolution over (N, C_in, H, W) or (C_in, H, W)."""

    _tuple = staticmethod(_pair)
    _conv = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """A 3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""

    _tuple = staticmethod(_triple)
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """A transposed convolution of `_dims` spatial dimensions (the gradient of the
    convolution with respect to its input); only padding_mode='zeros', as PyTorch."""

    _dims: int
    _tuple: Callable[[Any], tuple[Any, ...]]
    _conv: Callable[..., Tensor]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        output_padding: int | Sequence[int] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | Sequence[int] = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}'
            )
        if isinstance(padding, str):
            raise ValueError(
                f"{type(self).__name__}: padding must be numbers, got {padding!r}"
            )
        to_tuple = type(self)._tuple
        super().__init__(
            in_channels,
            out_channels,
            to_tuple(kernel_size),
            to_tuple(stride),
            to_tuple(padding),
            to_tuple(dilation),
            True,
            to_tuple(output_padding),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> Any:
        """The output_padding that makes the output `output_size` (PyTorch's rule:
        each size between the smallest output and that plus stride - 1)."""
        if output_size is None:
            return self.output_padding
        dims = self._dims
        batch_dims = 2 if input.dim() == dims + 2 else 1
        sizes = output_size
        if len(sizes) == batch_dims + dims:
            sizes = sizes[batch_dims:]
        if len(sizes) != dims:
            raise ValueError(
                f"ConvTranspose{dims}D: for {input.dim()}D input, output_size must "
                f"have {dims} or {batch_dims + dims} elements (got {len(sizes)})"
            )
        padding = self.padding
        assert not isinstance(padding, str)
        min_sizes = [
            (input.shape[d + batch_dims] - 1) * self.stride[d]
            - 2 * padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(dims)
        ]
        max_sizes = [low + s - 1 for low, s in zip(min_sizes, self.stride)]
        for size, low, high in zip(sizes, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {sizes}, but valid sizes range "
                    f"from {min_sizes} to {max_sizes} (for an input of "
                    f"{type(input.shape)(input.shape[batch_dims:])})"
                )
        return [size - low for size, low in zip(sizes, min_sizes)]

    def forward(
        self, input: Tensor, output_size: Sequence[int] | None = None
    ) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return type(self)._conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """A transposed 1-d convolution over (N, C_in, L) or (C_in, L)."""

    _dims = 1
    _tuple = staticmethod(_single)
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """A transposed 2-d convolution over (N, C_in, H, W) or (C_in, H, W)."""

    _dims = 2
    _tuple = staticmethod(_pair)
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """A transposed 3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""

    _dims = 3
    _tuple = staticmethod(_triple)
    _conv = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: in_channels is the channel size of the
    first input (dimension 1 batched, 0 unbatched), then weight and bias are
    materialized and initialised as the non-lazy layer's."""

    in_channels: int
    out_channels: int
    groups: int
    transposed: bool
    kernel_size: tuple[int, ...]
    weight: Parameter
    bias: Parameter | None

    def _uninitialized(
        self, out_channels: int, bias: bool, device: Any, dtype: Any
    ) -> None:
        """Replace the empty weight and bias by uninitialized ones."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with no_grad():
            _materialize(self.weight, (*shape, *self.kernel_size))
            if self.bias is not None:
                _materialize(self.bias, (self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = len(self.kernel_size) + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                f"input to {type(self).__name__}, but got input of size: "
                f"{input.shape}"
            )
        return int(input.shape[1] if input.dim() == unbatched + 1 else input.shape[0])


class _LazyConv(_LazyConvXdMixin):
    """A lazy convolution: Conv*d's arguments without in_channels."""

    def __init__(
        self,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: str | int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            False,
            padding_mode,
            device,
            dtype,
        )
        self._uninitialized(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    """A lazy transposed convolution: ConvTranspose*d's arguments without
    in_channels."""

    def __init__(
        self,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        output_padding: int | Sequence[int] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | Sequence[int] = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            device,
            dtype,
        )
        self._uninitialized(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """Conv1d whose in_channels comes from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """Conv2d whose in_channels comes from its first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """Conv3d whose in_channels comes from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """ConvTranspose1d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """ConvTranspose2d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """ConvTranspose3d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose3d
