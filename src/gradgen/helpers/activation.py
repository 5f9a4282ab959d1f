"""Formula helpers of the activation family (double backwards), softmax included."""

from __future__ import annotations


from ..generated.ops import cat as _cat
from ..generated.ops import elu_backward as _elu_backward
from ..generated.ops import glu_backward as _glu_backward
from ..generated.ops import sigmoid_backward as _sigmoid_backward
from ..generated.ops import softplus as _softplus
from ..factories import ones_like as _ones_like
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
    "glu_jvp",
    "glu_backward_jvp",
    "glu_double_backward",
    "glu_double_backward_grad_output",
    "infinitely_differentiable_native_dropout_backward",
    "native_dropout_double_backward",
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


def _halves(x: Tensor, dim: int) -> tuple[Tensor, Tensor, int]:
    """The first and second halves of x along dim (wrapped)."""
    if dim < 0:
        dim += x.dim()
    half = x.shape[dim] // 2
    return x.narrow(dim, 0, half), x.narrow(dim, half, half), dim


def glu_jvp(glu: Tensor, x: Tensor, dx: Tensor, dim: int) -> Tensor:
    """The tangent of glu(x) = a * sigmoid(b): sigmoid(b) * da + glu * (1 - sigmoid(b))
    * db."""
    _, b, dim = _halves(x, dim)
    da, db, _ = _halves(dx, dim)
    sigmoid_b = b.sigmoid()
    return sigmoid_b * da + glu * (1 - sigmoid_b) * db


def glu_backward_jvp(
    grad_x: Tensor,
    grad_glu: Tensor,
    x: Tensor,
    dgrad_glu: Tensor,
    dx: Tensor,
    dim: int,
) -> Tensor:
    """The tangent of glu_backward(grad_glu, x) = [g * s, g * a * s * (1 - s)] (s the
    sigmoid of the second half b), for tangents dgrad_glu and dx."""
    a, b, dim = _halves(x, dim)
    da, db, _ = _halves(dx, dim)
    s = b.sigmoid()
    ds = s * (1 - s)
    first = dgrad_glu * s + grad_glu * ds * db
    second = (dgrad_glu * a + grad_glu * da) * ds + grad_glu * a * ds * (1 - 2 * s) * db
    return _cat([first, second], dim)


def glu_double_backward(
    grad: Tensor, grad_output: Tensor, input: Tensor, dim: int
) -> Tensor:
    """The gradient of glu_backward(grad_output, input) with respect to input, for the
    cotangent grad = [ga, gb]: [gb * gO * s', ga * gO * s' + gb * gO * a * s'']
    (s' = s * (1 - s), s'' = s' * (1 - 2s), s the sigmoid of the second half b)."""
    a, b, dim = _halves(input, dim)
    grad_first, grad_second, _ = _halves(grad, dim)
    s = b.sigmoid()
    ds = s * (1 - s)
    grad_a = grad_second * grad_output * ds
    grad_b = grad_first * grad_output * ds + grad_second * grad_output * a * ds * (
        1 - 2 * s
    )
    return _cat([grad_a, grad_b], dim)


def glu_double_backward_grad_output(grad: Tensor, input: Tensor, dim: int) -> Tensor:
    """The gradient of glu_backward(grad_output, input) with respect to grad_output
    (it is linear in it): the two halves of grad * glu_backward(1, input), added."""
    first_half, _, dim = _halves(input, dim)
    ones = _ones_like(first_half.detach())
    products = grad * _glu_backward(ones, input, dim)
    first, second, _ = _halves(products, dim)
    return first + second


def infinitely_differentiable_native_dropout_backward(
    grad: Tensor, mask: Tensor, scale: float
) -> Tensor:
    """grad * mask * scale with operators (so it can be differentiated)."""
    return grad * (mask.to(grad.dtype) * scale)


def native_dropout_double_backward(
    ggI: Tensor, grad: Tensor, mask: Tensor, scale: float
) -> Tensor:
    """native_dropout_backward is linear in grad_output: ggI * mask * scale."""
    return ggI.to(grad.dtype) * (mask.to(grad.dtype) * scale)
