"""gradgen.func's grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd and hessian
against torch.func on the same functions: values, requires_grad of the results,
compositions (nesting in every order, perturbation confusion) and error messages
(recorded in tests/golden/, see torch_oracle.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

from .common import X, Y, assert_same, errors, plain


def _inputs(lib: Any) -> tuple[Any, Any]:
    return lib.tensor(X, dtype=lib.float64), lib.tensor(Y, dtype=lib.float64)


def _scalar(a: Any) -> Any:
    return (a.sin() * a.exp()).sum()


def _vector(a: Any, b: Any) -> Any:
    return (b @ a.sin()) * a[:2].exp()


def _first_order(lib: Any) -> dict[str, Any]:
    F = lib.func
    x, y = _inputs(lib)
    vjp_out, vjp_fn = F.vjp(_vector, x, y)
    lin_out, jvp_fn = F.linearize(lambda a: a.sin() * a, x)
    return {
        "grad": F.grad(_scalar)(x),
        "grad argnums": F.grad(lambda a, b: (b @ a.sin()).sum(), argnums=(0, 1))(x, y),
        "grad negative argnum": F.grad(lambda a, b: (b @ a).sum(), argnums=-1)(x, y),
        "grad_and_value aux": F.grad_and_value(
            lambda a: (_scalar(a), a.cos()), has_aux=True
        )(x),
        "grad aux": F.grad(lambda a: (_scalar(a), {"c": a * 2}), has_aux=True)(x),
        "grad dict": F.grad(lambda d: (d["u"] * d["v"][0]).sum())(
            {"u": x, "v": [y[0], y[1]]}
        ),
        "grad constant": F.grad(lambda a: (x * 2).sum())(x),
        "grad kwargs": F.grad(lambda a, *, k: (a * k).sum())(x, k=y[0]),
        "vjp": (vjp_out, vjp_fn(lib.tensor([1.0, -2.0], dtype=lib.float64))),
        "vjp aux": F.vjp(lambda a: (a.sin(), a.cos()), x, has_aux=True)[::2],
        "jvp": F.jvp(_vector, (x, y), (x.cos(), y.sin())),
        "jvp aux": F.jvp(lambda a: (a.exp(), a * 3), (x,), (x,), has_aux=True),
        "linearize": (lin_out, jvp_fn(x.cos())),
        "jacrev": F.jacrev(_vector, argnums=(0, 1))(x, y),
        "jacrev chunk": F.jacrev(_vector, chunk_size=1)(x, y),
        "jacrev aux": F.jacrev(lambda a: (a.sin(), {"c": a.cos()}), has_aux=True)(x),
        "jacrev pytree out": F.jacrev(lambda a: {"s": a.sin(), "t": [a.sum()]})(x),
        "jacfwd": F.jacfwd(_vector, argnums=(0, 1))(x, y),
        "jacfwd aux": F.jacfwd(lambda a: (a.sin(), a.cos()), has_aux=True)(x),
        "hessian": F.hessian(_scalar)(x),
        "hessian argnums": F.hessian(lambda a, b: (b @ a.sin()).sum() * a.sum(), 0)(
            x, y
        ),
        "hessian dict": F.hessian(lambda d: (d["a"] * d["b"].exp()).sum())(
            {"a": x, "b": x * 2}
        ),
    }


def test_first_order_transforms_match_torch_func() -> None:
    ours = plain(_first_order(gradgen))
    theirs = oracle("transforms", lambda torch: plain(_first_order(torch)))
    assert_same(ours, theirs)


def _compositions(lib: Any) -> dict[str, Any]:
    F = lib.func
    x, _ = _inputs(lib)
    s = x[1]
    return {
        "grad grad": F.grad(F.grad(lambda t: t.sin() * t * t))(s),
        "grad grad grad": F.grad(F.grad(F.grad(lambda t: t.exp() * t.sin())))(s),
        "jacrev jacfwd": F.jacrev(F.jacfwd(lambda a: a.sin() * a.sum()))(x),
        "jacfwd jacrev": F.jacfwd(F.jacrev(lambda a: a.tanh() * a.sum()))(x),
        "jacrev jacrev": F.jacrev(F.jacrev(_scalar))(x),
        "jacfwd jacfwd": F.jacfwd(F.jacfwd(_scalar))(x),
        "jacfwd hessian": F.jacfwd(F.hessian(lambda a: (a**3).sum()))(x),
        "grad jvp": F.grad(
            lambda a: F.jvp(lambda t: (t.sin() * t).sum(), (a,), (a.cos(),))[1]
        )(x),
        "jvp grad": F.jvp(F.grad(_scalar), (x,), (x.cos(),)),
        # Perturbation confusion: the inner level sees the outer input as a constant.
        "confusion grad": F.grad(lambda t: t * F.grad(lambda u: t * u)(t))(s),
        "confusion grad 2": F.grad(lambda t: F.grad(lambda u: (t * u).sin())(t) * t)(s),
        "confusion jvp": F.jvp(
            lambda a: a * F.jvp(lambda t: a * t.sin(), (a,), (a,))[1], (x,), (x.exp(),)
        ),
        "confusion jacrev": F.jacrev(
            lambda a: a * F.jacrev(lambda t: (a * t).sum())(a)
        )(x),
        "vmap grad": F.vmap(F.grad(lambda a: (a.sin() * a).sum()))(x.reshape(3, 1)),
    }


def test_compositions_and_nesting_match_torch_func() -> None:
    ours = plain(_compositions(gradgen))
    theirs = oracle("compositions", lambda torch: plain(_compositions(torch)))
    assert_same(ours, theirs)


def test_results_keep_a_graph_when_the_inputs_require_grad() -> None:
    """grad of an input that requires grad is differentiable again (MAML-style),
    as torch.func's."""

    def run(lib: Any) -> Any:
        w = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        g = lib.func.grad(_scalar)(w)
        (outer,) = lib.autograd.grad((g * g).sum(), w)
        return plain((g, outer))

    assert_same(run(gradgen), oracle("maml", run))


def _error_calls(lib: Any) -> dict[str, Any]:
    F = lib.func
    x, y = _inputs(lib)
    return {
        "not scalar": lambda: F.grad(lambda a: a)(x),
        "not tensor": lambda: F.grad(lambda a: 1.0)(x),
        "aux not pair": lambda: F.grad(lambda a: a.sum(), has_aux=True)(x),
        "argnum range": lambda: F.grad(_scalar, argnums=3)(x),
        "argnum type": lambda: F.grad(_scalar, argnums=1.0)(x),
        "argnums repeat": lambda: F.grad(_scalar, argnums=(0, 0))(x),
        "argnums empty": lambda: F.grad(_scalar, argnums=())(x),
        "not a tensor input": lambda: F.grad(lambda a: a)(1.0),
        "chunk": lambda: F.jacrev(_scalar, chunk_size=0),
        "jvp primals": lambda: F.jvp(_scalar, x, x),
        "jvp structure": lambda: F.jvp(_scalar, (x,), (x, x)),
        "jvp non tensor": lambda: F.jvp(_scalar, (x,), (1.0,)),
        "vjp aux": lambda: F.vjp(lambda a: a, x, has_aux=True),
        "vjp integer": lambda: F.vjp(lambda a: (a > 0).long(), x),
        "vjp cotangent structure": lambda: F.vjp(lambda a: a, x)[1]((x, x)),
        "jacfwd randomness": lambda: F.jacfwd(_scalar, randomness="sometimes")(x),
        "jacfwd random draw": lambda: F.jacfwd(lambda a: a * lib.rand(3))(x),
    }


def test_error_messages_match_torch_func() -> None:
    ours = errors(_error_calls(gradgen))
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(ours, theirs)


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_hessian_of_a_quadratic_form_is_the_symmetrised_matrix(
    shape: tuple[int, ...],
) -> None:
    """Hand math: f(x) = x^T A x has Hessian A + A^T, whatever the nesting order."""
    n = int(np.prod(shape))
    a = np.arange(1.0, n * n + 1).reshape(n, n)
    matrix = gradgen.tensor(a)

    def f(v: Any) -> Any:
        flat = v.reshape(-1)
        return flat @ (matrix @ flat)

    x = gradgen.tensor(np.linspace(-1.0, 1.0, n).reshape(shape))
    want = (a + a.T).reshape(shape + shape)
    F = gradgen.func
    for transform in (
        F.hessian,
        lambda g: F.jacrev(F.jacrev(g)),
        lambda g: F.jacfwd(F.jacfwd(g)),
    ):
        assert np.allclose(transform(f)(x).numpy(), want)


def test_functionalize_runs_the_function_as_it_is() -> None:
    """gradgen runs eagerly: functionalize(f) computes f, in-place operators included."""

    def f(a: Any) -> Any:
        b = a.clone()
        b.add_(1.0)
        return b * 2

    def run(lib: Any) -> Any:
        x, _ = _inputs(lib)
        wrapped = lib.func.functionalize(f)
        bad = errors({"remove": lambda: lib.func.functionalize(f, remove="views")})
        return plain((wrapped(x), lib.func.grad(lambda a: wrapped(a).sum())(x), bad))

    assert_same(run(gradgen), oracle("functionalize", run))
