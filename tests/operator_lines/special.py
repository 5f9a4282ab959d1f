"""Operator-table lines of the special family of native_functions.yaml."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .common import Line, _f64


def _special(lib: Any, name: str) -> Callable[..., Any]:
    """torch.special.NAME, gradgen.special.NAME (python_module: special)."""
    return getattr(lib.special, name)


def _logit_backward(lib: Any) -> Callable[..., Any]:
    """logit_backward: torch.ops.aten's, gradgen's function."""
    return (
        lib.ops.aten.logit_backward if lib.__name__ == "torch" else lib.logit_backward
    )


def _orders(lib: Any) -> Any:
    """Fixed first arguments of igamma and zeta (their gradients for it are not
    implemented, in PyTorch either)."""
    return _f64(lib, [0.5, 1.5, 2.5, 1.0])


def _unit(a: Any) -> Any:
    return a * 0.2 + 0.5  # (-2, 2) -> (0.1, 0.9)


LINES: dict[str, Line] = {
    "erfc": Line(lambda lib, a: lib.erfc(a) * a.erfc(), ((5,),)),
    "erfc_": Line(lambda lib, a: lib.erfc_(a * 1.0) * (a * 0.5).erfc_(), ((5,),)),
    "xlogy.Tensor": Line(
        lambda lib, a, b: lib.xlogy(a, b) * a.xlogy(b), ((3, 1), (4,)), positive=True
    ),
    "xlogy.Scalar_Self": Line(lambda lib, a: lib.xlogy(2.5, a), ((4,),), positive=True),
    "xlogy.Scalar_Other": Line(
        lambda lib, a: lib.xlogy(a, 1.5) * a.xlogy(0.5), ((4,),)
    ),
    "xlogy_.Tensor": Line(
        lambda lib, a, b: (a * 1.0).xlogy_(b) + lib.xlogy_(a * a, b),
        ((4,), (4,)),
        positive=True,
    ),
    "xlogy_.Scalar_Other": Line(
        lambda lib, a: (a * 1.0).xlogy_(2.0) * lib.xlogy_(a * 1.0, 0.5), ((4,),)
    ),
    "mvlgamma": Line(
        lambda lib, a: lib.mvlgamma(a + 2.0, 3) * a.mvlgamma(1),
        ((4,),),
        positive=True,
    ),
    "mvlgamma_": Line(lambda lib, a: (a + 2.0).mvlgamma_(2), ((4,),), positive=True),
    "logit": Line(lambda lib, a: lib.logit(_unit(a)) * _unit(a).logit(0.2), ((5,),)),
    "logit_": Line(
        lambda lib, a: lib.logit_(_unit(a)) * _unit(a).logit_(0.15), ((5,),)
    ),
    "logit_backward": Line(  # PyTorch has no formula for it: values only
        lambda lib, a: _logit_backward(lib)(_orders(lib), _unit(_orders(lib)), 0.2) * a
        + _logit_backward(lib)(_orders(lib), _f64(lib, [0.1, 0.5, 0.9, 0.3])) * a,
        ((4,),),
    ),
    "sinc": Line(lambda lib, a: lib.sinc(a) * a.sinc(), ((5,),)),
    "sinc_": Line(lambda lib, a: lib.sinc_(a * 1.0) * (a * 2.0).sinc_(), ((5,),)),
    "lgamma": Line(lambda lib, a: lib.lgamma(a) * a.lgamma(), ((5,),)),
    "lgamma_": Line(lambda lib, a: (a * 1.0).lgamma_(), ((5,),)),
    "digamma": Line(
        lambda lib, a: lib.digamma(a) * a.digamma(), ((5,),), positive=True, rtol=1e-8
    ),
    "digamma_": Line(
        lambda lib, a: (a * 1.0).digamma_(), ((5,),), positive=True, rtol=1e-8
    ),
    "polygamma": Line(
        lambda lib, a: lib.polygamma(1, a) * a.polygamma(2) + lib.polygamma(0, a),
        ((5,),),
        positive=True,
        rtol=1e-8,
    ),
    "polygamma_": Line(
        lambda lib, a: (a * 1.0).polygamma_(1),
        ((5,),),
        positive=True,
        rtol=1e-8,
        forward=False,
    ),
    "erfinv": Line(lambda lib, a: lib.erfinv(a * 0.4) * (a * 0.3).erfinv(), ((5,),)),
    "erfinv_": Line(lambda lib, a: (a * 0.4).erfinv_(), ((5,),)),
    "i0": Line(lambda lib, a: lib.i0(a) * a.i0(), ((5,),)),
    "i0_": Line(lambda lib, a: lib.i0_(a * 1.0) * (a * 0.5).i0_(), ((5,),)),
    "igamma": Line(
        lambda lib, a: lib.igamma(_orders(lib), a) * _orders(lib).igamma(a * 2.0),
        ((4,),),
        positive=True,
        forward=False,
    ),
    "igamma_": Line(
        lambda lib, a: _orders(lib).igamma_(a), ((4,),), positive=True, forward=False
    ),
    "igammac": Line(
        lambda lib, a: lib.igammac(_orders(lib), a) * _orders(lib).igammac(a * 2.0),
        ((4,),),
        positive=True,
        forward=False,
    ),
    "igammac_": Line(
        lambda lib, a: _orders(lib).igammac_(a), ((4,),), positive=True, forward=False
    ),
    "special_entr": Line(
        lambda lib, a: _special(lib, "entr")(a), ((5,),), positive=True
    ),
    "special_ndtri": Line(lambda lib, a: _special(lib, "ndtri")(_unit(a)), ((5,),)),
    "special_log_ndtr": Line(lambda lib, a: _special(lib, "log_ndtr")(a), ((5,),)),
    "special_expm1": Line(lambda lib, a: _special(lib, "expm1")(a), ((5,),)),
    "special_exp2": Line(lambda lib, a: _special(lib, "exp2")(a), ((5,),)),
    "special_psi": Line(
        lambda lib, a: _special(lib, "psi")(a), ((5,),), positive=True, rtol=1e-8
    ),
    "special_digamma": Line(
        lambda lib, a: _special(lib, "digamma")(a), ((5,),), positive=True, rtol=1e-8
    ),
    "special_gammaln": Line(lambda lib, a: _special(lib, "gammaln")(a), ((5,),)),
    "special_erf": Line(lambda lib, a: _special(lib, "erf")(a), ((5,),)),
    "special_erfc": Line(lambda lib, a: _special(lib, "erfc")(a), ((5,),)),
    "special_erfcx": Line(lambda lib, a: _special(lib, "erfcx")(a), ((5,),)),
    "special_erfinv": Line(lambda lib, a: _special(lib, "erfinv")(a * 0.4), ((5,),)),
    "special_ndtr": Line(lambda lib, a: _special(lib, "ndtr")(a), ((5,),)),
    "special_xlog1py": Line(
        lambda lib, a, b: _special(lib, "xlog1py")(a, b), ((3, 1), (4,)), positive=True
    ),
    "special_xlog1py.self_scalar": Line(
        lambda lib, a: _special(lib, "xlog1py")(2.5, a), ((4,),), positive=True
    ),
    "special_xlog1py.other_scalar": Line(
        lambda lib, a: _special(lib, "xlog1py")(a, 1.5)
        * _special(lib, "xlog1py")(a, -0.5),
        ((4,),),
    ),
    "special_xlogy": Line(
        lambda lib, a, b: _special(lib, "xlogy")(a, b), ((3, 1), (4,)), positive=True
    ),
    "special_xlogy.self_scalar": Line(
        lambda lib, a: _special(lib, "xlogy")(2.5, a), ((4,),), positive=True
    ),
    "special_xlogy.other_scalar": Line(
        lambda lib, a: _special(lib, "xlogy")(a, 1.5), ((4,),)
    ),
    "special_zeta": Line(
        lambda lib, a: _special(lib, "zeta")(_orders(lib) + 1.5, a),
        ((4,),),
        positive=True,
        forward=False,
    ),
    "special_zeta.self_scalar": Line(
        lambda lib, a: _special(lib, "zeta")(3.0, a),
        ((4,),),
        positive=True,
        forward=False,
    ),
    "special_zeta.other_scalar": Line(  # its one gradient is not implemented
        lambda lib, a: _special(lib, "zeta")(_orders(lib) + 1.5, 1.5) * a, ((4,),)
    ),
    "special_i0": Line(lambda lib, a: _special(lib, "i0")(a), ((5,),)),
    "special_i0e": Line(lambda lib, a: _special(lib, "i0e")(a), ((5,),)),
    "special_i1": Line(lambda lib, a: _special(lib, "i1")(a), ((5,),)),
    "special_i1e": Line(lambda lib, a: _special(lib, "i1e")(a), ((5,),)),
    "special_logit": Line(
        lambda lib, a: _special(lib, "logit")(_unit(a), 0.15)
        * _special(lib, "logit")(_unit(a)),
        ((5,),),
    ),
    "special_polygamma": Line(
        lambda lib, a: _special(lib, "polygamma")(1, a),
        ((5,),),
        positive=True,
        rtol=1e-8,
    ),
    "special_logsumexp": Line(
        lambda lib, a: _special(lib, "logsumexp")(a, 1)
        * _special(lib, "logsumexp")(a, [0, 1], True),
        ((3, 4),),
    ),
    "special_expit": Line(lambda lib, a: _special(lib, "expit")(a), ((5,),)),
    "special_sinc": Line(lambda lib, a: _special(lib, "sinc")(a), ((5,),)),
    "special_round": Line(
        lambda lib, a: _special(lib, "round")(a, decimals=1) * a
        + _special(lib, "round")(a) * a,
        ((5,),),
    ),
    "special_log1p": Line(
        lambda lib, a: _special(lib, "log1p")(a), ((5,),), positive=True
    ),
    "special_log_softmax": Line(
        lambda lib, a: _special(lib, "log_softmax")(a, 1)
        + _special(lib, "log_softmax")(a, 0, dtype=lib.float64),
        ((3, 4),),
    ),
    "special_gammainc": Line(
        lambda lib, a: _special(lib, "gammainc")(_orders(lib), a),
        ((4,),),
        positive=True,
        forward=False,
    ),
    "special_gammaincc": Line(
        lambda lib, a: _special(lib, "gammaincc")(_orders(lib), a),
        ((4,),),
        positive=True,
        forward=False,
    ),
    "special_multigammaln": Line(
        lambda lib, a: _special(lib, "multigammaln")(a + 2.0, 2),
        ((4,),),
        positive=True,
    ),
    "special_softmax": Line(
        lambda lib, a: _special(lib, "softmax")(a, 1)
        * _special(lib, "softmax")(a, 0, lib.float64),
        ((3, 4),),
    ),
    "special_bessel_j0": Line(  # not differentiable (as in PyTorch): values only
        lambda lib, a: _special(lib, "bessel_j0")(_orders(lib) * 3.0) * a,
        ((4,),),
        rtol=1e-6,
    ),
    "special_bessel_j1": Line(
        lambda lib, a: _special(lib, "bessel_j1")(_orders(lib) * 3.0) * a,
        ((4,),),
        rtol=1e-6,
    ),
}


# PyTorch's other special functions have no derivatives: each line checks the values
# (against torch) of fixed inputs, times the input `a`.
_POINTS = (0.25, 0.5, 1.5, 3.0)
_BESSELS = (
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
)
_POLYNOMIALS = (
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
)
# Degrees (a negative one gives 0, 2.7 is truncated) and points inside and outside
# [-1, 1]; recurrences and PyTorch's cos(n acos x) agree to about 1e-14.
_X = (-0.3, 0.45, 1.0, 1.7, 0.2)
_N = (8.0, 3.0, 9.0, 4.0, -1.0)


def _bessel_line(name: str) -> Line:
    return Line(
        lambda lib, a: _special(lib, name)(_f64(lib, _POINTS)) * a,
        ((4,),),
        rtol=1e-6,
    )


def _polynomial_lines(name: str) -> dict[str, Line]:
    def function(lib: Any) -> Callable[..., Any]:
        return _special(lib, name)

    return {
        f"special_{name}": Line(
            lambda lib, a: function(lib)(_f64(lib, _X), _f64(lib, _N)) * a,
            ((5,),),
            rtol=1e-9,
        ),
        f"special_{name}.x_scalar": Line(
            lambda lib, a: function(lib)(0.7, _f64(lib, _N)) * a, ((5,),), rtol=1e-9
        ),
        f"special_{name}.n_scalar": Line(
            lambda lib, a: function(lib)(_f64(lib, _X), 2.7) * a, ((5,),), rtol=1e-9
        ),
    }


LINES.update({f"special_{name}": _bessel_line(name) for name in _BESSELS})
for _name in _POLYNOMIALS:
    LINES.update(_polynomial_lines(_name))
