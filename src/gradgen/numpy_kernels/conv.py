"""Kernels of the conv family: `convolution` and `convolution_backward`, 1d/2d/3d,
transposed, strided, padded, dilated and grouped.

A convolution is one matrix product: the input's windows, seen through a strided view
(`_windows`, no copy), laid out as rows of a matrix (im2col, one copy), times the
weight as a matrix; numpy hands that product to BLAS. The gradient for the input
is the matrix product the other way, folded back onto the input's positions by one
strided addition per kernel offset (`_fold`: a loop over the kernel's few positions,
never over pixels). A transposed convolution is the input gradient of the convolution
it transposes, and its gradients are that convolution's forward and weight gradient.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import spelling
from ._half import is_half, with_float32

__all__ = [
    "convolution",
    "convolution_backward",
    "slow_conv",
    "conv_tbc",
    "reflection_pad",
    "replication_pad",
    "border_pad_backward",
]


# -- windows and folding (pooling uses them too) -------------------------------------


def _windows(
    x: np.ndarray,
    out: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
) -> np.ndarray:
    """A read-only view of shape (lead..., *out, *kernel) of `x` (lead..., *spatial):
    element [..., o, k] is x[..., o * stride + k * dilation], per spatial dimension."""
    nd = len(kernel)
    spatial_strides = x.strides[x.ndim - nd :]
    shape = x.shape[: x.ndim - nd] + tuple(out) + tuple(kernel)
    strides = (
        x.strides[: x.ndim - nd]
        + tuple(s * step for s, step in zip(spatial_strides, stride))
        + tuple(s * d for s, d in zip(spatial_strides, dilation))
    )
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)


def _fold(
    cols: np.ndarray,
    spatial: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
) -> np.ndarray:
    """The adjoint of `windows`: `cols` (lead..., *out, *kernel) summed into a new array
    (lead..., *spatial) at the positions the windows read, one strided addition per
    kernel offset."""
    nd = len(spatial)
    out = cols.shape[cols.ndim - 2 * nd : cols.ndim - nd]
    kernel = cols.shape[cols.ndim - nd :]
    result = np.zeros(cols.shape[: cols.ndim - 2 * nd] + tuple(spatial), cols.dtype)
    for offset in np.ndindex(*kernel):
        place = tuple(
            slice(k * d, k * d + step * (o - 1) + 1, step)
            for k, d, step, o in zip(offset, dilation, stride, out)
        )
        result[(Ellipsis,) + place] += cols[(Ellipsis,) + offset]
    return result


def _pad_spatial(
    x: np.ndarray, padding: Sequence[int], value: float = 0.0
) -> np.ndarray:
    """`x` with `padding[i]` elements of `value` on both sides of spatial dimension i
    (the last len(padding) dimensions)."""
    if not any(padding):
        return x
    widths = [(0, 0)] * (x.ndim - len(padding)) + [(p, p) for p in padding]
    return np.pad(x, widths, constant_values=value)


# -- the three products --------------------------------------------------------------


def _im2col(
    x: np.ndarray,
    kernel: Sequence[int],
    out: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> np.ndarray:
    """The windows of `x` (N, C, *S) as (N, groups, C/groups * prod(kernel), prod(out)):
    per sample and group, one column per output position (the copy runs along the
    output positions, contiguous in the input)."""
    nd = len(kernel)
    n, c = x.shape[:2]
    view = _windows(_pad_spatial(x, padding), out, kernel, stride, dilation)
    axes = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    return view.transpose(axes).reshape(n, groups, -1, math.prod(out))


def _forward(
    x: np.ndarray,
    weight: np.ndarray,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> np.ndarray:
    """The convolution of `x` (N, C, *S) with `weight` (O, C/groups, *K), no bias."""
    kernel = weight.shape[2:]
    out = _output_size(x.shape[2:], kernel, stride, padding, dilation)
    cols = _im2col(x, kernel, out, stride, padding, dilation, groups)
    o = weight.shape[0]
    y = np.matmul(weight.reshape(groups, o // groups, -1), cols)  # (N, G, O/G, P)
    return y.reshape((x.shape[0], o) + tuple(out))


def _input_grad(
    grad_output: np.ndarray,
    weight: np.ndarray,
    input_shape: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> np.ndarray:
    """The gradient for the input (of shape `input_shape`) of the convolution with
    `weight` whose output gradient is `grad_output`."""
    nd = len(input_shape) - 2
    kernel = weight.shape[2:]
    out = grad_output.shape[2:]
    n, o = grad_output.shape[:2]
    matrix = weight.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    g = grad_output.reshape(n, groups, o // groups, -1)
    cols = np.matmul(matrix, g)  # (N, G, C/G * prod(K), P)
    cols = cols.reshape((n, input_shape[1]) + tuple(kernel) + tuple(out))
    axes = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    padded = [s + 2 * p for s, p in zip(input_shape[2:], padding)]
    grad = _fold(cols.transpose(axes), padded, stride, dilation)
    crop = tuple(slice(p, p + s) for p, s in zip(padding, input_shape[2:]))
    return np.ascontiguousarray(grad[(Ellipsis,) + crop])


def _weight_grad(
    x: np.ndarray,
    grad_output: np.ndarray,
    weight_shape: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> np.ndarray:
    """The gradient for the weight (of shape `weight_shape`) of the convolution of `x`
    whose output gradient is `grad_output`."""
    kernel = weight_shape[2:]
    out = grad_output.shape[2:]
    cols = _im2col(x, kernel, out, stride, padding, dilation, groups)
    n, o = grad_output.shape[:2]
    g = grad_output.reshape(n, groups, o // groups, -1)
    per_sample = np.matmul(g, cols.transpose(0, 1, 3, 2))  # (N, G, O/G, C/G * K)
    return per_sample.sum(axis=0).reshape(tuple(weight_shape))


# -- PyTorch's checks -----------------------------------------------------------------


def _output_size(
    spatial: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    return tuple(
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, k, st, p, d in zip(spatial, kernel, stride, padding, dilation)
    )


def _transposed_size(
    spatial: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    output_padding: Sequence[int],
) -> tuple[int, ...]:
    return tuple(
        (s - 1) * st - 2 * p + d * (k - 1) + op + 1
        for s, k, st, p, d, op in zip(
            spatial, kernel, stride, padding, dilation, output_padding
        )
    )


def _expand_param(name: str, values: Sequence[int], n: int) -> tuple[int, ...]:
    """A parameter given once for every spatial dimension, or once per dimension
    (PyTorch's expand_param_if_needed)."""
    values = tuple(values)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to "
            f"match the convolution dimensions, but got {name}={list(values)}"
        )
    return values


def _check_parameters(
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
    dtype: np.dtype,
) -> None:
    # PyTorch's oneDNN path (float32) and its native kernels word dilation differently.
    dilation_message = (
        "non-positive dilation is not supported"
        if dtype == np.float32
        else f"dilation should be greater than zero, but got {list(dilation)}"
    )
    checks = (
        (any(s <= 0 for s in stride), "non-positive stride is not supported"),
        (any(p < 0 for p in padding), "negative padding is not supported"),
        (
            any(p < 0 for p in output_padding),
            "negative output_padding is not supported",
        ),
        (any(d <= 0 for d in dilation), dilation_message),
        (groups <= 0, "non-positive groups is not supported"),
    )
    for failed, message in checks:
        if failed:
            raise RuntimeError(message)


def _check_shapes(
    input: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None,
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    groups: int,
) -> None:
    """PyTorch's check_shape_forward, with its messages."""
    if input.ndim != weight.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional "
            f"weight {list(weight.shape)}, but got {input.ndim}-dimensional input of "
            f"size {list(input.shape)} instead"
        )
    if weight.dtype != input.dtype:  # PyTorch's oneDNN (float32) or native check
        if input.dtype == np.float32:
            raise RuntimeError(
                f"Input type ({spelling(input).tensor_type}) and weight type "
                f"({spelling(weight).tensor_type}) should be the same or input should "
                "be a MKLDNN tensor and weight is a dense tensor"
            )
        raise RuntimeError(
            f"expected scalar type {spelling(input).scalar_type} but found "
            f"{spelling(weight).scalar_type}"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at "
            f"dimension 0, but got weight of size [{list(weight.shape)}] instead"
        )
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        raise RuntimeError(
            f"Given {'transposed=1' if transposed else f'groups={groups}'}, weight of "
            f"size {list(weight.shape)}, expected input{list(input.shape)} to have "
            f"{channels} channels, but got {input.shape[1]} channels instead"
        )
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and bias.shape != (out_channels,):
        raise RuntimeError(
            f"Given {'transposed=1, ' if transposed else ''}weight of size "
            f"{list(weight.shape)}, expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {list(bias.shape)} instead"
        )
    if transposed:
        return
    padded = [s + 2 * p for s, p in zip(input.shape[2:], padding)]
    extent = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(e > s for e, s in zip(extent, padded)):
        raise RuntimeError(
            "Calculated padded input size per channel: "
            f"({' x '.join(map(str, padded))}). Kernel size: "
            f"({' x '.join(map(str, extent))}). Kernel size can't be greater than "
            "actual input size"
        )


def _check_output_padding(
    output_padding: Sequence[int], stride: Sequence[int], dilation: Sequence[int]
) -> None:
    if all(op < s or op < d for op, s, d in zip(output_padding, stride, dilation)):
        return
    if len(stride) == 1:  # PyTorch computes 1d as 2d over a height of one
        output_padding, stride, dilation = (
            (0, *output_padding),
            (1, *stride),
            (1, *dilation),
        )
    names = ("depth", "height", "width")[-len(stride) :]

    def parts(label: str, values: Sequence[int]) -> str:
        return " ".join(f"{label}_{n}: {v}" for n, v in zip(names, values))

    raise RuntimeError(
        "output padding must be smaller than either stride or dilation, but got "
        f"{parts('output_padding', output_padding)} {parts('stride', stride)} "
        f"{parts('dilation', dilation)}"
    )


# -- the operators --------------------------------------------------------------------


def _parameters(
    dtype: np.dtype,
    weight: np.ndarray,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    nd = max(weight.ndim - 2, 1)
    expanded = (
        _expand_param("stride", stride, nd),
        _expand_param("padding", padding, nd),
        _expand_param("dilation", dilation, nd),
        _expand_param("output_padding", output_padding, nd),
    )
    _check_parameters(*expanded, groups, dtype)
    return expanded


def convolution(
    input: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> np.ndarray:
    """PyTorch's at::convolution on batched input (N, C, *S), 1 to 3 spatial
    dimensions; weight (O, C/groups, *K), or (C, O/groups, *K) when transposed."""
    stride, padding, dilation, output_padding = _parameters(
        input.dtype, weight, stride, padding, dilation, output_padding, groups
    )
    _check_shapes(input, weight, bias, padding, dilation, transposed, groups)
    if is_half(input):  # in float32 (the bias too), rounded once
        sizes = (stride, padding, dilation, transposed, output_padding, groups)
        return with_float32(convolution, input.dtype, input, weight, bias, *sizes)
    if transposed:
        _check_output_padding(output_padding, stride, dilation)
        spatial = _transposed_size(
            input.shape[2:], weight.shape[2:], stride, padding, dilation, output_padding
        )
        shape = (input.shape[0], weight.shape[1] * groups) + spatial
        result = _input_grad(input, weight, shape, stride, padding, dilation, groups)
    else:
        result = _forward(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        result += bias.astype(result.dtype).reshape((-1,) + (1,) * (result.ndim - 2))
    return result


def convolution_backward(
    grad_output: np.ndarray,
    input: np.ndarray,
    weight: np.ndarray,
    bias_sizes: Sequence[int] | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grad_input, grad_weight, grad_bias) of `convolution`; an output that
    output_mask leaves out is zeros (PyTorch's is undefined)."""
    stride, padding, dilation, output_padding = _parameters(
        input.dtype, weight, stride, padding, dilation, output_padding, groups
    )
    dtype = np.result_type(grad_output, input, weight)
    if is_half(input) and dtype == input.dtype:  # in float32, rounded once
        return with_float32(
            convolution_backward,
            dtype,
            *(grad_output, input, weight, bias_sizes, stride, padding, dilation),
            *(transposed, output_padding, groups, output_mask),
        )
    grad_output = grad_output.astype(dtype, copy=False)
    arguments = (stride, padding, dilation, groups)
    if not output_mask[0]:
        grad_input = np.zeros(input.shape, dtype)
    elif transposed:
        grad_input = _forward(grad_output, weight, *arguments)
    else:
        grad_input = _input_grad(grad_output, weight, input.shape, *arguments)
    if not output_mask[1]:
        grad_weight = np.zeros(weight.shape, dtype)
    elif transposed:
        grad_weight = _weight_grad(grad_output, input, weight.shape, *arguments)
    else:
        grad_weight = _weight_grad(input, grad_output, weight.shape, *arguments)
    channels = grad_output.shape[1]
    bias_shape = (channels,) if bias_sizes is None else tuple(bias_sizes)
    if output_mask[2]:
        axes = (0,) + tuple(range(2, grad_output.ndim))
        grad_bias = grad_output.sum(axis=axes).reshape(bias_shape)
    else:
        grad_bias = np.zeros(bias_shape, dtype)
    return (
        grad_input.astype(dtype, copy=False),
        grad_weight.astype(dtype, copy=False),
        grad_bias.astype(dtype, copy=False),
    )


# -- PyTorch's named convolution kernels, all the one `convolution` ---------------------


def slow_conv(
    self: np.ndarray,
    weight: np.ndarray,
    kernel_size: Sequence[int],
    bias: np.ndarray | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> np.ndarray:
    """slow_conv_transpose2d/3d, slow_conv_dilated2d/3d, _slow_conv2d_forward,
    slow_conv3d_forward and conv_depthwise3d (groups = input channels): `convolution`
    after the dilated kernels' check that the weight has `kernel_size`."""
    if not transposed and list(weight.shape[2:]) != list(kernel_size):
        raise RuntimeError(
            f"weight[2:] shape {list(weight.shape[2:])} must be equal to kernel_size "
            f"{list(kernel_size)}"
        )
    return convolution(
        self,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    )


def _check_conv_tbc(self: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> None:
    checks = (
        (self.ndim != 3, "Input must have 3 dims: time, batch, in_channel"),
        (
            weight.ndim != 3,
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.",
        ),
        (bias.ndim != 1, "Bias must be 1-D"),
        (
            self.ndim == 3 and weight.ndim == 3 and self.shape[2] != weight.shape[1],
            "Input dim 2 (input channels) is not == dim 1 in the weight tensor",
        ),
        (
            weight.ndim == 3 and bias.shape[:1] != weight.shape[2:],
            "Bias size must equal dim 2 in the weight tensor (output channels).",
        ),
    )
    for failed, message in checks:
        if failed:
            raise RuntimeError(message)


def conv_tbc(
    self: np.ndarray, weight: np.ndarray, bias: np.ndarray, pad: int
) -> np.ndarray:
    """PyTorch's conv_tbc: a 1d convolution of input (time, batch, channels) with
    weight (kernel width, in channels, out channels), `pad` zeros at both ends of
    time: the convolution of the input seen as (batch, channels, time)."""
    _check_conv_tbc(self, weight, bias)
    result = convolution(
        self.transpose(1, 2, 0),
        np.ascontiguousarray(weight.transpose(2, 1, 0)),
        bias,
        [1],
        [pad],
        [1],
        False,
        [0],
        1,
    )
    return np.ascontiguousarray(result.transpose(2, 0, 1))


# -- reflection and replication padding -----------------------------------------------
#
# Each padded dimension is one gather along that dimension: output position i copies
# input position source[i] (mirrored at the borders for reflection, clamped for
# replication; a negative amount crops). The backward sums each input position's copies:
# the gradient sorted by source and added up in runs (np.add.reduceat), no np.add.at.

_SPATIAL_NAMES = ("W", "H", "D")


def _reflect_sources(positions: np.ndarray, size: int) -> np.ndarray:
    if size == 1:
        return np.zeros_like(positions)
    folded = np.mod(positions, 2 * size - 2)
    mirrored: np.ndarray = np.where(folded < size, folded, 2 * size - 2 - folded)
    return mirrored


def _replicate_sources(positions: np.ndarray, size: int) -> np.ndarray:
    clamped: np.ndarray = np.clip(positions, 0, size - 1)
    return clamped


_BORDER_SOURCES = {"reflect": _reflect_sources, "replicate": _replicate_sources}


def _check_border_pad(
    shape: Sequence[int], padding: Sequence[int], nd: int, mode: str
) -> tuple[int, ...]:
    """PyTorch's checks of reflection_padNd / replication_padNd on an input of `shape`;
    the output's spatial sizes (the last nd dimensions), last first."""
    if len(padding) != 2 * nd:
        raise RuntimeError(
            f"padding size is expected to be {2 * nd}, but got: {len(padding)}"
        )
    nonzero = all(size != 0 for size in shape[1:])
    if len(shape) not in (nd + 1, nd + 2) or not nonzero:
        raise RuntimeError(
            f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 batch "
            "size and other non-zero dimensions for input, but got: "
            f"{list(shape)}"
        )
    sizes = []
    for pair in range(nd):
        dim = len(shape) - 1 - pair
        before, after = padding[2 * pair], padding[2 * pair + 1]
        if mode == "reflect" and (before >= shape[dim] or after >= shape[dim]):
            raise RuntimeError(
                f"Argument #{4 + 2 * pair}: Padding size should be less than the "
                "corresponding input dimension, but got: padding "
                f"({before}, {after}) at dimension {dim} of input {list(shape)}"
            )
        sizes.append(shape[dim] + before + after)
    if any(size < 1 for size in sizes):
        names = _SPATIAL_NAMES[:nd][::-1]
        inputs = ", ".join(
            f"{n}: {shape[len(shape) - nd + i]}" for i, n in enumerate(names)
        )
        outputs = " ".join(f"{n}: {s}" for n, s in zip(names, sizes[::-1]))
        raise RuntimeError(
            f"input ({inputs}) is too small. Calculated output {outputs}"
        )
    return tuple(sizes)


def _border_sources(size: int, before: int, after: int, mode: str) -> np.ndarray:
    return _BORDER_SOURCES[mode](np.arange(-before, size + after), size)


def _border_pad(
    self: np.ndarray, padding: Sequence[int], nd: int, mode: str
) -> np.ndarray:
    padding = [int(amount) for amount in padding]
    _check_border_pad(self.shape, padding, nd, mode)
    result = self
    for pair in range(nd):
        dim = self.ndim - 1 - pair
        before, after = padding[2 * pair], padding[2 * pair + 1]
        if before or after:
            source = _border_sources(self.shape[dim], before, after, mode)
            result = np.take(result, source, axis=dim)
    return np.ascontiguousarray(result)


def reflection_pad(self: np.ndarray, padding: Sequence[int], nd: int) -> np.ndarray:
    """PyTorch's reflection_pad{nd}d: the last nd dimensions padded with their mirror
    image (the border element not repeated); padding = (before, after) pairs, the last
    dimension first; a negative amount crops."""
    return _border_pad(self, padding, nd, "reflect")


def replication_pad(self: np.ndarray, padding: Sequence[int], nd: int) -> np.ndarray:
    """PyTorch's replication_pad{nd}d: as reflection_pad, the border element repeated."""
    return _border_pad(self, padding, nd, "replicate")


def _sum_copies(
    grad: np.ndarray, dim: int, source: np.ndarray, size: int
) -> np.ndarray:
    """The adjoint of np.take(x, source, axis=dim) for x of length `size` there."""
    shape = list(grad.shape)
    shape[dim] = size
    if source.size == 0:
        return np.zeros(shape, grad.dtype)
    order = np.argsort(source, kind="stable")
    present, starts = np.unique(source[order], return_index=True)
    sums = np.add.reduceat(np.take(grad, order, axis=dim), starts, axis=dim)
    if len(present) == size:
        return sums
    result = np.zeros(shape, grad.dtype)
    index: list[Any] = [slice(None)] * grad.ndim
    index[dim] = present
    result[tuple(index)] = sums
    return result


def border_pad_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    padding: Sequence[int],
    nd: int,
    mode: str,
) -> np.ndarray:
    """reflection_pad{nd}d_backward (mode 'reflect') and replication_pad{nd}d_backward
    ('replicate'): every input element's gradient is the sum over its copies."""
    padding = [int(amount) for amount in padding]
    sizes = _check_border_pad(self.shape, padding, nd, mode)
    for pair, expected in enumerate(sizes):
        dim = self.ndim - 1 - pair
        got = grad_output.shape[dim] if grad_output.ndim == self.ndim else None
        if got != expected:
            name = ("width", "height", "depth")[pair]
            raise RuntimeError(
                f"gradOutput {name} unexpected. Expected: {expected}, Got: {got}"
            )
    grad = grad_output
    for pair in range(nd):
        dim = self.ndim - 1 - pair
        before, after = padding[2 * pair], padding[2 * pair + 1]
        if before or after:
            source = _border_sources(self.shape[dim], before, after, mode)
            grad = _sum_copies(grad, dim, source, self.shape[dim])
    return np.ascontiguousarray(grad, dtype=np.result_type(grad_output, self))
