"""Composites of the special family: PyTorch's `special_*` aliases (CompositeImplicit
functions that call the operator they name, so they record its node: special_expit
gives a SigmoidBackward0) and special_ndtr, written with erf."""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from ..generated import operators, ops  # read at call time (the generated tie)

__all__ = [
    "special_expm1",
    "special_exp2",
    "special_psi",
    "special_digamma",
    "special_gammaln",
    "special_erf",
    "special_erfc",
    "special_erfinv",
    "special_ndtr",
    "special_xlogy",
    "special_i0",
    "special_logit",
    "special_polygamma",
    "special_logsumexp",
    "special_expit",
    "special_sinc",
    "special_round",
    "special_log1p",
    "special_log_softmax",
    "special_gammainc",
    "special_gammaincc",
    "special_multigammaln",
    "special_softmax",
]


def special_expm1(self: Tensor) -> Tensor:
    """An alias of expm1."""
    return ops.expm1(self)


def special_exp2(self: Tensor) -> Tensor:
    """An alias of exp2."""
    return ops.exp2(self)


def special_psi(self: Tensor) -> Tensor:
    """An alias of digamma."""
    return ops.digamma(self)


def special_digamma(self: Tensor) -> Tensor:
    """An alias of digamma."""
    return ops.digamma(self)


def special_gammaln(self: Tensor) -> Tensor:
    """An alias of lgamma."""
    return ops.lgamma(self)


def special_erf(self: Tensor) -> Tensor:
    """An alias of erf."""
    return ops.erf(self)


def special_erfc(self: Tensor) -> Tensor:
    """An alias of erfc."""
    return ops.erfc(self)


def special_erfinv(self: Tensor) -> Tensor:
    """An alias of erfinv."""
    return ops.erfinv(self)


def special_ndtr(self: Tensor) -> Tensor:
    """The standard normal distribution function (1 + erf(x / sqrt(2))) / 2, with
    PyTorch's Scalar overloads (its node is MulBackward1, after AddBackward1)."""
    scaled = operators.mul_Scalar.call(self, math.sqrt(0.5))
    result: Tensor = operators.mul_Scalar.call(
        operators.add_Scalar.call(ops.erf(scaled), 1, 1), 0.5
    )
    return result


def special_xlogy(self: Any, other: Any) -> Tensor:
    """An alias of xlogy (each of its overloads)."""
    return ops.xlogy(self, other)


def special_i0(self: Tensor) -> Tensor:
    """An alias of i0."""
    return ops.i0(self)


def special_logit(self: Tensor, eps: float | None = None) -> Tensor:
    """An alias of logit."""
    return ops.logit(self, eps)


def special_polygamma(n: int, self: Tensor) -> Tensor:
    """An alias of polygamma."""
    return ops.polygamma(n, self)


def special_logsumexp(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """An alias of logsumexp."""
    return ops.logsumexp(self, dim, keepdim)


def special_expit(self: Tensor) -> Tensor:
    """An alias of sigmoid."""
    return ops.sigmoid(self)


def special_sinc(self: Tensor) -> Tensor:
    """An alias of sinc."""
    return ops.sinc(self)


def special_round(self: Tensor, decimals: int = 0) -> Tensor:
    """An alias of round (with decimals)."""
    return ops.round(self, decimals=decimals)


def special_log1p(self: Tensor) -> Tensor:
    """An alias of log1p."""
    return ops.log1p(self)


def special_log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """An alias of log_softmax."""
    return ops.log_softmax(self, dim, dtype=dtype)


def special_gammainc(self: Tensor, other: Tensor) -> Tensor:
    """An alias of igamma."""
    return ops.igamma(self, other)


def special_gammaincc(self: Tensor, other: Tensor) -> Tensor:
    """An alias of igammac."""
    return ops.igammac(self, other)


def special_multigammaln(self: Tensor, p: int) -> Tensor:
    """An alias of mvlgamma."""
    return ops.mvlgamma(self, p)


def special_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """An alias of softmax."""
    return ops.softmax(self, dim, dtype)
