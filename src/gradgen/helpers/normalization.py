"""Formula helpers of the normalization family: layer norm."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..grad_mode import is_grad_enabled
from ..tensor import Tensor

__all__ = ["layer_norm_jvp", "layer_norm_double_backward"]


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
