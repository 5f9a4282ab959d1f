"""Triangles, diagonals, trace, vector norms and dist beyond the operator table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from gradgen.generated import operators
from torch_compare import same_error
from torch_oracle import oracle
from ops.writes_checks import INF, INT, M, compare

pytestmark = pytest.mark.filterwarnings(
    "ignore:(divide by zero|invalid value|overflow) encountered:RuntimeWarning"
)


def _vector_norm(lib: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    """torch.linalg.vector_norm, or gradgen's linalg_vector_norm (no Python binding:
    through the dispatcher, every argument given)."""
    if lib is gradgen:
        ord, dim, keepdim = (list(args) + [2, None, False][len(args) :])[:3]
        ord = kwargs.get("ord", ord)
        dim = kwargs.get("dim", dim)
        keepdim = kwargs.get("keepdim", keepdim)
        dim = (dim,) if isinstance(dim, int) else dim
        return operators.linalg_vector_norm.call(
            x, ord, dim, keepdim, kwargs.get("dtype")
        )
    return lib.linalg.vector_norm(x, *args, **kwargs)


# -- triangles, diagonals, trace ----------------------------------------------------------


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: lib.tril(x), M),
        (lambda lib, x: x.tril(-1) + x.triu(2), M),
        (lambda lib, x: lib.triu(x, 5), M),
        (lambda lib, x: lib.tril(x, -7), M),
        (lambda lib, x: x.tril(1), INT),
        (lambda lib, x: x.triu(), INT > 2),
        (lambda lib, x: lib.tril(x.reshape(2, 2, 3), 1), M),
        (lambda lib, x: lib.triu(x[:0]), M),
        (lambda lib, x: (x * 1).tril_(), M),
        (lambda lib, x: x.clone().triu_(-1), INT),
        (lambda lib, x: lib.diagonal(x), M),
        (lambda lib, x: x.diagonal(2) * x.diagonal(-1)[:2], M),
        (lambda lib, x: x.diagonal(9), M),
        (lambda lib, x: x.t().diagonal(1, 1, 0), M),
        (lambda lib, x: x.reshape(2, 3, 2).diagonal(0, -1, 0), M),
        (lambda lib, x: lib.diag(x), M),
        (lambda lib, x: lib.diag(x, -1), M),
        (lambda lib, x: x.diag(2), INT),
        (lambda lib, x: lib.diag(x[0]), M),
        (lambda lib, x: lib.diag(x[1], -2), M),
        (lambda lib, x: lib.diag(x[0], 1), INT > 2),
        (lambda lib, x: lib.diag_embed(x), M),
        (lambda lib, x: x.diag_embed(-1, 0, 2), M),
        (lambda lib, x: lib.diagonal_copy(x, 1), M),
        (lambda lib, x: lib.trace(x), M),
        (lambda lib, x: x.trace(), INT),
        (lambda lib, x: x.trace(), INT.astype(np.int32)),
        (lambda lib, x: x.trace(), M.astype(np.float32)),
        (lambda lib, x: x.trace(), M[:2] * (1 + 2j)),
    ],
)
def test_triangles_and_diagonals_match_torch(fn, data) -> None:
    compare(fn, data, create_graph=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.tril(lib.ones(3)),
        lambda lib: lib.ones(3).triu(1),
        lambda lib: lib.ones(3).tril_(),
        lambda lib: lib.diag(lib.ones(2, 2, 2)),
        lambda lib: lib.diag(lib.tensor(1.0)),
        lambda lib: lib.diagonal(lib.ones(3)),
        lambda lib: lib.diagonal(lib.ones(3, 3), 0, 1, 1),
        lambda lib: lib.diagonal(lib.ones(3, 3), 0, 0, -2),
        lambda lib: lib.diag_embed(lib.ones(3, 3), 0, -1, -1),
        lambda lib: lib.trace(lib.ones(3)),
        lambda lib: lib.trace(lib.ones(2, 2) > 0),
    ],
    ids=[
        "tril-1d",
        "triu-1d",
        "tril_-1d",
        "diag-3d",
        "diag-0d",
        "diagonal-1d",
        "diagonal-same-dims",
        "diagonal-same-wrapped-dims",
        "diag_embed-same-dims",
        "trace-1d",
        "trace-bool",
    ],
)
def test_triangle_and_diagonal_errors_are_torchs(fn) -> None:
    same_error(fn)


def test_diagonal_is_a_view_that_writes_through() -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor(M)
        d = x.diagonal(1)
        d.zero_()
        return x.tolist()[0][1], x.tolist()[2][3], x._version, d._version

    assert run(gradgen) == oracle("result", run) == (0.0, 0.0, 1, 1)
    y = gradgen.tensor(M).t().diagonal()
    y.fill_(9.0)  # a transposed (non-contiguous) base is written too


def test_diagonal_backward_matches_torch() -> None:
    compare(
        lambda lib, g: (
            lib.ops.aten if lib.__name__ == "torch" else lib
        ).diagonal_backward(g, (2, 3, 4), -1, 2, 1),
        np.arange(6.0).reshape(2, 3),
        create_graph=True,
    )


# -- norms and dist -----------------------------------------------------------------------

ORDERS = [2, 1, 3, 0.5, 1.5, INF, -INF, 0, -1]


@pytest.mark.parametrize("ord", ORDERS)
@pytest.mark.parametrize(
    "dim, keepdim",
    [(None, False), ((1,), False), ((0,), True), ((0, 1), False), ((), True)],
)
def test_vector_norms_match_torch(ord, dim, keepdim: bool) -> None:
    compare(
        lambda lib, x: _vector_norm(lib, x, ord, dim, keepdim),
        M,
        create_graph=ord not in (0, -1),
    )


@pytest.mark.parametrize("ord", ORDERS)
def test_vector_norms_of_complex_tensors_match_torch(ord) -> None:
    compare(
        lambda lib, x: _vector_norm(lib, x, ord, (1,)),
        M + 1j * M[::-1],
        create_graph=ord != 0,
    )


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 1.5, INF])
def test_vector_norm_gradients_at_zero_and_ties(ord) -> None:
    data = np.array([[0.0, 0.0, 0.0], [3.0, -3.0, 1.0], [0.0, 2.0, -2.0]])
    compare(lambda lib, x: _vector_norm(lib, x, ord, (1,)), data)


def test_vector_norm_dtypes_match_torch() -> None:
    compare(lambda lib, x: _vector_norm(lib, x), M.astype(np.float32))
    compare(lambda lib, x: _vector_norm(lib, x, 1, (0,)), M.astype(np.complex64))
    compare(
        lambda lib, x: _vector_norm(lib, x, 2, None, False, dtype=lib.float64),
        M.astype(np.float32),
    )
    compare(
        lambda lib, x: _vector_norm(lib, x, INF, (0,), dtype=lib.complex128),
        M.astype(np.complex64),
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: _vector_norm(lib, lib.ones(2, dtype=lib.int64)),
        lambda lib: _vector_norm(lib, lib.ones(2) > 0),
        lambda lib: _vector_norm(lib, lib.ones(2), 1j),
        lambda lib: _vector_norm(lib, lib.ones(0), INF),
        lambda lib: _vector_norm(lib, lib.ones(0), -INF),
        lambda lib: _vector_norm(lib, lib.ones(2, 0), INF, 1),
        lambda lib: _vector_norm(lib, lib.ones(2), dtype=lib.int64),
        lambda lib: _vector_norm(lib, lib.ones(2), dtype=lib.complex64),
        lambda lib: _vector_norm(lib, lib.ones(2) * 1j, dtype=lib.float32),
        lambda lib: _vector_norm(
            lib, lib.ones(2, dtype=lib.float64), dtype=lib.float32
        ),
        lambda lib: lib.norm(lib.ones(2, dtype=lib.int64)),
        lambda lib: lib.ones(2, 2, dtype=lib.int64).norm(1, 0),
    ],
    ids=[
        "int",
        "bool",
        "complex-ord",
        "empty-inf",
        "empty-minus-inf",
        "empty-dim-inf",
        "int-dtype",
        "complex-dtype-for-real",
        "real-dtype-for-complex",
        "narrowing",
        "norm-int",
        "norm-dim-int",
    ],
)
def test_vector_norm_errors_are_torchs(fn) -> None:
    same_error(fn)


def test_vector_norm_of_an_empty_tensor() -> None:
    compare(lambda lib, x: _vector_norm(lib, x[:0]), M)
    compare(lambda lib, x: _vector_norm(lib, x[:, :0], INF, 0), M)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.norm(),
        lambda lib, x: lib.norm(x, 1),
        lambda lib, x: x.norm(INF),
        lambda lib, x: x.norm(0),
        lambda lib, x: lib.norm(x, 2, 1),
        lambda lib, x: x.norm(p=3, dim=(0, 1), keepdim=True),
        lambda lib, x: x.norm(None, 0),
        lambda lib, x: lib.norm(x, -INF, -1),
        lambda lib, x: x[0, 0].norm(2, 0),
    ],
)
def test_norm_matches_torch(fn) -> None:
    compare(fn, M, create_graph=True)
    compare(fn, M.astype(np.float32))


@pytest.mark.parametrize(
    "fn, arrays",
    [
        (lambda lib, a, b: lib.dist(a, b), (M, M[0])),
        (lambda lib, a, b: a.dist(b, 1), (M, M[:, :1])),
        (lambda lib, a, b: lib.dist(a, b, INF), (M, M * 0.5)),
        (lambda lib, a, b: lib.dist(a, b, 3.5), (M, M[::-1])),
        (lambda lib, a, b: lib.dist(a, b), (M, M)),
        (lambda lib, a, b: lib.dist(a, b), (M.astype(np.float32), M)),
        (lambda lib, a, b: lib.dist(a, b, 1), (M + 1j, M * 1j)),
    ],
)
def test_dist_matches_torch(fn, arrays) -> None:
    compare(fn, *arrays, create_graph=True)


def test_dist_with_p_zero_counts_and_has_no_gradient() -> None:
    a = gradgen.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = gradgen.tensor([1.0, 0.0, 3.5], requires_grad=True)
    d = gradgen.dist(a, b, 0)
    assert d.item() == 2.0
    assert gradgen.autograd.grad(d, (a, b), allow_unused=True) == (None, None)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.dist(
            lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)
        ),
        lambda lib: lib.dist(lib.ones(2) > 0, lib.ones(2) > 0),
        lambda lib: lib.dist(lib.ones(3), lib.ones(2)),
    ],
    ids=["int", "bool", "shapes"],
)
def test_dist_errors_are_torchs(fn) -> None:
    same_error(fn)


def test_norms_pass_gradcheck_and_gradgradcheck() -> None:
    x = gradgen.tensor(M, dtype=gradgen.float64, requires_grad=True)
    for ord in (2, 1, 3, 0.5, 1.5, INF, -INF):
        assert gradcheck(lambda t: _vector_norm(gradgen, t, ord, (1,), True) * t, (x,))
        assert gradgradcheck(lambda t: _vector_norm(gradgen, t, ord, (0,)), (x,))
    c = gradgen.tensor(M + 1j * M[::-1], requires_grad=True)
    assert gradcheck(lambda t: t.norm(2, 1), (c,), check_forward_ad=True)
    assert gradgradcheck(lambda t: t.norm(3, 0), (c,))
