"""Formula helpers of the elementwise family: products, powers, division, clamps."""

from __future__ import annotations

import cmath
import math
from collections.abc import Sequence

from ..dtypes import dtype
from ..grad_mode import is_grad_enabled
from ..generated.ops import imag
from ..generated.ops import real
from ..generated.ops import where
from ..tensor import Tensor
from ._common import Number, _zeros, handle_r_to_c, scalar_conj, zeros_like

__all__ = [
    "mul_tensor_backward",
    "pow_backward",
    "_to_copy_backward",
    "log1p_backward",
    "sgn_backward",
    "angle_backward",
    "pow_backward_self",
    "pow_backward_exponent",
    "div_tensor_self_backward",
    "div_tensor_other_backward",
    "atan2_backward",
    "clamp_backward",
    "clamp_backward_min_max",
    "deg2rad_backward",
    "rad2deg_backward",
    "copysign_tensor_self_backward",
]


def mul_tensor_backward(grad: Tensor, other: Tensor, self_type: dtype) -> Tensor | None:
    """d(self * other)/d(self) applied to grad: grad * conj(other)."""
    return handle_r_to_c(self_type, grad * other.conj())


def pow_backward(grad: Tensor, self: Tensor, exponent: Number) -> Tensor | None:
    """d(self ** exponent)/d(self) applied to grad."""
    if exponent == 0:
        return zeros_like(self)
    # self ** 1 is self: the common square needs no power (a pass over the data) at all.
    power = self if exponent == 2 else self ** (exponent - 1)
    derivative = (exponent * power).conj()
    if (
        is_grad_enabled()
        or derivative.shape != grad.shape
        or derivative.dtype != grad.dtype
        or type(grad)
        is not type(derivative)  # a BatchedTensor (PyTorch's subclass-like)
    ):
        grad_self = grad * derivative
    else:  # a temporary of our own: multiply in place, one array less to allocate
        grad_self = derivative.mul_(grad)
    return handle_r_to_c(self, grad_self)


def _to_copy_backward(grad: Tensor, self_options: dtype) -> Tensor:
    """Gradient of a dtype conversion: convert back (dropping an imaginary part)."""
    if grad.is_complex() and not self_options.is_complex:
        grad = real(grad)
    return grad._to_copy(dtype=self_options)


def log1p_backward(grad: Tensor, self: Tensor) -> Tensor:
    """grad / (self.conj() + 1)."""
    return grad / (self.conj() + 1)


def sgn_backward(x: Tensor, gx: Tensor, sgn: Tensor) -> Tensor:
    """The derivative of sgn (z / |z|), which is not holomorphic: for complex x,
    (gx - sgn^2 * conj(gx)) / (2 |x|), 0 where x == 0; zero for real x."""
    if x.is_complex():
        magnitude = x.abs()
        value = (gx - (sgn * sgn) * gx.conj()) / (2.0 * magnitude)
        return value.masked_fill(magnitude == 0, 0)
    return _zeros(sgn.shape, sgn.dtype)  # PyTorch's _efficientzerotensor


def angle_backward(grad: Tensor, self: Tensor) -> Tensor:
    """The derivative of angle: grad * i * z / |z|^2 for complex z (0 at z == 0),
    zero for real input."""
    if self.is_complex():
        value = grad * self / self.abs().pow(2) * 1j
        return value.masked_fill(self == 0, 0)
    return zeros_like(self)


def pow_backward_self(grad: Tensor, self: Tensor, exponent: Tensor) -> Tensor | None:
    """d(self ** exponent)/d(self) for a tensor exponent (zero where exponent == 0)."""
    derivative = grad * (exponent * self ** (exponent - 1)).conj()
    return handle_r_to_c(self, where(exponent == 0, 0.0, derivative))


def _nonnegative_real(exponent: Tensor) -> Tensor:
    if exponent.is_complex():
        return (imag(exponent) == 0) & (real(exponent) >= 0)
    return exponent >= 0


def pow_backward_exponent(
    grad: Tensor, self: Tensor | Number, exponent: Tensor, result: Tensor
) -> Tensor | None:
    """d(self ** exponent)/d(exponent) = result * log(self), taken as 0 where the base
    is 0 and the exponent a nonnegative real (PyTorch's convention)."""
    if isinstance(self, Tensor):
        derivative = (result * self.log()).conj()
        zero = (self == 0) & _nonnegative_real(exponent)
        return handle_r_to_c(exponent, grad * where(zero, 0.0, derivative))
    base = (
        complex(self)
        if exponent.is_complex() and not isinstance(self, complex)
        else self
    )
    derivative = (result * _scalar_log(base)).conj()
    if base == 0:
        derivative = where(_nonnegative_real(exponent), 0.0, derivative)
    return handle_r_to_c(exponent, grad * derivative)


def _scalar_log(value: Number) -> Number:
    """log of a Scalar base; the log of 0 is -inf (the case handled by `where` above)."""
    if isinstance(value, complex):
        return cmath.log(value) if value != 0 else complex(-math.inf, 0)
    if value > 0:
        return math.log(value)
    return -math.inf if value == 0 else math.nan  # a negative real base: nan (C's log)


def div_tensor_self_backward(
    grad: Tensor,
    other: Tensor | Number,
    self_st: dtype,
    rounding_mode: str | None = None,
) -> Tensor | None:
    """d(self / other)/d(self) applied to grad: grad / conj(other); zero when the
    quotient is rounded (its derivative is zero almost everywhere)."""
    if rounding_mode is not None:
        return _zeros(grad.shape, self_st)
    conj_other = other.conj() if isinstance(other, Tensor) else scalar_conj(other)
    return handle_r_to_c(self_st, grad / conj_other)


def div_tensor_other_backward(
    grad: Tensor, self: Tensor, other: Tensor, rounding_mode: str | None = None
) -> Tensor | None:
    """d(self / other)/d(other) applied to grad: -grad * conj(self / other / other)."""
    if rounding_mode is not None:
        return _zeros(grad.shape, other.dtype)
    result = -grad * ((self / other) / other).conj()
    return handle_r_to_c(other, result)


def atan2_backward(
    grad: Tensor | None, self: Tensor, other: Tensor, output_mask: Sequence[bool]
) -> tuple[Tensor | None, Tensor | None]:
    """Gradients of atan2(self, other): (other, -self) / (self^2 + other^2)."""
    if grad is None:
        return None, None
    recip = 1 / (self * self + other * other)
    return (
        grad * other * recip if output_mask[0] else None,
        grad * -self * recip if output_mask[1] else None,
    )


def clamp_backward(
    grad: Tensor,
    self: Tensor,
    min: Number | None,
    max: Number | None,
) -> Tensor:
    """grad where min <= self <= max, else zero (the subgradient 1 at the bounds)."""
    if max is not None and min is not None:
        return where((self >= min).logical_and(self <= max), grad, 0.0)
    if min is not None:
        return where(self >= min, grad, 0.0)
    if max is not None:
        return where(self <= max, grad, 0.0)
    return grad


def clamp_backward_min_max(
    grad: Tensor | None,
    self: Tensor,
    min: Tensor | None,
    max: Tensor | None,
    grad_input_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None]:
    """The gradients of clamp's Tensor bounds: each gets grad where it was the value
    taken (min when self < min, unless min > max; max when self > max or max < min)."""
    grad_min: Tensor | None = None
    grad_max: Tensor | None = None
    if grad is None:
        return grad_min, grad_max
    if max is not None and min is not None:
        if grad_input_mask[0]:
            grad_min = where((self < min).logical_and(min < max), grad, 0.0)
        if grad_input_mask[1]:
            grad_max = where((self > max).logical_or(max < min), grad, 0.0)
    elif min is not None and grad_input_mask[0]:
        grad_min = where(self < min, grad, 0.0)
    elif max is not None and grad_input_mask[1]:
        grad_max = where(self > max, grad, 0.0)
    return grad_min, grad_max


def deg2rad_backward(grad: Tensor) -> Tensor:
    """deg2rad is x * pi / 180: grad * (pi / 180)."""
    return grad * (math.pi / 180.0)


def rad2deg_backward(grad: Tensor) -> Tensor:
    """rad2deg is x * 180 / pi: grad * (180 / pi)."""
    return grad * (180.0 / math.pi)


def copysign_tensor_self_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """copysign(self, other) is self or -self: grad times result / self (+1 or -1),
    zero where self == 0."""
    ratio = (result / self).masked_fill(self == 0, 0)
    return grad * ratio
