"""autograd.grad(..., is_grads_batched=True) against torch.autograd.grad: values,
unused inputs, create_graph, the shape errors (recorded in tests/golden/), and that
it is one backward pass (no per-example loop)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import gradgen
from torch_oracle import oracle

from .common import BATCH, X, Y, assert_same, errors, plain


def _results(lib: Any) -> dict[str, Any]:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(Y, dtype=lib.float64, requires_grad=True)
    unused = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    out = (y @ x.sin()) * x[:2].exp()
    other = (x * x).sum()
    eye = lib.eye(2, dtype=lib.float64)
    many = lib.tensor(BATCH[:, :2, 0], dtype=lib.float64)
    cube = x**3
    first = lib.autograd.grad(
        cube, x, lib.ones(3, dtype=lib.float64), create_graph=True
    )[0]
    return {
        "rows": lib.autograd.grad(out, (x, y), eye, True, is_grads_batched=True),
        "four": lib.autograd.grad(out, x, many, True, is_grads_batched=True),
        "two outputs": lib.autograd.grad(
            (out, other),
            x,
            (eye, lib.tensor([1.0, -2.0], dtype=lib.float64)),
            True,
            is_grads_batched=True,
        ),
        "unused": lib.autograd.grad(
            out, (x, unused), eye, True, allow_unused=True, is_grads_batched=True
        ),
        "second order": lib.autograd.grad(
            first, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True
        ),
    }


def test_batched_grads_match_torch() -> None:
    ours = plain(_results(gradgen))
    theirs = oracle("results", lambda torch: plain(_results(torch)))
    assert_same(ours, theirs)


def _error_calls(lib: Any) -> dict[str, Any]:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)

    def grad(out: Any, v: Any, **kwargs: Any) -> Any:
        return lib.autograd.grad(out, x, v, is_grads_batched=True, **kwargs)

    return {
        "no batch dim": lambda: grad(x * 2, lib.ones(3, dtype=lib.float64)),
        "wrong example": lambda: grad(x * 2, lib.ones(2, 2, 2, dtype=lib.float64)),
        "scalar grad": lambda: grad(x.sum(), lib.tensor(1.0, dtype=lib.float64)),
        "unused": lambda: grad(
            x.detach() * 2 + lib.ones(3).requires_grad_(),
            lib.ones(2, 3, dtype=lib.float64),
        ),
    }


def test_error_messages_match_torch() -> None:
    ours = errors(_error_calls(gradgen))
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(ours, theirs)


def test_one_backward_pass_for_the_whole_batch() -> None:
    """Hand math: d(sum w * x^2)/dx = 2 w x for every row w of the batch, and no
    operator falls back to the per-example loop (which would warn)."""
    x = gradgen.tensor(X, requires_grad=True)
    weights = np.arange(12.0).reshape(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (found,) = gradgen.autograd.grad(
            x * x, x, gradgen.tensor(weights), is_grads_batched=True
        )
    assert found.shape == (4, 3)
    assert np.allclose(found.numpy(), 2 * weights * X)


def test_jacrev_and_vectorized_jacobian_agree_with_the_loop() -> None:
    x = gradgen.tensor(X)

    def f(a: Any) -> Any:
        return (a.sin() * a.sum(), a.exp()[:2])

    looped = gradgen.autograd.functional.jacobian(f, x)
    batched = gradgen.autograd.functional.jacobian(f, x, vectorize=True)
    jacrev = gradgen.func.jacrev(f)(x)
    chunked = gradgen.func.jacrev(f, chunk_size=2)(x)
    for a, b, c, d in zip(looped, batched, jacrev, chunked):
        for other in (b, c, d):
            assert np.allclose(a.numpy(), other.numpy())
