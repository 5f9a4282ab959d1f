"""any, all, allclose, equal, sort and topk beyond the operator table."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from torch_compare import same_error
from torch_oracle import oracle
from ops.writes_checks import INF, INT, M, NAN, compare

pytestmark = pytest.mark.filterwarnings(
    "ignore:(divide by zero|invalid value|overflow) encountered:RuntimeWarning"
)


# -- any, all, allclose, equal ------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: x.any(), INT),
        (lambda lib, x: x.all(), INT),
        (lambda lib, x: x.any(1), INT),
        (lambda lib, x: x.all(0, keepdim=True), INT),
        (lambda lib, x: x.any((0, 1)), INT),
        (lambda lib, x: x.any([]), INT),
        (lambda lib, x: x.all([], True), INT),
        (lambda lib, x: x.all(None, True), INT),
        (lambda lib, x: x.any(dim=None), M),
        (lambda lib, x: (x > 2).all(-1), M),
        (lambda lib, x: x.any(), M * 1j),
        (lambda lib, x: x[:0].all(), M),
        (lambda lib, x: x[:0].any(), M),
        (lambda lib, x: x[:0].any(0), M),
        (lambda lib, x: x[0, 0].all(0), M),
    ],
)
def test_any_and_all_match_torch(fn, data) -> None:
    compare(fn, data)


def test_any_and_all_errors_are_torchs() -> None:
    same_error(lambda lib: lib.ones(2, 3).all(3))
    same_error(lambda lib: lib.ones(2, 3).any((0, 0)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.allclose(x, x + 1e-9),
        lambda lib, x: lib.allclose(x, x + 1e-3),
        lambda lib, x: x.allclose(x + 1e-3, rtol=0.0, atol=1e-2),
        lambda lib, x: lib.allclose(x, x[0]),
        lambda lib, x: lib.allclose(x * NAN, x * NAN),
        lambda lib, x: lib.allclose(x * NAN, x * NAN, equal_nan=True),
        lambda lib, x: lib.allclose(x * INF, x * INF),
        lambda lib, x: lib.allclose(x > 0, x > 0),
        lambda lib, x: lib.allclose(
            (x.detach() * 10).to(lib.int64), (x.detach() * 10).to(lib.int64) + 1, atol=1
        ),
        lambda lib, x: lib.equal(x, x * 1),
        lambda lib, x: x.equal(x[0]),
        lambda lib, x: lib.equal(x, x.to(lib.float32)),
        lambda lib, x: lib.equal(x * NAN, x * NAN),
        lambda lib, x: lib.equal(x > 0, x > 0),
    ],
)
def test_allclose_and_equal_return_torchs_bool(fn) -> None:
    ours = fn(gradgen, gradgen.tensor(M, requires_grad=True))
    theirs = oracle("result", lambda t: fn(t, t.tensor(M, requires_grad=True)))
    assert type(ours) is bool and type(theirs) is bool and ours == theirs


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.allclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
        lambda lib: lib.allclose(lib.ones(2, dtype=lib.int64), lib.ones(2)),
        lambda lib: lib.allclose(lib.ones(3), lib.ones(2)),
        lambda lib: lib.allclose(lib.ones(2), lib.ones(2), rtol=-1.0),
        lambda lib: lib.allclose(lib.ones(2), lib.ones(2), atol=-0.5),
    ],
    ids=["dtypes", "int-float", "shapes", "rtol", "atol"],
)
def test_allclose_errors_are_torchs(fn) -> None:
    same_error(fn)


# -- sort and topk ------------------------------------------------------------------------

TIES = np.array(
    [[2.0, 1.0, 2.0, NAN, 1.0], [3.0, -1.0, 3.0, 3.0, 0.0], [0.0, -0.0, 5.0, NAN, NAN]]
)


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: x.sort(), M),
        (lambda lib, x: lib.sort(x, 0, True), M),
        (lambda lib, x: x.sort(descending=True), TIES),
        (lambda lib, x: x.sort(0), TIES),
        (lambda lib, x: x.sort(stable=True), TIES),
        (lambda lib, x: x.sort(stable=True, descending=True, dim=0), TIES),
        (lambda lib, x: lib.sort(x, stable=None), TIES),
        (lambda lib, x: x.sort(), INT),
        (lambda lib, x: x.sort(0, True), INT > 2),
        (lambda lib, x: x.sort(), M.astype(np.float32)),
        (lambda lib, x: x[0, 0].sort(), M),
        (lambda lib, x: x[:0].sort(0), M),
        (lambda lib, x: x.topk(2), M),
        (lambda lib, x: lib.topk(x, 2, 0, largest=False), M),
        (lambda lib, x: x.topk(0), M),
        (lambda lib, x: x.topk(4), M),
        (lambda lib, x: x.topk(2, -1, False), INT),
        (lambda lib, x: x.topk(1), M.astype(np.float32)),
        (lambda lib, x: x[1, 1].topk(1), M),
    ],
)
@pytest.mark.parametrize("output", ["values", "indices"])
def test_sort_and_topk_match_torch(fn, data, output: str) -> None:
    compare(lambda lib, x: getattr(fn(lib, x), output), data, create_graph=True)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_topk_values_with_ties_and_nan_match_torch(k: int) -> None:
    """Which of equal elements topk picks is unspecified in PyTorch (its CPU kernel
    partially sorts); the values are not, nor is NaN being the largest."""
    compare(lambda lib, x: x.detach().topk(k, 1).values, TIES)
    compare(lambda lib, x: x.detach().topk(k, 1, largest=False).values, TIES)


def test_sort_and_topk_return_named_tuples() -> None:
    x = gradgen.tensor([3.0, 1.0, 2.0], requires_grad=True)
    result = x.sort()
    assert type(result).__name__ == "sort" and result[0] is result.values
    assert result.indices.tolist() == [1, 2, 0] and not result.indices.requires_grad
    top = gradgen.topk(x, 2)
    assert type(top).__name__ == "topk" and top.values.tolist() == [3.0, 2.0]
    assert top.indices.dtype == gradgen.int64


def test_topk_unsorted_selects_the_same_elements() -> None:
    data = np.random.default_rng(0).normal(size=(3, 10))
    ours = gradgen.tensor(data).topk(4, sorted=False)
    theirs = oracle(
        "indices", lambda t: t.tensor(data).topk(4, sorted=False).indices.tolist()
    )
    assert len(theirs) == 3
    for o, t in zip(ours.indices.tolist(), theirs):
        assert sorted(o) == sorted(t)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.sort(lib.ones(2, 2), 2),
        lambda lib: lib.sort(lib.ones(2) * 1j),
        lambda lib: lib.topk(lib.ones(2, 3), 4),
        lambda lib: lib.topk(lib.ones(3), -1),
        lambda lib: lib.topk(lib.ones(3) * 1j, 1),
        lambda lib: lib.topk(lib.ones(3) > 0, 1),
        lambda lib: lib.topk(lib.ones(3), 1, 1),
    ],
    ids=[
        "sort-dim",
        "sort-complex",
        "topk-k",
        "topk-negative",
        "topk-complex",
        "topk-bool",
        "topk-dim",
    ],
)
def test_sort_and_topk_errors_are_torchs(fn) -> None:
    same_error(fn)
