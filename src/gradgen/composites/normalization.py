"""Composites of the normalization family: layer_norm, batch_norm, instance_norm and
group_norm, each PyTorch's CompositeImplicitAutograd function over the native
operator (NativeLayerNormBackward0, NativeBatchNormBackward0,
NativeGroupNormBackward0)."""

from __future__ import annotations

import math

from ..grad_mode import no_grad
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["layer_norm", "batch_norm", "instance_norm", "group_norm"]


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
