"""gradgen.utils.checkpoint against torch.utils.checkpoint: the same values and
gradients with both variants, the random state preserved for the recomputation, the
errors and warning, and what the forward keeps (placeholders, not activations)."""

from __future__ import annotations

import gc
import warnings
import weakref
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential
from torch_oracle import oracle

X = np.array([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])


def _block(lib: Any, a: Any, w: Any) -> Any:
    return (a @ w).tanh().exp() * a.sin().sum()


@pytest.mark.parametrize("reentrant", [False, True])
def test_values_and_gradients_match_torch(reentrant: bool) -> None:
    w_data = np.linspace(-1.0, 1.0, 9).reshape(3, 3)

    def run(lib: Any) -> list[Any]:
        a = lib.tensor(X, requires_grad=True)
        w = lib.tensor(w_data, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(
            lambda a, w: _block(lib, a, w), a, w, use_reentrant=reentrant
        )
        out.pow(2).sum().backward()
        return [out.detach().numpy(), a.grad.numpy(), w.grad.numpy()]

    got, want = run(gradgen), oracle("out and grads", run)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_plain_run_gives_the_same_gradients() -> None:
    def grads(use_checkpoint: bool) -> list[np.ndarray]:
        a = gradgen.tensor(X, requires_grad=True)
        w = gradgen.tensor(np.eye(3) * 0.5, requires_grad=True)
        block = lambda a, w: _block(gradgen, a, w)  # noqa: E731
        out = (
            checkpoint(block, a, w, use_reentrant=False)
            if use_checkpoint
            else block(a, w)
        )
        out.sum().backward()
        return [a.grad.numpy(), w.grad.numpy()]

    for g, w in zip(grads(True), grads(False)):
        np.testing.assert_array_equal(g, w)


def test_the_forward_keeps_no_activation_and_backward_recomputes() -> None:
    """Without checkpoint the graph keeps exp's output alive (sin saves its input);
    with it, nothing of the block's activations survives the forward."""
    calls = []
    activations: list[weakref.ref[Any]] = []

    def block(a: Any) -> Any:
        calls.append(1)
        inner = a.exp()
        activations.append(weakref.ref(inner))
        return inner.sin().cos()

    a = gradgen.tensor(X, requires_grad=True)
    kept = block(a)
    gc.collect()
    assert activations[0]() is not None  # saved for sin's backward
    out = checkpoint(block, a, use_reentrant=False)
    gc.collect()
    assert activations[1]() is None
    assert len(calls) == 2
    out.sum().backward()
    assert len(calls) == 3  # recomputed once for all of the block's saved tensors
    np.testing.assert_allclose(
        a.grad.numpy(), -np.sin(np.sin(np.exp(X))) * np.cos(np.exp(X)) * np.exp(X)
    )
    del kept


def test_random_state_is_replayed_in_the_recomputation() -> None:
    """Dropout inside the checkpoint: backward's recomputation draws the same mask,
    so the gradient is the mask's (scaled by 2) times 2a."""
    a = gradgen.tensor(X, requires_grad=True)
    gradgen.manual_seed(5)
    out = checkpoint(
        lambda a: gradgen.nn.functional.dropout(a, 0.5, training=True) * a,
        a,
        use_reentrant=False,
    )
    mask = (out.detach().numpy() != 0).astype(float)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), mask * 2 * 2 * X)


def test_retain_graph_and_autograd_grad_work_without_reentrancy() -> None:
    a = gradgen.tensor(X, requires_grad=True)
    out = checkpoint(lambda a: a.sin() * a, a, use_reentrant=False).sum()
    (first,) = gradgen.autograd.grad(out, a, retain_graph=True)
    (second,) = gradgen.autograd.grad(out, a)
    np.testing.assert_allclose(first.numpy(), np.cos(X) * X + np.sin(X))
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def _error(lib: Any, run: Any) -> str:
    try:
        run(lib)
    except RuntimeError as error:
        return str(error)
    raise AssertionError("no error")


def test_reentrant_refuses_autograd_grad() -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda a: a * a, a, use_reentrant=True)
        return lib.autograd.grad(out.sum(), a)

    want = oracle("message", lambda torch: _error(torch, run))
    assert _error(gradgen, run) == want.replace("torch.utils", "gradgen.utils")


def test_changed_recomputation_is_an_error() -> None:
    state = {"n": 3}

    def shrinking(a: Any) -> Any:
        state["n"] -= 1
        return (a[:, : state["n"]] * a[:, : state["n"]]).sum()

    out = checkpoint(
        shrinking, gradgen.tensor(X, requires_grad=True), use_reentrant=False
    )
    with pytest.raises(CheckpointError, match="^gradgen.utils.checkpoint: Recomputed"):
        out.backward()


def test_use_reentrant_not_given_warns_and_means_true() -> None:
    a = gradgen.tensor(X, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        out = checkpoint(lambda a: a * 2, a)
    assert out.grad_fn.name() == oracle(
        "grad_fn", lambda torch: _default_grad_fn(torch)
    )


def _default_grad_fn(torch: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = torch.utils.checkpoint.checkpoint(
            lambda a: a * 2, torch.tensor(X, requires_grad=True)
        )
    return str(out.grad_fn.name())


def test_checkpoint_sequential_matches_torch() -> None:
    def run(lib: Any) -> list[Any]:
        lib.manual_seed(0)
        model = lib.nn.Sequential(
            lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 4), lib.nn.Sigmoid()
        ).double()
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.cos(np.arange(p.numel()) + i).reshape(p.shape)))
        a = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint_sequential(
            model, 2, a, use_reentrant=False
        )
        out.sum().backward()
        return [out.detach().numpy(), a.grad.numpy()] + [
            p.grad.numpy() for p in model.parameters()
        ]

    got, want = run(gradgen), oracle("values and grads", run)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert checkpoint_sequential is gradgen.utils.checkpoint.checkpoint_sequential
