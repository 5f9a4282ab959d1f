"""Composites of the conv family: conv1d/2d/3d (numeric or 'same'/'valid' padding) and
conv_transpose1d/2d/3d, each PyTorch's CompositeImplicitAutograd function over
`convolution` (ConvolutionBackward0), unbatched input getting a batch of one."""

from __future__ import annotations

from collections.abc import Sequence

from ..dtypes import spelling
from ..numpy_kernels.conv import _expand_param
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv1d_padding",
    "conv2d_padding",
    "conv3d_padding",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]


def _batchify(input: Tensor, nd: int, name: str) -> tuple[Tensor, bool]:
    """`input` with a batch dimension, and whether it had one (PyTorch's batchify)."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, "
            f"but got input of size: {list(input.shape)}"
        )
    if input.dim() == nd + 2:
        return input, True
    return input.unsqueeze(0), False


def _check_bias(input: Tensor, bias: Tensor | None, transposed: bool) -> None:
    """conv1d/2d/3d refuse a bias of another dtype (convolution itself casts it)."""
    if transposed or bias is None or bias.dtype == input.dtype:
        return
    raise RuntimeError(
        f"Input type ({spelling(input.dtype).typeid}) and bias type "
        f"({spelling(bias.dtype).typeid}) should be the same"
    )


def _conv(
    name: str,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Tensor:
    nd = int(name[-2])
    batch, batched = _batchify(input, nd, name)
    _check_bias(input, bias, transposed)
    output = ops.convolution(
        batch,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )
    return output if batched else output.squeeze(0)


def _conv_padding(
    name: str,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Sequence[int],
    padding: str,
    dilation: Sequence[int],
    groups: int,
) -> Tensor:
    """PyTorch's _convolution_mode: 'valid' is no padding; 'same' pads d * (k - 1) in
    all, half on each side, the odd one more on the right (a constant_pad_nd)."""
    nd = int(name[-2])
    zeros = (0,) * nd
    if padding == "valid":
        return _conv(
            name, input, weight, bias, stride, zeros, dilation, False, zeros, groups
        )
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    batch, batched = _batchify(input, nd, name)
    _check_bias(input, bias, False)
    if any(s != 1 for s in _expand_param("stride", stride, nd)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = _expand_param("dilation", dilation, nd)
    total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    left = [t // 2 for t in total]
    extra = [t - 2 * half for t, half in zip(total, left)]
    if any(extra):
        pad: list[int] = []
        for more in reversed(extra):  # constant_pad_nd pads the last dimension first
            pad += [0, more]
        batch = ops.constant_pad_nd(batch, pad, 0)
    output = ops.convolution(
        batch, weight, bias, stride, left, dilation, False, zeros, groups
    )
    return output if batched else output.squeeze(0)


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    groups: int = 1,
) -> Tensor:
    """conv1d: convolution of (N, C, L) or (C, L) input."""
    return _conv(
        "conv1d", input, weight, bias, stride, padding, dilation, False, (0,), groups
    )


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
) -> Tensor:
    """conv2d: convolution of (N, C, H, W) or (C, H, W) input."""
    return _conv(
        "conv2d", input, weight, bias, stride, padding, dilation, False, (0, 0), groups
    )


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1, 1),
    padding: Sequence[int] = (0, 0, 0),
    dilation: Sequence[int] = (1, 1, 1),
    groups: int = 1,
) -> Tensor:
    """conv3d: convolution of (N, C, D, H, W) or (C, D, H, W) input."""
    return _conv(
        "conv3d",
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        False,
        (0, 0, 0),
        groups,
    )


def conv1d_padding(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1,),
    padding: str = "valid",
    dilation: Sequence[int] = (1,),
    groups: int = 1,
) -> Tensor:
    """conv1d.padding: conv1d with padding 'same' or 'valid'."""
    return _conv_padding(
        "conv1d", input, weight, bias, stride, padding, dilation, groups
    )


def conv2d_padding(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1),
    padding: str = "valid",
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
) -> Tensor:
    """conv2d.padding: conv2d with padding 'same' or 'valid'."""
    return _conv_padding(
        "conv2d", input, weight, bias, stride, padding, dilation, groups
    )


def conv3d_padding(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1, 1),
    padding: str = "valid",
    dilation: Sequence[int] = (1, 1, 1),
    groups: int = 1,
) -> Tensor:
    """conv3d.padding: conv3d with padding 'same' or 'valid'."""
    return _conv_padding(
        "conv3d", input, weight, bias, stride, padding, dilation, groups
    )


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,),
    output_padding: Sequence[int] = (0,),
    groups: int = 1,
    dilation: Sequence[int] = (1,),
) -> Tensor:
    """conv_transpose1d: the transposed convolution of (N, C, L) or (C, L) input."""
    return _conv(
        "conv_transpose1d",
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        True,
        output_padding,
        groups,
    )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0),
    output_padding: Sequence[int] = (0, 0),
    groups: int = 1,
    dilation: Sequence[int] = (1, 1),
) -> Tensor:
    """conv_transpose2d.input: the transposed convolution of 4D or 3D input."""
    return _conv(
        "conv_transpose2d",
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        True,
        output_padding,
        groups,
    )


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Sequence[int] = (1, 1, 1),
    padding: Sequence[int] = (0, 0, 0),
    output_padding: Sequence[int] = (0, 0, 0),
    groups: int = 1,
    dilation: Sequence[int] = (1, 1, 1),
) -> Tensor:
    """conv_transpose3d.input: the transposed convolution of 5D or 4D input."""
    return _conv(
        "conv_transpose3d",
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        True,
        output_padding,
        groups,
    )
