"""Formula helpers of the activation family (double backwards), softmax included."""

from __future__ import annotations


from ..generated.ops import elu_backward as _elu_backward
from ..generated.ops import sigmoid_backward as _sigmoid_backward
from ..generated.ops import softplus as _softplus
from ..tensor import Tensor
from ._common import Number

__all__ = [
    "gelu_double_backward",
    "infinitely_differentiable_silu_backward",
    "softmax_double_backward",
    "elu_double_backward",
    "softplus_double_backward",
    "log_sigmoid_double_backward",
    "infinitely_differentiable_mish_backward",
]


def gelu_double_backward(
    ggI: Tensor, gO: Tensor, input: Tensor, approximate: str
) -> Tensor:
    """The derivative of gelu_backward(gO, input) with respect to input, applied to
    ggI: ggI * gO * gelu''(input)."""
    if approximate == "tanh":
        beta = 2.0**0.5 * _M_2_SQRTPI * 0.5
        kappa = 0.044715
        inner = beta * (input + kappa * input.pow(3))
        tanh_inner = inner.tanh()
        sech_inner = inner.cosh().reciprocal()

        f = 0.5 * input
        g = 1 - tanh_inner * tanh_inner
        h = beta * (1 + 3 * kappa * input * input)

        f_prime_gh = 0.5 * g * h

        g_prime = (2 * sech_inner) * (-sech_inner * tanh_inner) * h
        g_prime_fh = f * h * g_prime

        h_prime = 6 * kappa * input * beta
        h_prime_fg = f * g * h_prime

        # left derivative f'gh; right derivative f'gh + g'fh + h'fg
        return ggI * gO * (f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg)  # type: ignore[no-any-return]
    beta = _M_2_SQRTPI * _M_SQRT1_2 * 0.5
    input_sq = input * input
    pdf = beta * (-0.5 * input_sq).exp()
    dgrad_dinput = 2 * pdf - input_sq * pdf
    return ggI * gO * dgrad_dinput


def infinitely_differentiable_silu_backward(
    grad_output: Tensor, input: Tensor
) -> Tensor:
    """grad_output * silu'(input), written with operators so it can be differentiated."""
    sigmoid = input.sigmoid()
    return grad_output * sigmoid * (1.0 + input * (1.0 - sigmoid))


_M_SQRT1_2 = 0.70710678118654752440  # 1/sqrt(2)


_M_2_SQRTPI = 1.12837916709551257390  # 2/sqrt(pi)


def softmax_double_backward(
    grad: Tensor, grad_output: Tensor, dim: int, output: Tensor
) -> Tensor:
    """The gradient of _softmax_backward_data with respect to the softmax output."""
    return (
        grad_output * grad
        - (output * grad_output).sum(dim, True) * grad
        - grad_output * (output * grad).sum(dim, True)
    )


def elu_double_backward(
    grad: Tensor,
    grad_output: Tensor,
    alpha: Number,
    scale: Number,
    input_scale: Number,
    is_result: bool,
    self_or_result: Tensor,
) -> Tensor:
    """The derivative of elu_backward with respect to self_or_result, applied to grad:
    where the input is negative, elu'' = input_scale * elu' (from the input) or
    d(input_scale * (y + alpha * scale))/dy = input_scale (from the result)."""
    negative: Tensor = self_or_result < 0
    scaled = grad * grad_output * input_scale
    if is_result:
        return scaled * negative
    derivative: Tensor = _elu_backward(
        scaled, alpha, scale, input_scale, is_result, self_or_result
    )
    return derivative * negative


def softplus_double_backward(
    grad: Tensor, input: Tensor, beta: Number, threshold: Number
) -> Tensor:
    """d(sigmoid(beta * x))/dx applied to grad: beta * sigmoid'(beta * x), 0 where
    beta * x is past the threshold (softplus is x there)."""
    x = input * beta
    return _sigmoid_backward(grad, x.sigmoid()) * (x < threshold) * beta


def log_sigmoid_double_backward(grad: Tensor, input: Tensor) -> Tensor:
    """d(1 - sigmoid(x))/dx applied to grad: (sigmoid(x) - 1) * sigmoid(x) * grad."""
    z = input.sigmoid()
    return grad * (z - 1) * z


def infinitely_differentiable_mish_backward(
    grad_output: Tensor, input: Tensor
) -> Tensor:
    """grad_output * mish'(input) with operators (so it can be differentiated):
    tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2)."""
    sigmoid = input.sigmoid()
    tanh_softplus = _softplus(input).tanh()
    return grad_output * (
        tanh_softplus + input * sigmoid * (1 - tanh_softplus * tanh_softplus)
    )
