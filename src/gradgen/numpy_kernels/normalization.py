"""Normalization kernels: layer norm, batch norm and group norm, and their backward."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import _check_floating
from ._half import is_half, rounded, with_float32

__all__ = [
    "native_batch_norm",
    "batch_norm_no_update",
    "fused_rms_norm",
    "native_batch_norm_backward",
    "native_group_norm",
    "native_group_norm_backward",
    "native_layer_norm",
    "native_layer_norm_backward",
]


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
    if not is_half(input):
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
    if is_half(input):  # in float32, rounded once
        args = (input, normalized_shape, weight, bias, eps)
        return with_float32(native_layer_norm, input.dtype, *args)
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
    if is_half(input):  # in float32, rounded once
        args = (
            grad_out,
            input,
            normalized_shape,
            mean,
            rstd,
            weight,
            bias,
            output_mask,
        )
        return with_float32(native_layer_norm_backward, input.dtype, *args)
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


# ---- batch norm ----


def _channels_view(array: np.ndarray) -> np.ndarray:
    """`array` (N, C, *) as (N, C, S): the statistics of batch norm run over axes 0, 2."""
    if array.ndim < 2:
        raise IndexError(
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        )
    return array.reshape(array.shape[0], array.shape[1], -1)


def _check_channel_vectors(channels: int, **vectors: np.ndarray | None) -> None:
    """PyTorch's check that weight, bias and the running statistics hold one number
    per channel."""
    for name, vector in vectors.items():
        if vector is not None and vector.size != channels:
            raise RuntimeError(
                f"{name} should contain {channels} elements not {vector.size}"
            )


def _batch_statistics(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, centered input, biased variance) per channel of x (N, C, S)."""
    count = x.shape[0] * x.shape[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = x.sum(axis=(0, 2), dtype=np.float64) / count
        centered = x - mean.astype(x.dtype)[:, None]
        variance = np.einsum("ncs,ncs->c", centered, centered) / count
    return mean, centered, variance


def _update_running(
    running: np.ndarray | None, value: np.ndarray, momentum: float
) -> None:
    """running <- momentum * value + (1 - momentum) * running, in place."""
    if running is not None:
        updated = momentum * value + (1 - momentum) * running.reshape(-1)
        running[...] = updated.reshape(running.shape).astype(running.dtype)


def native_batch_norm(
    input: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    running_mean: np.ndarray | None,
    running_var: np.ndarray | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, save_mean, save_invstd). Training: each channel (dimension 1) minus its
    batch mean, times save_invstd = 1 / sqrt(biased variance + eps), and the running
    statistics (when given) move by `momentum` towards the batch mean and the unbiased
    variance, in place. Evaluation: the running statistics normalize, and save_mean,
    save_invstd are empty (as PyTorch's CPU kernel). Then times weight plus bias."""
    if is_half(input):
        return _half_batch_norm(
            input, weight, bias, running_mean, running_var, training, momentum, eps
        )
    x = _channels_view(input)
    channels = x.shape[1]
    _check_channel_vectors(
        channels,
        weight=weight,
        bias=bias,
        running_mean=running_mean,
        running_var=running_var,
    )
    _check_floating("batch_norm", input)
    dtype = input.dtype
    if training:
        mean, centered, variance = _batch_statistics(x)
        invstd = 1.0 / np.sqrt(variance + eps)
        count = x.shape[0] * x.shape[2]
        with np.errstate(divide="ignore", invalid="ignore"):
            unbiased = variance * (count / (count - 1)) if count > 1 else variance / 0
        _update_running(running_mean, mean, momentum)
        _update_running(running_var, unbiased, momentum)
        save_mean, save_invstd = mean.astype(dtype), invstd.astype(dtype)
    else:
        for name, running in (
            ("running_mean", running_mean),
            ("running_var", running_var),
        ):
            if running is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        assert running_mean is not None and running_var is not None
        invstd = 1.0 / np.sqrt(running_var.reshape(-1).astype(np.float64) + eps)
        centered = x - running_mean.reshape(-1).astype(dtype)[:, None]
        save_mean = save_invstd = np.empty((0,), dtype)
    out = _affine(centered, invstd, weight, bias, dtype)
    return out.reshape(input.shape), save_mean, save_invstd


def _affine(
    centered: np.ndarray,
    invstd: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    dtype: np.dtype,
) -> np.ndarray:
    """(N, C, -1) centered values times invstd (times weight) plus bias, per channel,
    in `dtype`."""
    scale = invstd if weight is None else invstd * weight.reshape(-1)
    out = centered * scale.astype(dtype)[:, None]
    if bias is not None:
        out += bias.reshape(-1).astype(dtype)[:, None]
    return out


def _half_batch_norm(
    input: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    running_mean: np.ndarray | None,
    running_var: np.ndarray | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """native_batch_norm of float16 or bfloat16 as PyTorch's: in float32 (the running
    statistics updated in place), rounded once; in training, the saved mean and invstd
    are rounded to the half dtype before they normalize the input."""
    dtype = input.dtype
    args = (input, weight, bias, running_mean, running_var, training, momentum, eps)
    out, mean, invstd = with_float32(native_batch_norm, dtype, *args)
    if not training:
        return out, mean, invstd
    f32 = np.dtype(np.float32)
    centered = _channels_view(input).astype(f32) - mean.astype(f32)[:, None]
    weight32 = None if weight is None else weight.astype(f32)
    normalized = _affine(centered, invstd.astype(f32), weight32, bias, f32)
    return rounded(normalized.reshape(input.shape), dtype), mean, invstd


def native_batch_norm_backward(
    grad_out: np.ndarray,
    input: np.ndarray,
    weight: np.ndarray | None,
    running_mean: np.ndarray | None,
    running_var: np.ndarray | None,
    save_mean: np.ndarray | None,
    save_invstd: np.ndarray | None,
    train: bool,
    eps: float,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grad_input, grad_weight, grad_bias) of native_batch_norm. With x_hat = (x -
    mean) * invstd per channel and sums over every dimension but 1: grad_bias =
    sum(grad_out), grad_weight = sum(grad_out * x_hat); grad_input = weight * invstd *
    (grad_out - mean(grad_out) - x_hat * mean(grad_out * x_hat)) in training (the
    statistics depend on the input), weight * invstd * grad_out in evaluation. An
    output output_mask leaves out is zeros (PyTorch's is undefined)."""
    if is_half(input):  # in float32, rounded once
        return with_float32(
            native_batch_norm_backward,
            input.dtype,
            *(grad_out, input, weight, running_mean, running_var),
            *(save_mean, save_invstd, train, eps, output_mask),
        )
    x = _channels_view(input)
    g = np.broadcast_to(grad_out, input.shape).reshape(x.shape)
    dtype = np.result_type(grad_out, input)
    channels = x.shape[1]
    if train:
        if save_mean is None or save_invstd is None:
            raise RuntimeError(
                "native_batch_norm_backward: save_mean and save_invstd must be "
                "defined when train is True"
            )
        mean, invstd = save_mean.reshape(-1), save_invstd.reshape(-1)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "native_batch_norm_backward: running_mean and running_var must be "
                "defined when train is False"
            )
        mean = running_mean.reshape(-1)
        invstd = 1.0 / np.sqrt(running_var.reshape(-1).astype(np.float64) + eps)
    invstd = invstd.astype(dtype)
    centered = x - mean.astype(dtype)[:, None]
    sum_g = g.sum(axis=(0, 2))
    sum_g_centered = np.einsum("ncs,ncs->c", g, centered)
    scale = invstd if weight is None else invstd * weight.reshape(-1).astype(dtype)
    grad_input = np.zeros(input.shape, dtype)
    if output_mask[0] and train:
        count = x.shape[0] * x.shape[2]
        projection = (invstd * invstd * sum_g_centered / count)[:, None]
        grad_input = (
            (g - (sum_g / count)[:, None] - centered * projection) * scale[:, None]
        ).reshape(input.shape)
    elif output_mask[0]:
        grad_input = (g * scale[:, None]).reshape(input.shape)
    zeros = np.zeros((channels,), dtype)
    grad_weight = (sum_g_centered * invstd) if output_mask[1] else zeros
    grad_bias = sum_g if output_mask[2] else zeros
    return (
        grad_input.astype(dtype, copy=False),
        np.asarray(grad_weight).astype(dtype, copy=False),
        np.asarray(grad_bias).astype(dtype, copy=False),
    )


# ---- group norm ----


def _group_view(input: np.ndarray, N: int, C: int, HxW: int, group: int) -> np.ndarray:
    """`input` as (N, group, C // group * HxW), after PyTorch's checks."""
    _check_floating("GroupNormKernelImpl", input)
    if input.size != N * C * HxW:
        raise RuntimeError(
            f"Expected input of {N * C * HxW} elements (N={N}, C={C}, HxW={HxW}), "
            f"got input of shape {list(input.shape)}"
        )
    if group <= 0 or C % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but "
            f"got input of shape {list(input.shape)} and num_groups={group}"
        )
    return input.reshape(N, group, -1)


def native_group_norm(
    input: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, mean, rstd): the C channels of each of the N samples split into `group`
    groups; each group minus its mean, times rstd = 1 / sqrt(biased variance + eps)
    (mean and rstd have shape (N, group)); then times weight plus bias per channel."""
    if is_half(input):  # in float32, rounded once
        args = (input, weight, bias, N, C, HxW, group, eps)
        return with_float32(native_group_norm, input.dtype, *args)
    x = _group_view(input, N, C, HxW, group)
    _check_channel_vectors(C, weight=weight, bias=bias)
    dtype = input.dtype
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = x.mean(axis=2, dtype=np.float64)
        centered = x - mean.astype(dtype)[:, :, None]
        variance = np.einsum("ngd,ngd->ng", centered, centered) / x.shape[2]
    rstd = 1.0 / np.sqrt(variance + eps)
    out = (centered * rstd.astype(dtype)[:, :, None]).reshape(N, C, HxW)
    if weight is not None:
        out *= weight.reshape(-1).astype(dtype)[:, None]
    if bias is not None:
        out += bias.reshape(-1).astype(dtype)[:, None]
    return out.reshape(input.shape), mean.astype(dtype), rstd.astype(dtype)


def native_group_norm_backward(
    grad_out: np.ndarray,
    input: np.ndarray,
    mean: np.ndarray,
    rstd: np.ndarray,
    weight: np.ndarray | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grad_input, grad_weight, grad_bias) of native_group_norm. With x_hat = (x -
    mean) * rstd per group and a = grad_out * weight: grad_input = rstd * (a - mean(a)
    - x_hat * mean(a * x_hat)) over each group; grad_weight and grad_bias sum
    grad_out * x_hat and grad_out over N and HxW. An output output_mask leaves out is
    zeros (PyTorch's is undefined)."""
    if is_half(input):  # in float32, rounded once
        args = (grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask)
        return with_float32(native_group_norm_backward, input.dtype, *args)
    x = _group_view(input, N, C, HxW, group)
    dtype = np.result_type(grad_out, input)
    g = np.broadcast_to(grad_out, input.shape).reshape(N, C, HxW)
    x_hat = (x - mean.astype(dtype)[:, :, None]) * rstd.astype(dtype)[:, :, None]
    zeros = np.zeros((C,), dtype)
    grad_input = np.zeros(input.shape, dtype)
    if output_mask[0] and input.size:
        a = g if weight is None else g * weight.reshape(-1).astype(dtype)[:, None]
        a = a.reshape(x.shape)
        grad_input = (
            rstd.astype(dtype)[:, :, None]
            * (
                a
                - a.mean(axis=2, keepdims=True)
                - x_hat * (a * x_hat).mean(axis=2, keepdims=True)
            )
        ).reshape(input.shape)
    grad_weight = (
        np.einsum("ncs,ncs->c", g, x_hat.reshape(N, C, HxW))
        if output_mask[1]
        else zeros
    )
    grad_bias = g.sum(axis=(0, 2)) if output_mask[2] else zeros
    return (
        grad_input.astype(dtype, copy=False),
        np.asarray(grad_weight).astype(dtype, copy=False),
        np.asarray(grad_bias).astype(dtype, copy=False),
    )


def batch_norm_no_update(
    input: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    running_mean: np.ndarray | None,
    running_var: np.ndarray | None,
    momentum: float,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch's _batch_norm_no_update: native_batch_norm with the running statistics
    (the batch's when there are none), which it leaves as they are; and an empty
    uint8 `reserve` (a cuDNN workspace in PyTorch)."""
    training = running_mean is None or running_var is None
    out, mean, invstd = native_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )
    return out, mean, invstd, np.empty(0, np.uint8)


def _rms_norm_dims(
    input: np.ndarray, normalized_shape: Sequence[int], weight: np.ndarray | None
) -> tuple[int, ...]:
    """PyTorch's checks of rms_norm's arguments; the normalized dimensions."""
    normalized = [int(n) for n in normalized_shape]
    if not normalized:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            f"least one element, but got normalized_shape = {normalized}"
        )
    if weight is not None and list(weight.shape) != normalized:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of "
            f"shape {list(weight.shape)} and normalized_shape = {normalized}"
        )
    axis = input.ndim - len(normalized)
    if axis < 0 or list(input.shape[axis:]) != normalized:
        expected = ", ".join(str(n) for n in normalized)
        raise RuntimeError(
            f"Given normalized_shape={normalized}, expected input with shape "
            f"[*{expected}], but got input of size{list(input.shape)}"
        )
    return tuple(range(axis, input.ndim))


def fused_rms_norm(
    input: np.ndarray,
    normalized_shape: Sequence[int],
    weight: np.ndarray | None,
    eps: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's _fused_rms_norm: (out, rstd), rstd = 1 / sqrt(mean(input ** 2) + eps)
    over the normalized dimensions (kept with size 1), out = input * rstd * weight; eps
    None is the machine epsilon of input's dtype."""
    dims = _rms_norm_dims(input, normalized_shape, weight)
    value = np.finfo(input.dtype).eps if eps is None else eps
    rstd = 1.0 / np.sqrt(np.mean(input * input, axis=dims, keepdims=True) + value)
    rstd = rstd.astype(input.dtype, copy=False)
    out = input * rstd
    if weight is not None:
        out = out * weight
    return out, rstd
