"""The special functions and the elementwise gaps beyond the operator table: dtype
promotion and errors for every input dtype, values at the edges of their domains
(logit's eps, xlogy at 0, digamma at +-0, polygamma's n), the gradients PyTorch does
not implement (igamma's, zeta's first argument, the in-place inverse hyperbolics) and
grad_fn names, each against PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.generated import functions
from torch_oracle import oracle

DTYPES = ("bool", "int64", "float32", "float64", "complex64")
SAMPLES = {
    "bool": [True, False, True],
    "int64": [3, 0, 1],
    "float32": [0.25, 0.5, 0.75],
    "float64": [0.125, 0.5, 0.875],
    "complex64": [0.5 + 0.25j, 0.25, -0.5j],
}


def special(lib: Any) -> Any:
    """torch.special or gradgen.special."""
    return lib.special


def make(lib: Any, data: Any, dtype: str, requires_grad: bool = False) -> Any:
    return lib.tensor(
        np.array(data, dtype=np.dtype(dtype)), requires_grad=requires_grad
    )


def outcome(function: Callable[[], Any]) -> tuple[str, Any]:
    """('ok', (dtype name, values)) or ('error', (type name, message))."""
    try:
        with np.errstate(all="ignore"):
            result = function()
    except Exception as error:  # noqa: BLE001 - compared with torch's outcome
        return "error", (type(error).__name__, str(error))
    if isinstance(result, tuple):
        result = result[0] * result[1]
    return "ok", (str(result.dtype).split(".")[-1], result.detach().numpy())


def assert_same_outcome(
    key: str, ours: Callable[[], Any], theirs: Callable[[Any], Any], rtol: float
) -> None:
    kind, got = outcome(ours)
    expected_kind, expected = oracle(key, lambda torch: outcome(lambda: theirs(torch)))
    assert kind == expected_kind, (got, expected)
    if kind == "error":
        assert got == expected
        return
    assert got[0] == expected[0], (got, expected)
    np.testing.assert_allclose(got[1], expected[1], rtol=rtol, atol=1e-12)


UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "lgamma": lambda lib, a: lib.lgamma(a),
    "digamma": lambda lib, a: lib.digamma(a),
    "polygamma 1": lambda lib, a: lib.polygamma(1, a),
    "polygamma 3": lambda lib, a: lib.polygamma(3, a),
    "mvlgamma": lambda lib, a: lib.mvlgamma(a + 2, 2),
    "erfinv": lambda lib, a: lib.erfinv(a),
    "erfc": lambda lib, a: lib.erfc(a),
    "i0": lambda lib, a: lib.i0(a),
    "sinc": lambda lib, a: lib.sinc(a),
    "logit": lambda lib, a: lib.logit(a),
    "logit eps": lambda lib, a: lib.logit(a, 0.2),
    "erfcx": lambda lib, a: special(lib).erfcx(a),
    "i0e": lambda lib, a: special(lib).i0e(a),
    "i1": lambda lib, a: special(lib).i1(a),
    "i1e": lambda lib, a: special(lib).i1e(a),
    "ndtr": lambda lib, a: special(lib).ndtr(a),
    "ndtri": lambda lib, a: special(lib).ndtri(a),
    "log_ndtr": lambda lib, a: special(lib).log_ndtr(a),
    "entr": lambda lib, a: special(lib).entr(a),
    "expit": lambda lib, a: special(lib).expit(a),
    "bessel_j0": lambda lib, a: special(lib).bessel_j0(a),
    "bessel_j1": lambda lib, a: special(lib).bessel_j1(a),
    "acosh": lambda lib, a: lib.acosh(a + 1),
    "asinh": lambda lib, a: lib.asinh(a),
    "atanh": lambda lib, a: lib.atanh(a * 0.5),
    "deg2rad": lambda lib, a: lib.deg2rad(a),
    "rad2deg": lambda lib, a: lib.rad2deg(a),
    "frac": lambda lib, a: lib.frac(a * 3),
    "frexp": lambda lib, a: lib.frexp(a),
    "signbit": lambda lib, a: lib.signbit(-a),
    "float_power": lambda lib, a: lib.float_power(a, 2),
    "airy_ai": lambda lib, a: special(lib).airy_ai(a),
    "bessel_y1": lambda lib, a: special(lib).bessel_y1(a + 1),
    "modified_bessel_k0": lambda lib, a: special(lib).modified_bessel_k0(a + 1),
    "scaled_modified_bessel_k1": lambda lib, a: special(lib).scaled_modified_bessel_k1(
        a + 1
    ),
    "spherical_bessel_j0": lambda lib, a: special(lib).spherical_bessel_j0(a),
    "float_power scalar base": lambda lib, a: lib.float_power(2, a),
}
# PyTorch's trigamma and Bessel approximations are exact to about 1e-9 and 1e-8 (scipy's,
# which gradgen uses, to the last bits); float32 results differ in their last bits.
RTOL = {"polygamma 1": 1e-7, "bessel_j0": 1e-7, "bessel_j1": 1e-7}


@pytest.mark.parametrize("expression", sorted(UNARY))
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_values_dtypes_and_errors_match_torch(
    expression: str, dtype: str
) -> None:
    """Integer and bool inputs compute in the default float dtype where PyTorch's do;
    complex inputs get PyTorch's error where its kernels are real only."""
    function = UNARY[expression]

    def run(lib: Any) -> Any:
        return function(lib, make(lib, SAMPLES[dtype], dtype))

    # bool, integer and float32 inputs give float32 results: their last bits differ
    rtol = RTOL.get(expression, 1e-12) if dtype == "float64" else 1e-6
    assert_same_outcome("outcome", lambda: run(gradgen), run, rtol)


BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "xlogy": lambda lib, a, b: lib.xlogy(a, b),
    "xlogy number self": lambda lib, a, b: lib.xlogy(2, b),
    "xlogy number other": lambda lib, a, b: lib.xlogy(a, 3),
    "xlog1py": lambda lib, a, b: special(lib).xlog1py(a, b),
    "zeta": lambda lib, a, b: special(lib).zeta(a + 2, b),
    "igamma": lambda lib, a, b: lib.igamma(a, b),
    "gammaincc": lambda lib, a, b: special(lib).gammaincc(a, b),
    "copysign": lambda lib, a, b: lib.copysign(a, -b),
    "ldexp": lambda lib, a, b: lib.ldexp(a, b),
    "heaviside": lambda lib, a, b: lib.heaviside(a, b),
    "nextafter": lambda lib, a, b: lib.nextafter(a, b),
    "logaddexp2": lambda lib, a, b: lib.logaddexp2(a, b),
    "clamp_min tensor": lambda lib, a, b: lib.clamp_min(a, b),
    "float_power": lambda lib, a, b: lib.float_power(a, b),
    "chebyshev_polynomial_w": lambda lib, a, b: special(lib).chebyshev_polynomial_w(
        a, b
    ),
    "hermite_polynomial_he": lambda lib, a, b: special(lib).hermite_polynomial_he(a, b),
    "laguerre_polynomial_l scalar x": lambda lib, a, b: special(
        lib
    ).laguerre_polynomial_l(0.5, b),
}


@pytest.mark.parametrize("expression", sorted(BINARY))
@pytest.mark.parametrize("left", ["int64", "float32", "float64"])
@pytest.mark.parametrize("right", ["bool", "int64", "float64", "complex64"])
def test_binary_values_dtypes_and_errors_match_torch(
    expression: str, left: str, right: str
) -> None:
    function = BINARY[expression]

    def run(lib: Any) -> Any:
        return function(
            lib, make(lib, SAMPLES[left], left), make(lib, SAMPLES[right], right)
        )

    rtol = 1e-12 if "float64" in (left, right) else 1e-6
    assert_same_outcome("outcome", lambda: run(gradgen), run, rtol)


EDGES: dict[str, Callable[[Any], Any]] = {
    "digamma at +-0 and poles": lambda lib: lib.digamma(
        lib.tensor([0.0, -0.0, -1.0, -2.5], dtype=lib.float64)
    ),
    "xlogy at 0": lambda lib: lib.xlogy(
        lib.tensor([0.0, 0.0, 0.0, 1.0], dtype=lib.float64),
        lib.tensor([0.0, float("nan"), -1.0, 0.0], dtype=lib.float64),
    ),
    "xlog1py at 0": lambda lib: lib.special.xlog1py(
        lib.tensor([0.0, 0.0, 1.0], dtype=lib.float64),
        lib.tensor([-1.0, float("nan"), -1.0], dtype=lib.float64),
    ),
    "logit outside [0, 1]": lambda lib: lib.logit(
        lib.tensor([-0.5, 0.0, 1.0, 1.5], dtype=lib.float64)
    ),
    "logit eps clamps": lambda lib: lib.logit(
        lib.tensor([-0.5, 0.0, 0.05, 1.0], dtype=lib.float64), 0.1
    ),
    "entr below 0": lambda lib: lib.special.entr(
        lib.tensor([-1.0, 0.0, 1.0], dtype=lib.float64)
    ),
    "erfinv at +-1": lambda lib: lib.erfinv(
        lib.tensor([-1.0, 1.0, 1.5], dtype=lib.float64)
    ),
    "polygamma negative n": lambda lib: lib.polygamma(-1, lib.tensor([1.0])),
    "mvlgamma p 0": lambda lib: lib.mvlgamma(lib.tensor([3.0]), 0),
    "frexp of integers": lambda lib: lib.frexp(lib.tensor([1, 2])),
    "heaviside of two dtypes": lambda lib: lib.heaviside(
        lib.tensor([1.0]), lib.tensor([1], dtype=lib.float64)
    ),
    "float_power_ of float32": lambda lib: lib.tensor([1.0]).float_power_(2),
    "float_power_ of complex exponent": lambda lib: lib.tensor(
        [1.0], dtype=lib.float64
    ).float_power_(2j),
}


@pytest.mark.parametrize("case", sorted(EDGES))
def test_edges_of_the_domains_match_torch(case: str) -> None:
    run = EDGES[case]
    assert_same_outcome("outcome", lambda: run(gradgen), run, 1e-12)


def _grad_outcome(function: Callable[[], Any]) -> tuple[str, Any]:
    try:
        with np.errstate(all="ignore"):
            grads = function()
    except Exception as error:  # noqa: BLE001 - compared with torch's outcome
        return "error", (type(error).__name__, str(error))
    return "ok", [g.numpy() for g in grads]


GRADIENTS: dict[str, Callable[[Any], Any]] = {
    "igamma input": lambda lib: _grads(lib, lambda a, b: lib.igamma(a, b)),
    "igammac other": lambda lib: _grads(lib, lambda a, b: lib.igammac(a.detach(), b)),
    "zeta input": lambda lib: _grads(lib, lambda a, b: lib.special.zeta(a + 1, b)),
    "acosh_": lambda lib: _grads(lib, lambda a, b: (a + 1).acosh_() * b),
    "heaviside": lambda lib: _grads(lib, lambda a, b: lib.heaviside(a, b)),
    "logit_backward": lambda lib: _grads(
        lib, lambda a, b: _logit_backward(lib)(a, b, None)
    ),
    "xlogy at 0": lambda lib: _grads(
        lib, lambda a, b: lib.xlogy(a * (a > 0.4), b - 0.5)
    ),
    "xlogy number other at 0": lambda lib: _grads(
        lib, lambda a, b: lib.xlogy(a * (a > 0.4), -1.0) + lib.xlogy(a * b, 0.0)
    ),
    "logit eps": lambda lib: _grads(lib, lambda a, b: lib.logit(a * 2 - 0.5, 0.2) * b),
    "logit outside": lambda lib: _grads(lib, lambda a, b: lib.logit(a * 2 - 0.5) * b),
    "i1 and i1e at 0": lambda lib: _grads(
        lib,
        lambda a, b: lib.special.i1(a * (a > 0.4)) + lib.special.i1e(b * (b > 0.4)),
    ),
    "sinc at 0": lambda lib: _grads(lib, lambda a, b: lib.sinc(a * (a > 0.4)) * b),
    "copysign at 0": lambda lib: _grads(
        lib, lambda a, b: lib.copysign(a * (a > 0.4), b - 0.5)
    ),
    "nextafter at ties": lambda lib: _grads(
        lib, lambda a, b: lib.nextafter(a, a.detach()) + lib.nextafter(b, a)
    ),
    "clamp_min tensor ties": lambda lib: _grads(
        lib, lambda a, b: lib.clamp_min(a, a.detach()) + lib.clamp_max(b, a)
    ),
    "frexp": lambda lib: _grads(lib, lambda a, b: lib.frexp(a * 8).mantissa * b),
}


def _logit_backward(lib: Any) -> Any:
    return (
        lib.ops.aten.logit_backward if lib.__name__ == "torch" else lib.logit_backward
    )


def _grads(lib: Any, function: Callable[[Any, Any], Any]) -> tuple[Any, ...]:
    """The gradients of sum(function(a, b)) for a, b in (0, 1)."""
    a = lib.tensor([0.25, 0.5, 0.75, 0.125], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([0.875, 0.375, 0.5, 0.625], dtype=lib.float64, requires_grad=True)
    out = function(a, b)
    return lib.autograd.grad(
        out.sum(), (a, b), allow_unused=True, materialize_grads=True
    )


@pytest.mark.parametrize("case", sorted(GRADIENTS))
def test_gradients_and_their_errors_match_torch(case: str) -> None:
    """PyTorch's NotImplementedError texts (igamma: input, zeta, the in-place inverse
    hyperbolics), heaviside's missing derivative, and the subgradients at 0."""
    run = GRADIENTS[case]
    got = _grad_outcome(lambda: run(gradgen))
    expected = oracle("gradients", lambda torch: _grad_outcome(lambda: run(torch)))
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1] == expected[1]
        return
    for g, e in zip(got[1], expected[1]):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)


NODES: dict[str, Callable[[Any, Any], Any]] = {
    "lgamma": lambda lib, a: lib.lgamma(a),
    "lgamma_": lambda lib, a: (a * 1).lgamma_(),
    "polygamma_": lambda lib, a: (a * 1).polygamma_(2),
    "i0": lambda lib, a: lib.i0(a),
    "special.i0": lambda lib, a: lib.special.i0(a),
    "special.i0e": lambda lib, a: lib.special.i0e(a),
    "special.i1e": lambda lib, a: lib.special.i1e(a),
    "special.erfcx": lambda lib, a: lib.special.erfcx(a),
    "special.expit": lambda lib, a: lib.special.expit(a),
    "special.gammaln": lambda lib, a: lib.special.gammaln(a),
    "special.psi": lambda lib, a: lib.special.psi(a),
    "special.ndtr": lambda lib, a: lib.special.ndtr(a),
    "special.log_softmax": lambda lib, a: lib.special.log_softmax(a, 0),
    "special.logsumexp": lambda lib, a: lib.special.logsumexp(a, 0),
    "special.round": lambda lib, a: lib.special.round(a),
    "special.xlogy": lambda lib, a: lib.special.xlogy(a, a),
    "special.xlog1py number": lambda lib, a: lib.special.xlog1py(2, a),
    "special.zeta": lambda lib, a: lib.special.zeta(a + 1, a),
    "special.bessel_j0": lambda lib, a: lib.special.bessel_j0(a),
    "xlogy number": lambda lib, a: lib.xlogy(a, 2),
    "acosh_": lambda lib, a: (a + 1).acosh_(),
    "arcsinh": lambda lib, a: lib.arcsinh(a),
    "copysign number": lambda lib, a: lib.copysign(a, -1),
    "clamp_min tensor": lambda lib, a: lib.clamp_min(a, a * 0.5),
    "clamp_max_ tensor": lambda lib, a: (a * 1).clamp_max_(a * 0.5),
    "float_power number": lambda lib, a: lib.float_power(2, a),
    "float_power_": lambda lib, a: (a * 1).float_power_(a),
    "square_": lambda lib, a: (a * 1).square_(),
    "frexp": lambda lib, a: lib.frexp(a).mantissa,
    "signbit": lambda lib, a: lib.signbit(a),
    "heaviside": lambda lib, a: lib.heaviside(a, a),
}


@pytest.mark.parametrize("case", sorted(NODES))
def test_grad_fn_names_match_torch(case: str) -> None:
    """Aliases record the node of the operator they name; in-place forms with entries
    of their own record their own class (AcoshBackward1, PolygammaBackward1)."""
    run = NODES[case]

    def name(lib: Any) -> Any:
        a = lib.tensor([0.25, 0.5, 0.75], dtype=lib.float64, requires_grad=True)
        result = run(lib, a)
        return [result.requires_grad, type(result.grad_fn).__name__]

    ours = name(gradgen)
    if ours[1] != "NoneType":
        ours[1] = gradgen_node_name(run)
    assert ours == oracle("node", name)


def gradgen_node_name(run: Callable[[Any, Any], Any]) -> str:
    """gradgen's node name as PyTorch spells it (`NotImplemented` for no formula)."""
    a = gradgen.tensor([0.25, 0.5, 0.75], dtype=gradgen.float64, requires_grad=True)
    return str(run(gradgen, a).grad_fn.name())


def test_float_power_computes_in_float64_and_complex128() -> None:
    x = gradgen.tensor([1.5, 2.0], dtype=gradgen.float32)
    assert gradgen.float_power(x, 2).dtype is gradgen.float64
    assert gradgen.float_power(x, 2j).dtype is gradgen.complex128
    assert gradgen.float_power(2, gradgen.tensor([1, 2])).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("node", ["acosh", "logit", "mish", "silu"])
def test_a_conditional_formula_gives_none_for_an_undefined_gradient(node: str) -> None:
    """`a if c else b` formulas (acosh's complex case, logit's and mish's grad mode)
    are parenthesized inside the generated `... if any_grad_defined else None`, so an
    undefined gradient gives None on both branches (it used to reach `a` as None)."""
    apply = getattr(functions, f"{node}_backward0_apply")
    saved = {"self": gradgen.tensor([0.5j + 2.0 if node == "acosh" else 0.5])}
    if node == "logit":
        saved["eps"] = None
    with gradgen.enable_grad():
        assert apply([None], (True,), **saved) == [None]
