"""Formula helpers of the special family: the derivatives of mvlgamma, i1, i1e, sinc
and logit (PyTorch's FunctionsManual functions of the same names)."""

from __future__ import annotations

import math

import numpy as np

from ..generated.ops import where
from ..generated.special import i0e as special_i0e
from ..tensor import Tensor
from ._common import _full

__all__ = [
    "mvlgamma_backward",
    "i1_backward",
    "i1e_backward",
    "sinc_backward",
    "infinitely_differentiable_logit_backward",
]


def mvlgamma_backward(grad: Tensor, self: Tensor, p: int) -> Tensor:
    """grad times the sum over j < p of digamma(self - j / 2)."""
    offsets = Tensor(np.arange(-p / 2.0 + 0.5, 0.5, 0.5).astype(self.dtype.numpy))
    return grad * (self.unsqueeze(-1) + offsets).digamma().sum(-1)


def _safe(self: Tensor) -> tuple[Tensor, Tensor]:
    """Where |self| exceeds the dtype's eps, and self with eps elsewhere (so that the
    formula's 1 / self stays finite where `where` discards it: its gradient would
    still be NaN there)."""
    eps = float(np.finfo(self.dtype.numpy).eps)
    not_tiny = self.abs() > eps
    return not_tiny, where(not_tiny, self, _full((), eps, self.dtype))


def i1_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """i1'(x) = i0(x) - i1(x) / x, and 1/2 at x = 0."""
    not_tiny, safe_self = _safe(self)
    gradx = safe_self.i0() - result * safe_self.reciprocal()
    return grad * where(not_tiny, gradx, _full((), 0.5, self.dtype))


def i1e_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """i1e'(x) = i0e(x) - i1e(x) (sgn(x) + 1 / x), and 1/2 at x = 0."""
    not_tiny, safe_self = _safe(self)
    gradx = special_i0e(safe_self) - result * (safe_self.sgn() + safe_self.reciprocal())
    return grad * where(not_tiny, gradx, _full((), 0.5, self.dtype))


def sinc_backward(grad: Tensor, self: Tensor) -> Tensor:
    """grad (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0."""
    self_pi = self * math.pi
    self_squared_pi = self * self * math.pi
    out = grad * ((self_pi * self_pi.cos()) - self_pi.sin()) / self_squared_pi.conj()
    return where(self_squared_pi == 0.0, _full((), 0, grad.dtype), out)


def infinitely_differentiable_logit_backward(
    grad: Tensor, self: Tensor, eps: float | None
) -> Tensor:
    """grad / (x (1 - x)) written with operators (so differentiable again): 0 outside
    [eps, 1 - eps] with eps, NaN outside [0, 1] without."""
    low, high = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    outside = math.nan if eps is None else 0.0
    inside = (self >= low).logical_and(self <= high)
    return where(inside, grad / (self * (1.0 - self)), _full((), outside, self.dtype))
