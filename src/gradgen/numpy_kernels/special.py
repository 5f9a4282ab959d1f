"""Special-function kernels: gamma and its logarithm and derivatives, the error
function's relatives, Bessel functions, the normal distribution, zeta, incomplete
gamma, xlogy, logit.

The values come from scipy.special, whose algorithms (Cephes) are the ones PyTorch's
own kernels port (aten/src/ATen/native/Math.h), so both agree to the last bits or so.
Each function computes in float64 and returns the input's floating dtype; bool and
integer inputs compute in the default float dtype, as PyTorch's (`int_to_float`).
Complex inputs are refused with PyTorch's dispatch error: its kernels are real only.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import numpy as np

from ._common import _check_broadcast, _not_implemented_for, _silently
from .elementwise import int_to_float


class _ScipySpecial:
    """scipy.special, imported when a special function first runs: importing it takes
    about as long as importing all the rest of gradgen (some 0.15 s)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(import_module("scipy.special"), name)


_scipy = _ScipySpecial()

__all__ = [
    "lgamma",
    "digamma",
    "polygamma",
    "mvlgamma",
    "erfinv",
    "erfc",
    "erfcx",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "ndtri",
    "log_ndtr",
    "entr",
    "sinc",
    "bessel_j0",
    "bessel_j1",
    "logit",
    "logit_backward",
    "xlogy",
    "xlog1py",
    "zeta",
    "igamma",
    "igammac",
    "airy_ai",
    "bessel_y0",
    "bessel_y1",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
    "orthogonal_polynomial",
]


def _real(kernel: str, self: np.ndarray) -> np.ndarray:
    """`self` as a floating array (integers in the default float dtype); complex
    input is PyTorch's "not implemented for" error of the kernel named."""
    x = int_to_float(np.asarray(self))
    if x.dtype.kind != "f":
        raise _not_implemented_for(kernel, x)
    return x


def _in_float64(function: Any, x: np.ndarray, *more: Any) -> np.ndarray:
    """function(x, *more) computed in float64, returned in x's dtype."""
    with np.errstate(all="ignore"):
        value = function(x.astype(np.float64), *more)
    return np.asarray(value).astype(x.dtype, copy=False)


def lgamma(self: np.ndarray) -> np.ndarray:
    """log |Gamma(x)|."""
    return _in_float64(_scipy.gammaln, _real("lgamma_vml_cpu", self))


def _digamma64(x: np.ndarray) -> np.ndarray:
    # PyTorch: digamma(+-0) is -+inf (scipy gives -inf for both).
    return np.where(x == 0, np.copysign(np.inf, -x), _scipy.psi(x))


def digamma(self: np.ndarray) -> np.ndarray:
    """The logarithmic derivative of Gamma."""
    return _in_float64(_digamma64, _real("digamma", self))


def polygamma(n: int, self: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma (n = 0 is digamma itself)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _real({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), self)
    if n == 0:
        return _in_float64(_digamma64, x)
    return _in_float64(lambda v: _scipy.polygamma(n, v), x)


def mvlgamma(self: np.ndarray, p: int) -> np.ndarray:
    """The multivariate log-gamma of dimension p: sum over j < p of
    lgamma(x - j / 2), plus p (p - 1) / 4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _real("arange_cpu", self)  # PyTorch's error comes from its arange

    def compute(v: np.ndarray) -> np.ndarray:
        halves = -np.arange(p, dtype=np.float64) / 2
        terms = _scipy.gammaln(v[..., np.newaxis] + halves).sum(-1)
        return terms + p * (p - 1) / 4 * np.log(np.pi)

    return _in_float64(compute, x)


def erfinv(self: np.ndarray) -> np.ndarray:
    """The inverse error function, on [-1, 1]."""
    return _in_float64(_scipy.erfinv, _real("erfinv_vml_cpu", self))


def erfc(self: np.ndarray) -> np.ndarray:
    """1 - erf(x), without the cancellation."""
    return _in_float64(_scipy.erfc, _real("erfc_vml_cpu", self))


def erfcx(self: np.ndarray) -> np.ndarray:
    """The scaled complementary error function exp(x^2) erfc(x)."""
    return _in_float64(_scipy.erfcx, _real("erfcx_cpu", self))


def i0(self: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 0."""
    return _in_float64(_scipy.i0, _real("i0_vml_cpu", self))


def i0e(self: np.ndarray) -> np.ndarray:
    """exp(-|x|) i0(x)."""
    return _in_float64(_scipy.i0e, _real("i0e_cpu", self))


def i1(self: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 1."""
    return _in_float64(_scipy.i1, _real("i1_cpu", self))


def i1e(self: np.ndarray) -> np.ndarray:
    """exp(-|x|) i1(x)."""
    return _in_float64(_scipy.i1e, _real("i1e_cpu", self))


def ndtri(self: np.ndarray) -> np.ndarray:
    """The inverse of the standard normal distribution function."""
    return _in_float64(_scipy.ndtri, _real("ndtri_cpu", self))


def log_ndtr(self: np.ndarray) -> np.ndarray:
    """The logarithm of the standard normal distribution function."""
    return _in_float64(_scipy.log_ndtr, _real("log_ndtr_cpu", self))


def entr(self: np.ndarray) -> np.ndarray:
    """-x log(x): 0 at 0, -inf below 0."""
    return _in_float64(_scipy.entr, _real("entr_cpu", self))


def sinc(self: np.ndarray) -> np.ndarray:
    """sin(pi x) / (pi x), 1 at 0; complex input as well."""
    x = int_to_float(np.asarray(self))
    with np.errstate(all="ignore"):
        return np.asarray(np.sinc(x)).astype(x.dtype, copy=False)


def bessel_j0(self: np.ndarray) -> np.ndarray:
    """The Bessel function of the first kind, order 0."""
    return _in_float64(_scipy.j0, _real("bessel_j0_cpu", self))


def bessel_j1(self: np.ndarray) -> np.ndarray:
    """The Bessel function of the first kind, order 1."""
    return _in_float64(_scipy.j1, _real("bessel_j1_cpu", self))


def logit(self: np.ndarray, eps: float | None) -> np.ndarray:
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given."""
    x = _real("logit_cpu", self)

    def compute(v: np.ndarray) -> np.ndarray:
        if eps is not None:
            v = np.clip(v, eps, 1 - eps)
        return np.log(v / (1 - v))

    return _in_float64(compute, x)


@_silently
def logit_backward(
    grad_output: np.ndarray, self: np.ndarray, eps: float | None
) -> np.ndarray:
    """grad_output / (x (1 - x)); outside [eps, 1 - eps] 0, or without eps NaN
    outside [0, 1]."""
    _check_broadcast(grad_output, self)
    x = _real("logit_backward_cpu", self)
    low, high = (0.0, 1.0) if eps is None else (eps, 1 - eps)
    outside = 0.0 if eps is not None else np.nan
    inside = (x >= low) & (x <= high)
    value = np.where(inside, grad_output / (x * (1 - x)), outside)
    return value.astype(np.result_type(grad_output, x), copy=False)


def _binary_float64(kernel: str, function: Any, self: Any, other: Any) -> np.ndarray:
    """function(self, other) computed in float64, returned in the operands' common
    dtype: the YAML entries promote them first (`type_promotion`); a Scalar operand
    is a Python number here, so the tensor operand's dtype decides."""
    _check_broadcast(self, other)
    like = self if isinstance(self, np.ndarray) else np.asarray(other)
    if like.dtype.kind != "f":
        raise _not_implemented_for(kernel, like)
    with np.errstate(all="ignore"):
        value = function(np.asarray(self, np.float64), np.asarray(other, np.float64))
    return np.asarray(value).astype(like.dtype, copy=False)


def _xlogy64(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # PyTorch: NaN y gives NaN, else 0 where x == 0, else x log y.
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


def _xlog1py64(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log1p(y)))


def xlogy(self: Any, other: Any) -> np.ndarray:
    """x log(y), 0 where x == 0 (unless y is NaN)."""
    return _binary_float64("xlogy_cpu", _xlogy64, self, other)


def xlog1py(self: Any, other: Any) -> np.ndarray:
    """x log(1 + y), 0 where x == 0 (unless y is NaN)."""
    return _binary_float64("xlog1py_cpu", _xlog1py64, self, other)


def zeta(self: Any, other: Any) -> np.ndarray:
    """The Hurwitz zeta function, sum over k >= 0 of (k + q)^-x (x = self, q = other)."""
    return _binary_float64("zeta_cpu", _scipy.zeta, self, other)


def igamma(self: Any, other: Any) -> np.ndarray:
    """The regularized lower incomplete gamma function P(a, x) (a = self, x = other)."""
    return _binary_float64("igamma_cpu", _scipy.gammainc, self, other)


def igammac(self: Any, other: Any) -> np.ndarray:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _binary_float64("igammac_cpu", _scipy.gammaincc, self, other)


def airy_ai(self: np.ndarray) -> np.ndarray:
    """The Airy function Ai."""
    return _in_float64(lambda v: _scipy.airy(v)[0], _real("airy_ai_cpu", self))


def bessel_y0(self: np.ndarray) -> np.ndarray:
    """The Bessel function of the second kind, order 0 (NaN below 0)."""
    return _in_float64(_scipy.y0, _real("bessel_y0_cpu", self))


def bessel_y1(self: np.ndarray) -> np.ndarray:
    """The Bessel function of the second kind, order 1 (NaN below 0)."""
    return _in_float64(_scipy.y1, _real("bessel_y1_cpu", self))


def modified_bessel_i0(self: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 0."""
    return _in_float64(_scipy.i0, _real("modified_bessel_i0_cpu", self))


def modified_bessel_i1(self: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind, order 1."""
    return _in_float64(_scipy.i1, _real("modified_bessel_i1_cpu", self))


def modified_bessel_k0(self: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the second kind, order 0."""
    return _in_float64(_scipy.k0, _real("modified_bessel_k0_cpu", self))


def modified_bessel_k1(self: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the second kind, order 1."""
    return _in_float64(_scipy.k1, _real("modified_bessel_k1_cpu", self))


def scaled_modified_bessel_k0(self: np.ndarray) -> np.ndarray:
    """exp(x) k0(x)."""
    return _in_float64(_scipy.k0e, _real("scaled_modified_bessel_k0_cpu", self))


def scaled_modified_bessel_k1(self: np.ndarray) -> np.ndarray:
    """exp(x) k1(x)."""
    return _in_float64(_scipy.k1e, _real("scaled_modified_bessel_k1_cpu", self))


def spherical_bessel_j0(self: np.ndarray) -> np.ndarray:
    """sin(x) / x, 1 at 0."""
    return _in_float64(
        lambda v: _scipy.spherical_jn(0, v), _real("spherical_bessel_j0_cpu", self)
    )


# The three-term recurrences p[k + 1] = a(k, x) p[k] - b(k, x) p[k - 1] of PyTorch's
# orthogonal polynomials: (p[0], p[1](x), a, b) for each kind.
_RECURRENCES: dict[str, tuple[Any, Any, Any]] = {
    "chebyshev_polynomial_t": (lambda x: x, lambda k, x: 2 * x, lambda k: 1.0),
    "chebyshev_polynomial_u": (lambda x: 2 * x, lambda k, x: 2 * x, lambda k: 1.0),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, lambda k, x: 2 * x, lambda k: 1.0),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, lambda k, x: 2 * x, lambda k: 1.0),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x: 2 * x, lambda k: 2.0 * k),
    "hermite_polynomial_he": (lambda x: x, lambda k, x: x, lambda k: float(k)),
    "laguerre_polynomial_l": (
        lambda x: 1 - x,
        lambda k, x: (2 * k + 1 - x) / (k + 1),
        lambda k: k / (k + 1),
    ),
    "legendre_polynomial_p": (
        lambda x: x,
        lambda k, x: (2 * k + 1) * x / (k + 1),
        lambda k: k / (k + 1),
    ),
}


def _recurrence(kind: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    first, a, b = _RECURRENCES[kind]
    previous, current = np.ones_like(x), first(x)
    result = np.where(n == 0, previous, np.where(n == 1, current, 0.0))
    for k in range(1, int(n.max(initial=0))):
        previous, current = current, a(k, x) * current - b(k) * previous
        result = np.where(n == k + 1, current, result)
    return result


def orthogonal_polynomial(kind: str, x: Any, n: Any) -> np.ndarray:
    """PyTorch's special_<kind>(x, n): the polynomial of integer degree n (n is
    truncated; a negative degree gives 0), by its recurrence; `shifted_` kinds take
    2x - 1. x and n are promoted to their common floating dtype first."""
    _check_broadcast(x, n)
    like = x if isinstance(x, np.ndarray) else np.asarray(n)
    if like.dtype.kind != "f":
        raise _not_implemented_for(f"{kind}_cpu", like)
    shifted = kind.startswith("shifted_")
    values = np.asarray(x, np.float64)
    if shifted:
        values = 2 * values - 1
    degrees = np.trunc(np.asarray(n, np.float64))
    values, degrees = np.broadcast_arrays(values, degrees)
    with np.errstate(all="ignore"):
        result = _recurrence(kind.removeprefix("shifted_"), values, degrees)
    return np.asarray(result).astype(like.dtype, copy=False)
