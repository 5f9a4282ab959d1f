"""Formula helpers of the normalization family: layer norm, batch norm, group norm."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..grad_mode import is_grad_enabled
from ..tensor import Tensor

__all__ = [
    "layer_norm_jvp",
    "layer_norm_double_backward",
    "batch_norm_jvp",
    "batchnorm_double_backward",
    "group_norm_jvp",
    "group_norm_mean_jvp",
    "group_norm_invstd_jvp",
    "infinitely_differentiable_native_group_norm_backward",
    "infinitely_differentiable_native_rms_norm_backward",
    "rms_norm_jvp",
    "rms_norm_rstd_jvp",
    "_fused_rms_norm_backward",
]


def _normalized_dims(input: Tensor, normalized_shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(range(input.dim() - len(normalized_shape), input.dim()))


def layer_norm_jvp(
    input_p: Tensor,
    input_t: Tensor,
    weight_p: Tensor | None,
    weight_t: Tensor | None,
    bias_p: Tensor | None,
    bias_t: Tensor | None,
    saved_mean: Tensor,
    saved_invstd: Tensor,
    normalized_shape: Sequence[int],
) -> Tensor:
    """The tangent of native_layer_norm's output. With x_hat = (x - mean) * rstd, the
    tangent of x_hat is rstd * (t - mean(t) - x_hat * mean(x_hat * t)) over the
    normalized dimensions; the affine part adds x_hat * weight_t + bias_t."""
    dims = _normalized_dims(input_p, normalized_shape)
    x_hat = (input_p - saved_mean) * saved_invstd
    x_hat_t = saved_invstd * (
        input_t - input_t.mean(dims, True) - x_hat * (x_hat * input_t).mean(dims, True)
    )
    out_t = x_hat_t if weight_p is None else x_hat_t * weight_p
    if weight_t is not None:
        out_t = out_t + x_hat * weight_t
    if bias_t is not None:
        out_t = out_t + bias_t
    return out_t


def layer_norm_double_backward(
    input: Tensor,
    gamma: Tensor | None,
    ggI: Tensor | None,
    ggG: Tensor | None,
    ggB: Tensor | None,
    gO: Tensor,
    save_mean: Tensor,
    save_invstd: Tensor,
    normalized_shape: Sequence[int],
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The gradients of native_layer_norm_backward (grad_input, grad_weight, grad_bias)
    for input, weight and grad_out, given the gradients ggI, ggG, ggB of its outputs
    (None when an output got none).

    Per row, with m() the mean over the normalized dimensions, r = rstd, x_hat =
    (x - mean) * r and a = gO * gamma, grad_input = r * (a - m(a) - x_hat * m(a * x_hat)),
    grad_weight = sum over rows of gO * x_hat, grad_bias = sum over rows of gO. mean
    and rstd are functions of x, differentiated as such: under grad mode (a third
    derivative) they are recomputed from `input` with operators, with the eps the saved
    rstd implies, so that the result is a differentiable function of `input`."""
    dims = _normalized_dims(input, normalized_shape)
    rows = tuple(range(input.dim() - len(normalized_shape)))
    if is_grad_enabled():
        x = input._data.astype(np.float64)
        variance = ((x - x.mean(axis=dims, keepdims=True)) ** 2).mean(
            axis=dims, keepdims=True
        )
        eps = save_invstd._data.astype(np.float64) ** -2 - variance
        mean = input.mean(dims, True)
        centered = input - mean
        invstd = (
            (centered * centered).mean(dims, True)
            + Tensor(eps.astype(input._data.dtype))
        ).rsqrt()
    else:
        mean, invstd = save_mean, save_invstd
    x_hat = (input - mean) * invstd

    def m(t: Tensor) -> Tensor:
        return t.mean(dims, True)

    def row_sum(t: Tensor) -> Tensor:
        return t.sum(rows) if rows else t

    a = gO if gamma is None else gO * gamma
    g_input: Tensor | None = None
    g_gamma: Tensor | None = None
    gg_out: Tensor | None = None
    if ggI is not None:
        # grad_input = r * P(a), P self-adjoint: the gradient for a is r * P(ggI).
        g_a = invstd * (ggI - m(ggI) - x_hat * m(x_hat * ggI))
        gg_out = g_a if gamma is None else g_a * gamma
        if gamma is not None:
            g_gamma = row_sum(g_a * gO)
        # grad_input's dependence on x through mean and r (a fixed).
        a_x_hat, c_x_hat = m(a * x_hat), m(ggI * x_hat)
        g_input = (invstd * invstd) * (
            -x_hat * (m(ggI * a) - m(ggI) * m(a))
            + 3 * x_hat * a_x_hat * c_x_hat
            - a_x_hat * (ggI - m(ggI))
            - (a - m(a)) * c_x_hat
        )
    if ggG is not None:
        # grad_weight = sum of gO * x_hat: through x_hat for x, directly for gO.
        c = gO * ggG
        through_x_hat = invstd * (c - m(c) - x_hat * m(c * x_hat))
        g_input = through_x_hat if g_input is None else g_input + through_x_hat
        term = ggG * x_hat
        gg_out = term if gg_out is None else gg_out + term
    if ggB is not None:
        term = ggB.expand(tuple(gO.shape))
        gg_out = term if gg_out is None else gg_out + term
    return (
        g_input if output_mask[0] else None,
        g_gamma if output_mask[1] else None,
        gg_out if output_mask[2] else None,
    )


# ---- batch norm ----


def _channel_dims(input: Tensor) -> tuple[tuple[int, ...], list[int]]:
    """The dimensions batch norm reduces over (all but 1), and the shape that lays a
    per-channel vector along dimension 1."""
    ndim = input.dim()
    view = [1] * ndim
    view[1] = input.shape[1]
    return (0,) + tuple(range(2, ndim)), view


def batch_norm_jvp(
    input_p: Tensor,
    input_t: Tensor,
    weight_p: Tensor | None,
    weight_t: Tensor | None,
    bias_p: Tensor | None,
    bias_t: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    saved_mean: Tensor,
    saved_invstd: Tensor,
    train: bool,
    eps: float,
) -> Tensor:
    """The tangent of native_batch_norm's output. Training: x_hat = (x - mean) *
    invstd with batch statistics, whose tangent is (t - mean(t)) * invstd + (x - mean)
    * invstd_t, invstd_t = -invstd**3 * mean((t - mean(t)) * (x - mean)). Evaluation:
    the running statistics are constants, the tangent is t * invstd. The affine part
    adds x_hat * weight_t + bias_t."""
    dims, view = _channel_dims(input_p)
    if train:
        mean_p = saved_mean.reshape(view)
        invstd_p = saved_invstd.reshape(view)
        centered_t = input_t - input_t.mean(dims, True)
        invstd_t = -(invstd_p**3) * (centered_t * (input_p - mean_p)).mean(dims, True)
        result_t = centered_t * invstd_p + (input_p - mean_p) * invstd_t
    else:
        assert running_mean is not None and running_var is not None
        mean_p = running_mean.reshape(view)
        invstd_p = (running_var + eps).rsqrt().reshape(view)
        result_t = input_t * invstd_p
    if weight_p is not None:
        result_t = result_t * weight_p.reshape(view)
    if weight_t is not None:
        result_t = result_t + weight_t.reshape(view) * (input_p - mean_p) * invstd_p
    if bias_t is not None:
        result_t = result_t + bias_t.reshape(view)
    return result_t


def _batch_statistics(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    train: bool,
    eps: float,
    save_mean: Tensor | None,
    save_invstd: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """(mean, invstd) laid along dimension 1. In training under grad mode (a third
    derivative) they are recomputed from `input` with operators, so that they are
    differentiable functions of it; in evaluation they are the running statistics."""
    dims, view = _channel_dims(input)
    if not train:
        assert running_mean is not None and running_var is not None
        return running_mean.reshape(view), (running_var + eps).rsqrt().reshape(view)
    if is_grad_enabled():
        mean = input.mean(dims, True)
        centered = input - mean
        return mean, ((centered * centered).mean(dims, True) + eps).rsqrt()
    assert save_mean is not None and save_invstd is not None
    return save_mean.reshape(view), save_invstd.reshape(view)


def batchnorm_double_backward(
    input: Tensor,
    gamma: Tensor | None,
    ggI: Tensor | None,
    ggG: Tensor | None,
    ggB: Tensor | None,
    gO: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    train: bool,
    eps: float,
    save_mean: Tensor | None,
    save_invstd: Tensor | None,
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The gradients of native_batch_norm_backward (grad_input, grad_weight, grad_bias)
    for input, weight and grad_out, given the gradients ggI, ggG, ggB of its outputs.

    With m() the mean over every dimension but 1, x_hat = (x - mean) * invstd and a =
    gO * gamma: in training grad_input = invstd * (a - m(a) - x_hat * m(a * x_hat)),
    whose statistics depend on x; in evaluation grad_input = a * invstd, linear in gO.
    grad_weight = sum(gO * x_hat), grad_bias = sum(gO) per channel."""
    dims, view = _channel_dims(input)
    mean, invstd = _batch_statistics(
        input, running_mean, running_var, train, eps, save_mean, save_invstd
    )
    x_hat = (input - mean) * invstd
    g = None if gamma is None else gamma.reshape(view)

    def m(t: Tensor) -> Tensor:
        return t.mean(dims, True)

    g_input: Tensor | None = None
    g_gamma: Tensor | None = None
    gg_out: Tensor | None = None
    if ggI is not None:
        if train:
            # grad_input = invstd * P(a), P self-adjoint: a's gradient is invstd * P(ggI).
            g_a = invstd * (ggI - m(ggI) - x_hat * m(x_hat * ggI))
            a = gO if g is None else gO * g
            a_x_hat, c_x_hat = m(a * x_hat), m(ggI * x_hat)
            g_input = (invstd * invstd) * (
                -x_hat * (m(ggI * a) - m(ggI) * m(a))
                + 3 * x_hat * a_x_hat * c_x_hat
                - a_x_hat * (ggI - m(ggI))
                - (a - m(a)) * c_x_hat
            )
        else:
            g_a = ggI * invstd
        gg_out = g_a if g is None else g_a * g
        if g is not None:
            g_gamma = (g_a * gO).sum(dims)
    if ggG is not None:
        # grad_weight = sum(gO * x_hat): through x_hat for x (training), directly for gO.
        G = ggG.reshape(view)
        if train:
            c = gO * G
            through_x_hat = invstd * (c - m(c) - x_hat * m(c * x_hat))
        else:
            through_x_hat = gO * G * invstd
        g_input = through_x_hat if g_input is None else g_input + through_x_hat
        term = G * x_hat
        gg_out = term if gg_out is None else gg_out + term
    if ggB is not None:
        term = ggB.reshape(view).expand(tuple(gO.shape))
        gg_out = term if gg_out is None else gg_out + term
    return (
        g_input if output_mask[0] else None,
        g_gamma if output_mask[1] else None,
        gg_out if output_mask[2] else None,
    )


# ---- group norm ----


def group_norm_jvp(
    input_p: Tensor,
    input_t: Tensor,
    weight_p: Tensor | None,
    weight_t: Tensor | None,
    bias_p: Tensor | None,
    bias_t: Tensor | None,
    saved_mean: Tensor,
    saved_invstd: Tensor,
    groups: int,
) -> Tensor:
    """The tangent of native_group_norm's output: batch_norm_jvp in training over the
    input seen as (1, N * groups, -1), then the per-channel affine part."""
    shape = tuple(input_p.shape)
    grouped = (1, shape[0] * groups, -1)
    input_r = input_p.reshape(grouped)
    result_t = batch_norm_jvp(
        input_r,
        input_t.reshape(grouped),
        None,
        None,
        None,
        None,
        None,
        None,
        saved_mean,
        saved_invstd,
        True,
        0.0,
    ).reshape(shape)
    view = [1] * len(shape)
    view[1] = shape[1]
    if weight_p is not None:
        result_t = result_t * weight_p.reshape(view)
    if weight_t is not None:
        stats = (1, shape[0] * groups, 1)
        x_hat = (input_r - saved_mean.reshape(stats)) * saved_invstd.reshape(stats)
        result_t = result_t + weight_t.reshape(view) * x_hat.reshape(shape)
    if bias_t is not None:
        result_t = result_t + bias_t.reshape(view)
    return result_t


def group_norm_mean_jvp(input_t: Tensor, mean_p: Tensor, groups: int) -> Tensor:
    """The tangent of the group means: the mean of the tangent over each group."""
    grouped = input_t.reshape((input_t.shape[0], groups, -1))
    return grouped.mean(-1).reshape(tuple(mean_p.shape))


def group_norm_invstd_jvp(
    input_p: Tensor, input_t: Tensor, mean_p: Tensor, invstd_p: Tensor, groups: int
) -> Tensor:
    """The tangent of the groups' rstd = (var + eps)**-1/2: -rstd**3 * mean((t - mean(t))
    * (x - mean)) over each group."""
    grouped = (input_p.shape[0], groups, -1)
    x = input_p.reshape(grouped)
    t = input_t.reshape(grouped)
    centered = x - mean_p.reshape(tuple(mean_p.shape) + (1,))
    covariance = ((t - t.mean(-1, True)) * centered).mean(-1)
    return -(invstd_p**3) * covariance.reshape(tuple(invstd_p.shape))


def infinitely_differentiable_native_group_norm_backward(
    dY: Tensor | None,
    dmean: Tensor | None,
    drstd: Tensor | None,
    X: Tensor,
    mean: Tensor,
    rstd: Tensor,
    gamma: Tensor | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    eps: float,
    grad_input_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The gradients of native_group_norm for input, weight and bias, from those of
    its three outputs (out, mean, rstd), written with operators so that it is itself
    differentiable. Per group of D = C / group * HxW elements, with x_hat = (x - mean)
    * rstd and a = dY * gamma: dX = rstd * (a - m(a) - x_hat * m(a * x_hat)) + dmean / D
    - drstd * rstd**2 * x_hat / D; dgamma = sum(dY * x_hat), dbeta = sum(dY) over N and
    HxW. Under grad mode mean and rstd are recomputed from X (see
    layer_norm_double_backward)."""
    x = X.reshape((N, group, -1))
    if is_grad_enabled():
        mean_g = x.mean(-1, True)
        centered = x - mean_g
        rstd_g = ((centered * centered).mean(-1, True) + eps).rsqrt()
    else:
        mean_g, rstd_g = mean.reshape((N, group, 1)), rstd.reshape((N, group, 1))
    x_hat = (x - mean_g) * rstd_g
    D = (C // group) * HxW
    dX: Tensor | None = None
    dgamma: Tensor | None = None
    dbeta: Tensor | None = None
    if dY is not None:
        g = dY.reshape((N, C, -1))
        a = (g if gamma is None else g * gamma.reshape((1, C, 1))).reshape(
            (N, group, -1)
        )
        dX = rstd_g * (a - a.mean(-1, True) - x_hat * (a * x_hat).mean(-1, True))
        if gamma is not None:
            dgamma = (g * x_hat.reshape((N, C, -1))).sum((0, 2))
        dbeta = g.sum((0, 2))
    if dmean is not None:
        term = (dmean.reshape((N, group, 1)) / D).expand(tuple(x.shape))
        dX = term if dX is None else dX + term
    if drstd is not None:
        term = -drstd.reshape((N, group, 1)) * rstd_g * rstd_g * x_hat / D
        dX = term if dX is None else dX + term
    return (
        dX.reshape(tuple(X.shape)) if dX is not None and grad_input_mask[0] else None,
        dgamma if grad_input_mask[1] else None,
        dbeta if grad_input_mask[2] else None,
    )


def _rms_norm_count(input: Tensor, normalized_shape: Sequence[int]) -> int:
    return int(np.prod([int(n) for n in normalized_shape]))


def infinitely_differentiable_native_rms_norm_backward(
    dY: Tensor | None,
    drstd: Tensor | None,
    input: Tensor,
    normalized_shape: Sequence[int],
    rstd: Tensor,
    weight: Tensor | None,
    grad_input_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None]:
    """(dX, dgamma) of _fused_rms_norm from the gradients of out (dY) and of rstd
    (drstd), with operators: with out = x * rstd * w and rstd = (mean(x^2) + eps)^-1/2,
    dX = rstd * g - x * rstd^3 * mean(g * x) (g = dY * w) - drstd * rstd^3 * x / M."""
    dims = _normalized_dims(input, normalized_shape)
    count = _rms_norm_count(input, normalized_shape)
    dX: Tensor | None = None
    dgamma: Tensor | None = None
    cube = rstd * rstd * rstd
    if grad_input_mask[0]:
        if dY is not None:
            g = dY if weight is None else dY * weight
            dX = rstd * g - input * cube * (g * input).mean(list(dims), keepdim=True)
        if drstd is not None:
            extra = -(drstd * cube * input) / count
            dX = extra if dX is None else dX + extra
    if len(grad_input_mask) > 1 and grad_input_mask[1] and dY is not None:
        if weight is not None:
            lead = list(range(input.dim() - len(normalized_shape)))
            product = dY * input * rstd
            dgamma = product.sum(lead) if lead else product
    return dX, dgamma


def rms_norm_jvp(
    input_p: Tensor,
    input_t: Tensor | None,
    weight_p: Tensor | None,
    weight_t: Tensor | None,
    rstd: Tensor,
    normalized_shape: Sequence[int],
) -> Tensor | None:
    """The tangent of _fused_rms_norm's out: (x_t * rstd + x * rstd_t) * w
    + x * rstd * w_t."""
    result: Tensor | None = None
    if input_t is not None:
        rstd_t = rms_norm_rstd_jvp(input_p, input_t, rstd, normalized_shape)
        result = input_t * rstd + input_p * rstd_t
        if weight_p is not None:
            result = result * weight_p
    if weight_t is not None:
        extra = input_p * rstd * weight_t
        result = extra if result is None else result + extra
    return result


def rms_norm_rstd_jvp(
    input_p: Tensor, input_t: Tensor, rstd: Tensor, normalized_shape: Sequence[int]
) -> Tensor:
    """The tangent of rstd = (mean(x^2) + eps)^-1/2: -rstd^3 * mean(x * x_t)."""
    dims = list(_normalized_dims(input_p, normalized_shape))
    return -(rstd * rstd * rstd) * (input_p * input_t).mean(dims, keepdim=True)


def _fused_rms_norm_backward(
    grad_out: Tensor,
    input: Tensor,
    normalized_shape: Sequence[int],
    rstd: Tensor,
    weight: Tensor | None,
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None]:
    """(dX, dgamma) of _fused_rms_norm's out alone (a CUDA kernel in PyTorch): the
    infinitely differentiable backward without a gradient for rstd."""
    return infinitely_differentiable_native_rms_norm_backward(
        grad_out, None, input, normalized_shape, rstd, weight, output_mask
    )
