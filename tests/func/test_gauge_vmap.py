"""The phase (gauge) checks of svd's and eig's backward under vmap: a loss of complex
singular vectors or eigenvectors must not depend on their phases, and vmap's answer
must be a loop's: it raises when some example's cotangent depends on the phase, and
not otherwise (the checks used to read example 0 only). The error texts are
PyTorch's, asked of PyTorch for one example (recorded in tests/golden/)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.func import grad, vjp, vmap
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(8)
MATRIX = RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))
HERMITIAN = MATRIX + MATRIX.conj().T
BATCH = RNG.normal(size=(3, 4, 4)) + 1j * RNG.normal(size=(3, 4, 4))

# Per example: the weight of a phase-dependent term (0 keeps the loss phase-free).
PATTERNS = {
    "none": [0.0, 0.0, 0.0],
    "middle": [0.0, 1.0, 0.0],
    "first": [1.0, 0.0, 0.0],
    "last": [0.0, 0.0, 1.0],
    "all": [1.0, 1.0, 1.0],
}


def _vectors(lib: Any, kind: str) -> Callable[[Any], Any]:
    """The function whose vectors a cotangent weighs: svd's U, eig's or eigh's V."""
    if kind == "svd":
        return lambda a: lib.linalg.svd(a)[0]
    if kind == "eig":
        return lambda a: lib.linalg.eig(a)[1]
    return lambda a: lib.linalg.eigh(a)[1]


def _matrix(kind: str) -> np.ndarray:
    return HERMITIAN if kind == "eigh" else MATRIX


def _cotangents(vectors: Any, weights: list[float]) -> Any:
    """vectors * (1 + i w): Im diag(V^H gV) = w per column, phase-dependent unless w
    is 0 (the real part keeps every cotangent nonzero)."""
    w = gradgen.tensor(weights, dtype=gradgen.float64).reshape(-1, 1, 1)
    return vectors.detach().unsqueeze(0) * (1 + 1j * w)


def _loop_and_vmap(kind: str, weights: list[float]) -> tuple[Any, Any]:
    a = gradgen.tensor(_matrix(kind))
    vectors, pull = vjp(_vectors(gradgen, kind), a)
    cotangents = _cotangents(vectors, weights)
    loop = [outcome(lambda i=i: pull(cotangents[i])[0]) for i in range(len(weights))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fallbacks' "no batching rule" warnings
        batched = outcome(lambda: vmap(pull)(cotangents)[0])
    return loop, batched


def _torch_error(kind: str) -> Any:
    """PyTorch's error for a phase-dependent cotangent of one example."""

    def run(torch: Any) -> Any:
        a = torch.tensor(_matrix(kind), requires_grad=True)
        vectors = _vectors(torch, kind)(a)
        cotangent = vectors.detach() * (1 + 1j)
        return outcome(lambda: torch.autograd.grad(vectors, a, cotangent))

    return oracle("error " + kind, run)


@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("kind", ["svd", "eig", "eigh"])
def test_vmap_over_the_pullback_raises_as_a_loop_would(kind: str, pattern: str) -> None:
    loop, batched = _loop_and_vmap(kind, PATTERNS[pattern])
    raised = [isinstance(r, Exception) for r in loop]
    assert raised == [w != 0 for w in PATTERNS[pattern]]
    if any(raised):
        expected = _torch_error(kind)
        assert isinstance(expected, RuntimeError)
        assert isinstance(batched, RuntimeError), batched
        assert str(batched) == str(expected)
        first = next(r for r in loop if isinstance(r, Exception))
        assert str(first) == str(expected)
        return
    assert not isinstance(batched, Exception), batched
    np.testing.assert_allclose(
        batched.numpy(), np.stack([r.numpy() for r in loop]), rtol=1e-10, atol=1e-12
    )


def _phase_loss(kind: str) -> Callable[[Any, Any], Any]:
    """A real loss: phase-free part plus w times a phase-dependent one."""
    vectors = _vectors(gradgen, kind)

    def loss(a: Any, w: Any) -> Any:
        v = vectors(a)
        return (v.abs() ** 2 * gradgen.arange(4.0)).sum() + (v[0, 0] * w).imag

    return loss


@pytest.mark.parametrize("pattern", ["none", "middle", "last"])
@pytest.mark.parametrize("kind", ["svd", "eig"])
def test_vmap_of_grad_raises_as_a_loop_would(kind: str, pattern: str) -> None:
    weights = gradgen.tensor(PATTERNS[pattern], dtype=gradgen.float64)
    batch = gradgen.tensor(BATCH)
    per_example = grad(_phase_loss(kind))
    loop = [outcome(lambda i=i: per_example(batch[i], weights[i])) for i in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = outcome(lambda: vmap(per_example)(batch, weights))
    if any(isinstance(r, Exception) for r in loop):
        assert isinstance(batched, RuntimeError)
        assert "e^{i phi}" in str(batched)
        return
    assert not isinstance(batched, Exception), batched
    np.testing.assert_allclose(
        batched.numpy(), np.stack([r.numpy() for r in loop]), rtol=1e-8, atol=1e-10
    )


def test_nested_vmap_sees_every_example_of_both_levels() -> None:
    """vmap(vmap(pullback)) over a 2 x 3 grid of cotangents: the one phase-dependent
    cotangent (the grid's last) is found, and a phase-free grid passes."""
    a = gradgen.tensor(MATRIX)
    vectors, pull = vjp(_vectors(gradgen, "svd"), a)
    weights = [0.0] * 5 + [1.0]
    grid = _cotangents(vectors, weights).reshape(2, 3, 4, 4)
    free = _cotangents(vectors, [0.0] * 6).reshape(2, 3, 4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="svd_backward: The singular vectors"):
            vmap(vmap(pull))(grid)
        result = vmap(vmap(pull))(free)[0]
    np.testing.assert_allclose(
        result.numpy()[1, 2], pull(free[1, 2])[0].numpy(), rtol=1e-10, atol=1e-12
    )
