"""autograd.graph.allow_mutation_on_saved_tensors against PyTorch: in-place changes
of saved tensors (and of their views' base) inside the context, backward outside it,
nesting, and the usual error without it (recorded in tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradgen
from torch_oracle import oracle

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def _grads(lib: Any) -> dict[str, Any]:
    graph = lib.autograd.graph
    found = {}
    with graph.allow_mutation_on_saved_tensors():
        a = lib.tensor(X, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        out.backward()
        found["saved input"] = a.grad.numpy().copy()
        a.grad = None
        c = a.clone()
        row = c[0]
        out = (row * row.exp()).sum() + (c * c).sum()
        c.mul_(3)
        c.add_(1)
        out.backward()
        found["view and base, twice"] = a.grad.numpy().copy()
        a.grad = None
        d = a.exp()
        out = d.sum()
        d.zero_()
        out.backward()
        found["saved output"] = a.grad.numpy().copy()
    return found


def _message(call: Any) -> str:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the message is the answer
        return f"{type(error).__name__}: {error}"
    return "passed"


def _errors(lib: Any) -> dict[str, str]:
    graph = lib.autograd.graph

    def outside() -> None:
        a = lib.tensor(X, requires_grad=True)
        with graph.allow_mutation_on_saved_tensors():
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
        out.backward()

    def without() -> None:
        a = lib.tensor(X, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        out.backward()

    def nested() -> None:
        with graph.allow_mutation_on_saved_tensors():
            with graph.allow_mutation_on_saved_tensors():
                pass

    return {
        "outside": _message(outside),
        "without": _message(without),
        "nested": _message(nested),
    }


def test_gradients_use_the_values_saved_before_the_change() -> None:
    ours = _grads(gradgen)
    theirs = oracle("grads", _grads)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6, err_msg=key)


def test_errors_match_torch() -> None:
    ours = _errors(gradgen)
    theirs = {
        k: v.replace("torch.", "gradgen.") for k, v in oracle("errors", _errors).items()
    }
    assert ours == theirs


def test_hand_math_and_the_context_is_cleared() -> None:
    """d(sum b^2)/da = 2 b with b the value before sin_; the context drops what it
    kept on exit, and ordinary in-place calls after it are not observed."""
    graph = gradgen.autograd.graph
    with graph.allow_mutation_on_saved_tensors() as ctx:
        a = gradgen.tensor(X, requires_grad=True)
        b = a * 1
        out = (b**2).sum()
        b.sin_()
        assert len(ctx.cloned) == 1
        out.backward()
    assert not ctx.cloned and not ctx.original
    np.testing.assert_allclose(a.grad.numpy(), 2 * X)
    assert gradgen.dispatch._observer is None
