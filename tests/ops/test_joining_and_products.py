"""Building, splitting and product composites beyond the operator table: the varargs
spellings of torch.functional (meshgrid(a, b), einsum("...", a, b), atleast_1d(a, b)),
einsum's forms (ellipsis, diagonals, broadcasting, implicit output, sublists),
tensordot's dims, cdist/pdist for every p, trapezoid's edge cases, and PyTorch's
errors, all against torch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_compare import compare, same_error

X = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 0.0, -6.0, 2.5], [0.5, 7.0, 0.0, -1.0]])
C = np.arange(24.0).reshape(2, 3, 4) / 7 - 1.5
V = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 2)]),
        ("ij,jk", [(3, 4), (4, 2)]),  # implicit output: the labels seen once, sorted
        ("ba,ca", [(3, 4), (2, 4)]),  # implicit output in alphabetical order
        ("ii->i", [(3, 3)]),  # a diagonal
        ("ii", [(3, 3)]),  # the trace
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),  # ellipsis broadcast
        ("b...,b...->b", [(2, 3, 4), (2, 1, 4)]),  # size-1 broadcast inside
        ("i,j->ij", [(3,), (4,)]),  # an outer product
        ("i,i->", [(3,), (3,)]),
        ("ijk->kji", [(2, 3, 4)]),  # a permute only
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("iij,jk->ik", [(3, 3, 2), (2, 4)]),
        ("Ab,bC->AC", [(2, 3), (3, 4)]),  # upper-case labels
        ("i j , j k -> i k", [(3, 4), (4, 2)]),  # spaces are ignored
    ],
)
def test_einsum_matches_torch(equation, shapes) -> None:
    rng = np.random.default_rng(len(equation))
    arrays = [rng.uniform(-2, 2, shape) for shape in shapes]
    compare(lambda lib, *xs: lib.einsum(equation, *xs), *arrays, create_graph=True)


def test_einsum_list_and_sublist_forms_match_torch() -> None:
    compare(lambda lib, a, b: lib.einsum("ij,jk", [a, b]), X, X.T)
    compare(lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]), X, X.T)
    compare(lambda lib, a: lib.einsum(a, [Ellipsis, 1], [1]), C)


def test_einsum_errors_match_torch() -> None:
    same_error(lambda lib: lib.einsum("ij"))
    same_error(lambda lib: lib.einsum("i$", lib.ones(2)))
    same_error(lambda lib: lib.einsum("ij->kk", lib.ones(2, 2)))
    same_error(lambda lib: lib.einsum("ij->ii", lib.ones(2, 2)))
    same_error(lambda lib: lib.einsum("ijk", lib.ones(2, 2)))
    same_error(lambda lib: lib.einsum("ij,jk", lib.ones(2, 2)))
    same_error(lambda lib: lib.einsum("ij", lib.ones(2, 2), lib.ones(2)))
    same_error(lambda lib: lib.einsum("ij...", lib.ones(2)))
    same_error(lambda lib: lib.einsum("ij,jk", lib.ones(3, 4), lib.ones(3, 4)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, a, b: lib.tensordot(a, b, 1),
        lambda lib, a, b: lib.tensordot(a, b, dims=([0], [1])),
        lambda lib, a, b: lib.tensordot(a, b, dims=lib.tensor(0)),
        lambda lib, a, b: lib.tensordot(a[:1], b, dims=([0], [1])),  # size-1 pairs
        lambda lib, a, b: lib.tensordot(a, b.t(), 2),
    ],
)
def test_tensordot_matches_torch(fn) -> None:
    compare(fn, X, X.T, create_graph=True)


def test_tensordot_errors_match_torch() -> None:
    same_error(lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(4, 3), 3))
    same_error(lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(4, 3), -1))
    same_error(lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(4, 3), (0, 1)))
    same_error(lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(4, 3), ([0], [0])))
    same_error(lambda lib: lib.tensordot(lib.ones(3, 4), lib.ones(4, 3), ([0, 1], [1])))


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_cdist_and_pdist_match_torch_for_every_p(p) -> None:
    y = X[:, :3] * 0.5 + 1.0
    y[1] = X[1, :3]  # a zero difference in one coordinate
    compare(lambda lib, a, b: lib.cdist(a, b, p=p), X[:, :3], y)
    compare(lambda lib, a: lib.pdist(a, p), X)


def test_cdist_batches_and_compute_modes_match_torch() -> None:
    compare(lambda lib, a, b: lib.cdist(a, b), C, C[:1, :2])
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        compare(lambda lib, a, b: lib.cdist(a, b, compute_mode=mode), X, X[:2])


def _cdist_operator(lib: Any) -> Any:
    """The cdist operator under torch.functional's wrapper (torch._VF.cdist)."""
    if lib.__name__ == "torch":
        return lib._VF.cdist
    return lib.generated.ops.cdist


def test_distance_errors_match_torch() -> None:
    same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), compute_mode="x"))
    same_error(lambda lib: _cdist_operator(lib)(lib.ones(2, 3), lib.ones(2, 3), 2.0, 5))
    same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3), p=-1.0))
    same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(3)))
    same_error(lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 4)))
    same_error(lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.long), lib.ones(2, 3)))
    same_error(lambda lib: lib.pdist(lib.ones(2, 3), -1.0))
    same_error(lambda lib: lib.pdist(lib.ones(3)))


def test_the_varargs_spellings_match_torch() -> None:
    compare(lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")[1], V, X[0])
    compare(lambda lib, a, b: lib.meshgrid([a, b], indexing="xy")[0], V, X[0])
    compare(lambda lib, a, b: lib.broadcast_tensors(a, b)[0], V, X[:, :3])
    compare(lambda lib, a, b: lib.atleast_2d(a, b)[0], V, X)
    compare(lambda lib, a: lib.atleast_3d(a), X)
    compare(lambda lib, a, b: lib.cartesian_prod(a, b, a), V, X[0])
    compare(lambda lib, a: lib.kron(a, a[:2]), V)


def test_tuples_come_back_as_torch_gives_them() -> None:
    a, b = gradgen.ones(2), gradgen.ones(3)
    assert isinstance(gradgen.meshgrid(a, b, indexing="ij"), tuple)
    assert isinstance(gradgen.broadcast_tensors(a, a), tuple)
    assert isinstance(gradgen.atleast_1d(a, b), tuple)
    assert isinstance(gradgen.atleast_1d(a), gradgen.Tensor)


def test_broadcast_shapes_matches_torch() -> None:
    from torch_oracle import oracle

    got = tuple(gradgen.broadcast_shapes((2, 1), (3,), 1))
    assert got == oracle(
        "shape", lambda torch: tuple(torch.broadcast_shapes((2, 1), (3,), 1))
    )
    assert isinstance(gradgen.broadcast_shapes((2,)), gradgen.Size)
    same_error(lambda lib: lib.broadcast_shapes((2, 3), (4,)))


def test_meshgrid_of_a_matrix_is_refused() -> None:
    # PyTorch's message ends with the tensor as C++ prints it; gradgen's prints it.
    with pytest.raises(RuntimeError, match="^torch.meshgrid: Expected 0D or 1D tensor"):
        gradgen.meshgrid(gradgen.ones(2, 2), indexing="ij")


def test_meshgrid_without_indexing_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="it will be required to pass the indexing"):
        gradgen.meshgrid(gradgen.ones(2), gradgen.ones(3))


def test_building_errors_match_torch() -> None:
    same_error(lambda lib: lib.hstack([]))
    same_error(lambda lib: lib.vstack([]))
    same_error(lambda lib: lib.dstack([]))
    same_error(lambda lib: lib.column_stack([]))
    same_error(lambda lib: lib.hsplit(lib.tensor(1.0), 2))
    same_error(lambda lib: lib.hsplit(lib.ones(3, 4), 3))
    same_error(lambda lib: lib.hsplit(lib.ones(3, 4), 0))
    same_error(lambda lib: lib.vsplit(lib.ones(4), 2))
    same_error(lambda lib: lib.dsplit(lib.ones(3, 4), 2))
    same_error(lambda lib: lib.tensor_split(lib.ones(3, 4), 0))
    same_error(lambda lib: lib.tensor_split(lib.ones(3, 4), lib.tensor([1.0])))
    same_error(lambda lib: lib.tensor_split(lib.ones(3, 4), lib.ones(2, 2).long()))
    same_error(lambda lib: lib.ones(3, 4).unflatten(1, ()))
    same_error(lambda lib: lib.ones(3, 4).unflatten(1, (3, 2)))
    same_error(lambda lib: lib.fliplr(lib.ones(3)))
    same_error(lambda lib: lib.flipud(lib.tensor(1.0)))
    same_error(
        lambda lib: lib.meshgrid(lib.ones(2), lib.ones(2).double(), indexing="ij")
    )
    same_error(lambda lib: lib.meshgrid(lib.ones(2), indexing="foo"))
    same_error(lambda lib: lib.meshgrid([], indexing="ij"))
    same_error(lambda lib: lib.combinations(lib.ones(2, 2)))
    same_error(lambda lib: lib.combinations(lib.ones(2), -1))
    same_error(lambda lib: lib.cartesian_prod(lib.ones(2, 2)))
    same_error(lambda lib: lib.inner(lib.ones(3, 4), lib.ones(4, 3)))
    same_error(lambda lib: lib.broadcast_tensors(lib.ones(3, 4), lib.ones(5)))
    same_error(lambda lib: lib.repeat_interleave(lib.ones(3, 4), lib.tensor([1, 2]), 0))


def test_chain_matmul_warns_and_checks_as_torch() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_error(lambda lib: lib.chain_matmul(lib.ones(2, 2), lib.ones(2)))
        compare(lambda lib, a: lib.chain_matmul(a, a.t(), a), X)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        gradgen.chain_matmul(gradgen.ones(2, 2), gradgen.ones(2, 2))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, y: lib.trapezoid(y[:, :0]),  # no samples: zeros
        lambda lib, y: lib.trapezoid(y[:, :1], dx=2.0),  # one sample: zero area
        lambda lib, y: lib.trapezoid(y, y * 0.5 + 2.0),  # x of y's shape
        lambda lib, y: lib.cumulative_trapezoid(
            y, lib.tensor([0.0, 1.0, 3.0, 3.5]).double()
        ),
        lambda lib, y: lib.combinations(y[0], 3, with_replacement=True),
        lambda lib, y: lib.combinations(y[0], 0),
        lambda lib, y: lib.combinations(y[0], 5),
        lambda lib, y: lib.repeat_interleave(y, lib.tensor([2, 0, 1]), dim=0),
        lambda lib, y: lib.column_stack([y[0, 0], y[1, :1]]),
        lambda lib, y: lib.hstack([y[0], y[1]]),
        lambda lib, y: lib.tile(y, (2, 1, 1)),
    ],
)
def test_edge_cases_match_torch(fn) -> None:
    compare(fn, X)


def test_trapezoid_errors_match_torch() -> None:
    same_error(lambda lib: lib.trapezoid(lib.ones(3, 4), lib.ones(5)))
