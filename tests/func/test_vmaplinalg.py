"""vmap of the linalg operators whose backward formulas solve with a saved LU
(det, slogdet, solve, lu_solve) or with the eigenvectors (eig): their batching rules
against PyTorch's per-example results (recorded in tests/golden/: torch.func.vmap
itself fails on some of these calls and differs on vmap(hessian(det))), with the
right-hand sides that
broadcast (a vector, an unbatched A, extra batch dims), gradients and Hessians under
vmap, a singular example among regular ones, and no per-example fallback."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.func.batching_rules import LOOPED, RULES
from torch_oracle import oracle

from .common import assert_same, plain

NAMES = ("_linalg_det", "_linalg_slogdet", "_linalg_solve_ex", "linalg_lu_solve")
RNG = np.random.default_rng(15)
A = RNG.uniform(-2.0, 2.0, (4, 3, 3)) + 3.0 * np.eye(3)
A2 = RNG.uniform(-2.0, 2.0, (4, 2, 3, 3)) + 3.0 * np.eye(3)
B = RNG.uniform(-2.0, 2.0, (4, 3, 2))
B2 = RNG.uniform(-2.0, 2.0, (4, 2, 3, 2))
V = RNG.uniform(-2.0, 2.0, (4, 3))
V2 = RNG.uniform(-2.0, 2.0, (4, 2, 3))
G = RNG.uniform(-1.0, 1.0, (5, 4))  # batches of 5 grad_outputs
GB = RNG.uniform(-1.0, 1.0, (5, 4, 3, 2))
GV = RNG.uniform(-1.0, 1.0, (5, 4, 3))
SINGULAR = A.copy()
SINGULAR[1, 2] = SINGULAR[1, 0] - SINGULAR[1, 1]  # example 1 has rank 2


@pytest.fixture(autouse=True)
def _no_fallback() -> Iterator[None]:
    """Every call here runs on the batching rules: the loop's warning is an error."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        yield


def _stack(lib: Any, results: list[Any]) -> Any:
    if isinstance(results[0], tuple):
        return tuple(_stack(lib, list(column)) for column in zip(*results))
    return lib.stack(results)


def _mapper(lib: Any) -> Any:
    """gradgen's vmap; for torch, the loop over the examples vmap stands for."""
    if lib is gradgen:
        return gradgen.func.vmap

    def vmap(f: Any, in_dims: Any = 0) -> Any:
        def mapped(*xs: Any) -> Any:
            dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(xs)
            size = next(x.shape[0] for x, d in zip(xs, dims) if d is not None)
            return _stack(
                lib,
                [
                    f(*(x if d is None else x[i] for x, d in zip(xs, dims)))
                    for i in range(size)
                ],
            )

        return mapped

    return vmap


def _solves(lib: Any) -> dict[str, Any]:
    t = lib.tensor
    la, vmap = lib.linalg, _mapper(lib)

    def lu_solve(a: Any, b: Any, **kwargs: Any) -> Any:
        return la.lu_solve(*la.lu_factor(a), b, **kwargs)

    return {
        "solve": vmap(la.solve)(t(A), t(B)),
        "solve vector": vmap(la.solve)(t(A), t(V)),
        "solve one A, vectors": vmap(la.solve, (None, 0))(t(A[0]), t(V)),
        "solve batches of A, a vector each": vmap(la.solve)(t(A2), t(V2)),
        "solve one vector": vmap(la.solve, (0, None))(t(A), t(V[0])),
        "solve A with extra batch dims": vmap(la.solve)(t(A2), t(B)),
        "solve B with extra batch dims": vmap(la.solve, (None, 0))(t(A[0]), t(B2)),
        "solve right": vmap(lambda a, b: la.solve(a, b, left=False))(t(A), t(B.mT)),
        "lu_solve": vmap(lu_solve)(t(A), t(B)),
        "lu_solve one A": vmap(lu_solve, (None, 0))(t(A[0]), t(B2)),
        "lu_solve one B": vmap(lu_solve, (0, None))(t(A2), t(B[0])),
        "lu_solve adjoint right": vmap(
            lambda a, b: lu_solve(a, b, left=False, adjoint=True)
        )(t(A), t(B.mT)),
    }


def _gradients(lib: Any) -> dict[str, Any]:
    t = lib.tensor
    la, func, vmap = lib.linalg, lib.func, _mapper(lib)
    grad, jacrev, hessian = func.grad, func.jacrev, func.hessian

    def logabsdet(a: Any) -> Any:
        return la.slogdet(a)[1]

    def eigenvalues(a: Any) -> Any:
        return la.eig(a)[0].abs().sum()

    return {
        "det": vmap(la.det)(t(A)),
        "grad det": vmap(grad(la.det))(t(A)),
        "grad det, one singular": vmap(grad(la.det))(t(SINGULAR)),
        "hessian det": vmap(hessian(la.det))(t(A)),
        "grad logabsdet": vmap(grad(logabsdet))(t(A)),
        "hessian logabsdet": vmap(hessian(logabsdet))(t(A)),
        "jacrev solve": vmap(jacrev(la.solve, (0, 1)))(t(A), t(V)),
        "jacrev lu_solve": vmap(
            jacrev(lambda a, b: la.lu_solve(*la.lu_factor(a), b), (0, 1))
        )(t(A), t(B)),
        # forward mode: jacfwd's tangents are batched (the solve's jvp read only
        # the first one's values before)
        "jacfwd solve": func.jacfwd(la.solve, (0, 1))(t(A[0]), t(V[0])),
        "jacfwd logabsdet": func.jacfwd(logabsdet)(t(A[0])),
        "grad eigenvalues": vmap(grad(eigenvalues))(t(A)),
        "jacrev jacrev eigenvalues": vmap(jacrev(jacrev(eigenvalues)))(t(A)),
    }


def _vjps(lib: Any, f: Any, inputs: tuple[Any, ...], grads: Any) -> Any:
    """The gradients of f at inputs for a batch of grad_outputs: gradgen's
    is_grads_batched (the backward formulas run under vmap, outside grad mode, as
    check_batched_grad runs them); for torch, one backward per grad_output."""
    xs = [lib.tensor(x, requires_grad=True) for x in inputs]
    y = f(*xs)
    if lib is gradgen:
        return lib.autograd.grad(y, xs, lib.tensor(grads), is_grads_batched=True)
    each = [lib.autograd.grad(y, xs, lib.tensor(g), retain_graph=True) for g in grads]
    return tuple(lib.stack(column) for column in zip(*each))


def _batched_grads(lib: Any) -> dict[str, Any]:
    la = lib.linalg

    def lu_solve(a: Any, b: Any) -> Any:
        return la.lu_solve(*la.lu_factor(a), b) + la.lu_solve(
            *la.lu_factor(a), b, adjoint=True
        )

    return {
        "det": _vjps(lib, la.det, (A,), G),
        "logabsdet": _vjps(lib, lambda a: la.slogdet(a)[1], (A,), G),
        "solve": _vjps(lib, la.solve, (A, B), GB),
        "solve vector": _vjps(lib, la.solve, (A, V), GV),
        "solve right": _vjps(
            lib, lambda a, b: la.solve(a, b, left=False), (A, B.mT.copy()), GB.mT
        ),
        "lu_solve": _vjps(lib, lu_solve, (A, B), GB),
        "eigenvalues": _vjps(lib, lambda a: la.eig(a)[0].abs(), (A,), GV),
    }


def test_the_operators_have_rules() -> None:
    for name in (*NAMES, "linalg_eig"):
        assert name in RULES and name not in LOOPED


def test_solves_match_torch() -> None:
    ours = plain(_solves(gradgen))
    theirs = oracle("solves", lambda torch: plain(_solves(torch)))
    assert_same(ours, theirs)


def test_gradients_match_torch() -> None:
    ours = plain(_gradients(gradgen))
    theirs = oracle("gradients", lambda torch: plain(_gradients(torch)))
    assert_same(ours, theirs)


def test_batched_grad_outputs_match_torch() -> None:
    """The path check_batched_grad takes: the backward formulas get a BatchedTensor
    gradient (before, det, slogdet and solve read its example 0 only)."""
    ours = plain(_batched_grads(gradgen))
    theirs = oracle("batched grads", lambda torch: plain(_batched_grads(torch)))
    assert_same(ours, theirs)


def test_the_factorisation_keeps_each_example_shape() -> None:
    """_linalg_solve_ex's LU, pivots and info are of each example's A, not of the
    batch A broadcasts to with B."""
    t = gradgen.tensor
    X, LU, pivots, info = gradgen.func.vmap(gradgen._linalg_solve_ex, (None, 0))(
        t(A[0]), t(B2)
    )
    assert tuple(X.shape) == (4, 2, 3, 2)
    assert (tuple(LU.shape), tuple(pivots.shape), tuple(info.shape)) == (
        (4, 3, 3),
        (4, 3),
        (4,),
    )
    expected = gradgen._linalg_solve_ex(t(A[0]), t(B2[0]))
    np.testing.assert_array_equal(LU[2].numpy(), expected[1].numpy())
    np.testing.assert_array_equal(pivots[2].numpy(), expected[2].numpy())
