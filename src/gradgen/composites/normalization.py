"""Composites of the normalization family: layer_norm, batch_norm, instance_norm and
group_norm, each PyTorch's CompositeImplicitAutograd function over the native
operator (NativeLayerNormBackward0, NativeBatchNormBackward0,
NativeGroupNormBackward0), and rms_norm (PyTorch's CPU composite of elementwise
operators)."""

from __future__ import annotations

import math

from ..dtypes import finfo, float32
from ..grad_mode import no_grad
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["layer_norm", "batch_norm", "instance_norm", "group_norm", "rms_norm"]


def layer_norm(
    input: Tensor,
    normalized_shape: tuple[int, ...],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> Tensor:
    """The first output of native_layer_norm (NativeLayerNormBackward0)."""
    return ops.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def _check_channel_vector(name: str, channels: int, vector: Tensor | None) -> None:
    if vector is not None and vector.numel() != channels:
        raise RuntimeError(
            f"{name} should contain {channels} elements not {vector.numel()}"
        )


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """The first output of native_batch_norm, after PyTorch's checks of the
    per-channel vectors (its _batch_norm_impl_index)."""
    channels = input.shape[1] if input.dim() > 1 else input.shape[-1]
    for name, running in (("running_mean", running_mean), ("running_var", running_var)):
        if running is None and not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
        _check_channel_vector(name, channels, running)
    _check_channel_vector("weight", channels, weight)
    _check_channel_vector("bias", channels, bias)
    return ops.native_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )[0]


def _repeat(vector: Tensor | None, times: int) -> Tensor | None:
    return None if vector is None else vector.repeat([times])


def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Tensor:
    """batch_norm over the input seen as (1, N * C, *): each sample's channel is
    normalized alone. The running statistics, repeated per sample for the call, take
    back the mean over the samples of their updates."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats "
            "is false"
        )
    shape = tuple(input.shape)
    b, c = shape[0], shape[1]
    running = [_repeat(running_mean, b), _repeat(running_var, b)]
    out = batch_norm(
        input.reshape((1, b * c) + shape[2:]),
        _repeat(weight, b),
        _repeat(bias, b),
        running[0],
        running[1],
        use_input_stats,
        momentum,
        eps,
        cudnn_enabled,
    )
    with no_grad():
        for target, updated in zip((running_mean, running_var), running):
            if target is not None and updated is not None:
                target.copy_(updated.reshape((b, c)).mean(0))
    return out.reshape(shape)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enabled: bool = True,
) -> Tensor:
    """The first output of native_group_norm over (N, C, HxW), after PyTorch's checks
    of the groups and the per-channel vectors."""
    shape = list(input.shape)
    N, C = shape[0], shape[1]
    if num_groups <= 0:
        raise RuntimeError(
            f"Expected num groups to be greater than 0, got {num_groups}"
        )
    if C % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but "
            f"got input of shape {shape} and num_groups={num_groups}"
        )
    for name, vector in (("weight", weight), ("bias", bias)):
        if vector is not None and (vector.dim() != 1 or vector.numel() != C):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of "
                f"channels in input, but got {name} of shape {list(vector.shape)} "
                f"and input of shape {shape}"
            )
    HxW = math.prod(shape[2:])
    return ops.native_group_norm(input, weight, bias, N, C, HxW, num_groups, eps)[0]


def _check_rms_norm(
    input: Tensor, normalized: list[int], weight: Tensor | None
) -> None:
    """PyTorch's checks of rms_norm's arguments (layer_norm's, without bias)."""
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
    shape = list(input.shape)
    if (
        len(shape) < len(normalized)
        or shape[len(shape) - len(normalized) :] != normalized
    ):
        expected = ", ".join(str(n) for n in normalized)  # no ", " after "*" here
        raise RuntimeError(
            f"Given normalized_shape={normalized}, expected input with shape "
            f"[*{expected}], but got input of size{shape}"
        )


def rms_norm(
    input: Tensor,
    normalized_shape: tuple[int, ...],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """input / sqrt(mean(input ** 2) + eps) over the normalized (last) dimensions, times
    weight; eps defaults to the machine epsilon of input's dtype. Half-precision input
    is computed in float32 and rounded back (PyTorch's opmath type)."""
    normalized = [int(n) for n in normalized_shape]
    _check_rms_norm(input, normalized, weight)
    dims = list(range(input.dim() - len(normalized), input.dim()))
    eps_value = finfo(input.dtype).eps if eps is None else eps
    upcast = input.dtype.is_floating_point and input.dtype.itemsize < 4
    computed = input.to(float32) if upcast else input
    rstd = ops.rsqrt(computed.pow(2).mean(dims, keepdim=True) + eps_value)
    result = (computed * rstd).type_as(input)
    if weight is not None:
        result = (result * weight).type_as(result)
    return result
