"""gradgen.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against
torch.autograd.functional: values, create_graph, strict mode's messages, both
strategies and vectorize (recorded in tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradgen
from torch_oracle import oracle

from .common import X, Y, assert_same, errors, plain


def _inputs(lib: Any) -> tuple[Any, Any]:
    return lib.tensor(X, dtype=lib.float64), lib.tensor(Y, dtype=lib.float64)


def _scalar(a: Any) -> Any:
    return (a.sin() * a.exp()).sum()


def _vector(a: Any, b: Any) -> Any:
    return (b @ a.sin()) * a[:2].exp()


def _results(lib: Any) -> dict[str, Any]:
    F = lib.autograd.functional
    x, y = _inputs(lib)
    v2, v3 = lib.ones(2, dtype=lib.float64), lib.tensor(
        [1.0, 2.0, 3.0], dtype=lib.float64
    )
    w = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    return {
        "jacobian": F.jacobian(_vector, (x, y)),
        "jacobian single": F.jacobian(lambda a: a.tanh(), x),
        "jacobian tuple out": F.jacobian(lambda a: (a.sin(), a.sum()), x),
        "jacobian vectorize": F.jacobian(lambda a: a.tanh(), x, vectorize=True),
        "jacobian forward": F.jacobian(
            lambda a: a.tanh() * a, x, vectorize=True, strategy="forward-mode"
        ),
        "jacobian create_graph": F.jacobian(lambda a: a * a, w, create_graph=True),
        "hessian": F.hessian(_scalar, x),
        # (PyTorch's result requires grad here, a leak of its implementation.)
        "hessian forward": F.hessian(
            _scalar, x, vectorize=True, outer_jacobian_strategy="forward-mode"
        ).detach(),
        "hessian tuple": F.hessian(lambda a, b: (b @ a.sin()).sum() * a.sum(), (x, y)),
        "vjp": F.vjp(_vector, (x, y), v2),
        "vjp scalar": F.vjp(_scalar, x),
        "vjp create_graph": F.vjp(lambda a: a * a, w, v3, create_graph=True),
        "jvp": F.jvp(lambda a: a.sin() * a, x, v3),
        "jvp tuple": F.jvp(_vector, (x, y), (v3, y)),
        "hvp": F.hvp(_scalar, x, v3),
        "vhp": F.vhp(_scalar, x, v3),
        "hvp create_graph": F.hvp(lambda a: (a**3).sum(), w, v3, create_graph=True),
    }


def test_results_match_torch() -> None:
    ours = plain(_results(gradgen))
    theirs = oracle("results", lambda torch: plain(_results(torch)))
    assert_same(ours, theirs)


def _error_calls(lib: Any) -> dict[str, Any]:
    F = lib.autograd.functional
    x, y = _inputs(lib)
    v2, v3 = lib.ones(2, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
    return {
        "strict independent": lambda: F.jacobian(
            lambda a, b: a * 2, (x, y), strict=True
        ),
        "strict output": lambda: F.vjp(lambda a: a.detach(), x, v3, strict=True),
        "strict linear hessian": lambda: F.hessian(
            lambda a: (a * 2).sum(), x, strict=True
        ),
        "strict vhp": lambda: F.vhp(lambda a: (a * 2).sum(), x, v3, strict=True),
        "strict hvp": lambda: F.hvp(lambda a: (a * 2).sum(), x, v3, strict=True),
        "strict jvp": lambda: F.jvp(lambda a: a.detach(), x, v3, strict=True),
        "strict create_graph": lambda: F.vjp(
            lambda a: a * 2, x, v3, strict=True, create_graph=True
        ),
        "v none": lambda: F.vjp(lambda a: a, x),
        "jvp v none": lambda: F.jvp(lambda a: a, x),
        "v size": lambda: F.vjp(lambda a: a, x, v2),
        "v tuple length": lambda: F.jvp(lambda a, b: a, (x, y), (v3,)),
        "v entry size": lambda: F.jvp(lambda a, b: a, (x, y), (v3, v3)),
        "hessian not single": lambda: F.hessian(lambda a: a, x),
        "hessian tuple": lambda: F.hessian(lambda a: (a.sum(), a.sum()), x),
        "hvp not single": lambda: F.hvp(lambda a: a, x, v3),
        "inputs type": lambda: F.jacobian(lambda a: a, [x]),
        "inputs tuple type": lambda: F.jacobian(lambda a: a, (x, 1)),
        "strategy": lambda: F.jacobian(lambda a: a, x, strategy="sideways"),
        "forward create_graph": lambda: F.jacobian(
            lambda a: a, x, create_graph=True, strategy="forward-mode"
        ),
        "forward strict": lambda: F.jacobian(
            lambda a: a, x, strict=True, vectorize=True, strategy="forward-mode"
        ),
        "forward loop": lambda: F.jacobian(lambda a: a, x, strategy="forward-mode"),
        "vectorize strict": lambda: F.jacobian(
            lambda a: a, x, strict=True, vectorize=True
        ),
    }


def test_error_messages_match_torch() -> None:
    ours = errors(_error_calls(gradgen))
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(ours, theirs)


def test_hvp_of_a_quadratic_form_is_the_symmetrised_matrix_times_v() -> None:
    """Hand math: f(x) = x^T A x, H = A + A^T; hvp and vhp give H v and v^T H."""
    a = np.array([[1.0, 2.0], [3.0, 5.0]])
    matrix, v = gradgen.tensor(a), gradgen.tensor(np.array([1.0, -1.0]))
    x = gradgen.tensor(np.array([0.5, 2.0]))
    F = gradgen.autograd.functional
    hessian = a + a.T
    assert np.allclose(
        F.hvp(lambda t: t @ (matrix @ t), x, v)[1].numpy(), hessian @ [1, -1]
    )
    assert np.allclose(
        F.vhp(lambda t: t @ (matrix @ t), x, v)[1].numpy(), [1, -1] @ hessian
    )


def test_vectorize_runs_the_rows_as_one_batch_and_agrees_with_the_loop() -> None:
    F = gradgen.autograd.functional
    x, y = _inputs(gradgen)

    def f(a: Any, b: Any) -> Any:
        return (_vector(a, b), a.sum() * b)

    looped, batched = F.jacobian(f, (x, y)), F.jacobian(f, (x, y), vectorize=True)
    for row_a, row_b in zip(looped, batched):
        for a, b in zip(row_a, row_b):
            assert np.allclose(a.numpy(), b.numpy())
    w = gradgen.tensor(X[:2], requires_grad=True)
    cubes = F.jacobian(lambda a: a * a * a, w, create_graph=True, vectorize=True)
    (second,) = gradgen.autograd.grad(cubes.sum(), w)
    assert np.allclose(second.numpy(), 6 * X[:2])  # d/dw sum(diag(3w^2)) = 6w
