"""Nested forward mode through softmax and log_softmax (their backward operators now
have forward formulas): jvp of jvp, jacfwd of jacfwd, hessian, against torch.func
(recorded in tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradgen
from torch_oracle import oracle

from .common import assert_same, plain

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
V = np.linspace(0.5, 2.0, 6).reshape(2, 3)


def _results(lib: Any) -> dict[str, Any]:
    F = lib.func
    x, v = lib.tensor(X, dtype=lib.float64), lib.tensor(V, dtype=lib.float64)

    def f(a: Any) -> Any:
        return (a.softmax(1) * a).sum(1)

    def g(a: Any) -> Any:
        return (a.log_softmax(1) * a.exp()).sum(1)

    return {
        "jvp of jvp softmax": F.jvp(lambda a: F.jvp(f, (a,), (v,))[1], (x,), (v,)),
        "jvp of jvp log_softmax": F.jvp(lambda a: F.jvp(g, (a,), (v,))[1], (x,), (v,)),
        "jacfwd of jacfwd": F.jacfwd(F.jacfwd(lambda a: a.softmax(0)))(x[0]),
        "hessian log_softmax": F.hessian(lambda a: a.log_softmax(0).sum() * a.sum())(
            x[0]
        ),
        "jacfwd of jacrev": F.jacfwd(F.jacrev(lambda a: a.softmax(0)))(x[1]),
    }


def test_nested_forward_mode_matches_torch() -> None:
    ours = plain(_results(gradgen))
    theirs = oracle("results", lambda torch: plain(_results(torch)))
    assert_same(ours, theirs)


def test_the_forward_formula_of_softmax_backward_is_its_directional_derivative() -> (
    None
):
    """Hand check: the tangent of _softmax_backward_data along (dg, dy) equals the
    central difference of the kernel along that direction."""
    fa = gradgen.autograd.forward_ad
    rng = np.random.default_rng(0)
    g, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    dg, dy = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))

    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return b * (a - (a * b).sum(1, keepdims=True))

    h = 1e-6
    expected = (kernel(g + h * dg, y + h * dy) - kernel(g - h * dg, y - h * dy)) / (
        2 * h
    )
    with fa.dual_level():
        out = gradgen._softmax_backward_data(
            fa.make_dual(gradgen.tensor(g), gradgen.tensor(dg)),
            fa.make_dual(gradgen.tensor(y), gradgen.tensor(dy)),
            1,
            gradgen.float64,
        )
        tangent = fa.unpack_dual(out).tangent
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-6, atol=1e-8)
