"""Sorting and selection beyond the operator table: sort (stable, descending), argsort,
msort, topk, kthvalue, median, nanmedian and mode with ties (which index gets the
gradient, as PyTorch's), NaN, 0-d and empty tensors, negative dims; and the counting
operators searchsorted, bucketize, unique, unique_consecutive, nonzero, histc and
bincount (values, int64 results, PyTorch's errors)."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from torch_compare import compare, same_error
from torch_oracle import oracle

NAN = float("nan")

X = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 0.0, -6.0, 2.5], [0.5, 7.0, 0.0, -1.0]])
TIES = np.array([[1.0, 3.0, 3.0, 2.0, 3.0, 1.0], [2.0, 2.0, 1.0, 1.0, 5.0, 5.0]])
WITH_NAN = np.array([[1.0, NAN, 3.0, 2.0], [4.0, 0.5, -1.0, NAN], [0.5, 2.0, 2.0, 1.0]])


# -- sort, argsort, msort, topk with ties ------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.sort(stable=True).values * x.sort(stable=True).indices,
        lambda lib, x: x.sort(1, descending=True).values * 1.0,
        lambda lib, x: lib.sort(x, stable=True, dim=-1, descending=True).indices * x,
        lambda lib, x: x.argsort(dim=-1, descending=True) * x,
        lambda lib, x: lib.argsort(x, stable=True, dim=0) * x,
        lambda lib, x: lib.msort(x.t()),
    ],
)
def test_sorting_with_ties_matches_torch(fn) -> None:
    """Equal values keep their order (stable), so each gets its own gradient back."""
    compare(fn, TIES, create_graph=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.sort(0).values,
        lambda lib, x: x.argsort(1) * x,
        lambda lib, x: x[0, 0].argsort() * x,
        lambda lib, x: x[:0].argsort(0).sum() * x,
        lambda lib, x: lib.msort(x[:, :0]),
    ],
)
def test_sorting_with_nan_0d_and_empty_matches_torch(fn) -> None:
    compare(fn, WITH_NAN)


# -- kthvalue, median, nanmedian, mode ---------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.median(1).values * 1.0,
        lambda lib, x: lib.median(x, -1, keepdim=True).indices * x,
        lambda lib, x: lib.median(x) * x,  # ties share the gradient of a full median
        lambda lib, x: x.nanmedian() * x,
        lambda lib, x: x.mode(1).values * 1.0,
        lambda lib, x: lib.mode(x, -1, True).indices * x,
        lambda lib, x: x.mode(0).values * x.mode(0).indices,
    ],
)
def test_selection_with_ties_matches_torch(fn) -> None:
    compare(fn, TIES, create_graph=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.kthvalue(3, 1).values * x.topk(3, 1).values.sum(),
        lambda lib, x: lib.kthvalue(x, 1, 0).values * x.topk(2, 0, largest=False)[0],
    ],
)
def test_kthvalue_and_topk_values_with_ties_match_torch(fn) -> None:
    """Among equal values PyTorch's selection (a quickselect) picks no documented
    index: gradgen picks the stable order's, so only values are compared here; the
    gradient goes to one of the equal elements (numerically checked below)."""
    compare(lambda lib, x: fn(lib, x.detach()), TIES)


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_kthvalue_gradient_with_ties_goes_to_one_equal_element(k) -> None:
    x = gradgen.tensor(TIES, requires_grad=True)
    values, indices = x.kthvalue(k, 1)
    (grad,) = gradgen.autograd.grad(values.sum(), x)
    expected = np.zeros(TIES.shape)
    expected[np.arange(2), indices.numpy()] = 1.0
    np.testing.assert_array_equal(grad.numpy(), expected)
    picked = values.detach().numpy()
    np.testing.assert_array_equal(TIES[np.arange(2), indices.numpy()], picked)
    np.testing.assert_array_equal(picked, np.sort(TIES, 1)[:, k - 1])


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.kthvalue(2, 1).values * x.topk(2, 1).values.sum(1),
        lambda lib, x: lib.kthvalue(x, 3, -1, True).indices * x,
    ],
)
def test_kthvalue_and_topk_without_ties_match_torch(fn) -> None:
    compare(fn, X, create_graph=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.median(),  # NaN: the gradient goes to the NaN
        lambda lib, x: x.median(1).values * x.median(1).indices,
        lambda lib, x: x.nanmedian() * x,
        lambda lib, x: x.nanmedian(1).values * x.nanmedian(1).indices,
        lambda lib, x: x.nanmedian(0, True).values * x,
        lambda lib, x: x[:2].kthvalue(4, 1).values,  # NaN sorts last
    ],
)
def test_selection_with_nan_matches_torch(fn) -> None:
    compare(fn, WITH_NAN)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x[1, 1].median() * x[1, 1].kthvalue(1).values,
        lambda lib, x: x[1, 1].mode().values * x[1, 1].median(0).values,
        lambda lib, x: x[1, 1].nanmedian(-1, True).values * 2.0,
        lambda lib, x: x[:0].median(),
        lambda lib, x: x[:0].nanmedian(),
        lambda lib, x: lib.median(x[:, :3].long()).float() * x,
    ],
)
def test_selection_of_0d_empty_and_integer_tensors_matches_torch(fn) -> None:
    compare(fn, X)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(2, 3).kthvalue(4, 1),
        lambda lib: lib.ones(2, 3).kthvalue(0),
        lambda lib: lib.ones(2, 0).median(1),
        lambda lib: lib.ones(2, 0).mode(1),
        lambda lib: lib.ones(2, 3).median(2),
    ],
)
def test_selection_errors_are_torchs(fn) -> None:
    same_error(fn)


# -- searchsorted, bucketize -------------------------------------------------------------

BOUNDARIES = np.array([1.0, 2.0, 2.0, 4.0])
VALUES = np.array([[0.5, 2.0, 3.0], [4.0, 5.0, 1.0]])


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, v: lib.searchsorted(lib.tensor(BOUNDARIES), v) * v,
        lambda lib, v: lib.searchsorted(lib.tensor(BOUNDARIES), v, right=True) * v,
        lambda lib, v: lib.searchsorted(lib.tensor(BOUNDARIES), v, side="right") * v,
        lambda lib, v: lib.searchsorted(lib.tensor(BOUNDARIES), 2.0, out_int32=True)
        * v,
        lambda lib, v: lib.searchsorted(
            lib.tensor([[1.0, 3.0, 5.0], [0.0, 2.0, 4.0]]), v, right=True
        )
        * v,
        lambda lib, v: lib.searchsorted(
            lib.tensor([4.0, 1.0, 2.0]), v, sorter=lib.tensor([1, 2, 0])
        )
        * v,
        lambda lib, v: lib.bucketize(v, lib.tensor(BOUNDARIES)) * v,
        lambda lib, v: lib.bucketize(v, lib.tensor(BOUNDARIES), right=True) * v,
        lambda lib, v: lib.bucketize(2.0, lib.tensor(BOUNDARIES), out_int32=True) * v,
    ],
)
def test_searchsorted_and_bucketize_match_torch(fn) -> None:
    compare(fn, VALUES)


def test_searchsorted_results_are_int64_or_int32() -> None:
    def dtypes(lib):
        b = lib.tensor(BOUNDARIES)
        return [
            str(lib.searchsorted(b, lib.tensor(VALUES)).dtype).split(".")[1],
            str(lib.searchsorted(b, 2.0, out_int32=True).dtype).split(".")[1],
            str(lib.bucketize(lib.tensor(VALUES), b).dtype).split(".")[1],
        ]

    assert dtypes(gradgen) == oracle("dtypes", dtypes)


def test_searchsorted_accepts_a_sorted_sequence_that_requires_grad() -> None:
    boundaries = gradgen.tensor(BOUNDARIES, requires_grad=True)
    found = gradgen.searchsorted(boundaries, gradgen.tensor([2.5]))
    assert not found.requires_grad and found.tolist() == [3]


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.searchsorted(lib.ones(2, 3), lib.ones(3)),
        lambda lib: lib.searchsorted(lib.ones(3), 2.0, side="left", right=True),
        lambda lib: lib.searchsorted(lib.ones(3), lib.ones(2), side="lft"),
        lambda lib: lib.bucketize(lib.ones(2), lib.ones(2, 2)),
    ],
)
def test_searchsorted_errors_are_torchs(fn) -> None:
    same_error(fn)


# -- unique, unique_consecutive, nonzero, histc, bincount --------------------------------


def _flat(found):
    return [t.numpy() for t in (found if isinstance(found, tuple) else (found,))]


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, t: lib.unique(t),
        lambda lib, t: t.unique(sorted=False),
        lambda lib, t: lib.unique(t, return_inverse=True),
        lambda lib, t: t.unique(return_counts=True),
        lambda lib, t: lib.unique(t, return_inverse=True, return_counts=True),
        lambda lib, t: lib.unique(t, dim=1, return_inverse=True, return_counts=True),
        lambda lib, t: t.unique(dim=0),
        lambda lib, t: lib._unique2(t, True, True, True),
        lambda lib, t: lib.unique(t[:, :0]),
        lambda lib, t: lib.unique_consecutive(t),
        lambda lib, t: t.unique_consecutive(return_inverse=True, return_counts=True),
        lambda lib, t: lib.unique_consecutive(t, return_counts=True, dim=1),
        lambda lib, t: t.flatten().unique_consecutive(return_inverse=True),
        lambda lib, t: lib.unique_consecutive(t.float() * 0.5, dim=0),
    ],
)
def test_unique_and_unique_consecutive_match_torch(fn) -> None:
    """Values, inverse indices and counts (int64), and only those asked for."""
    data = [[3, 1, 3, 3], [2, 1, 1, 1], [2, 1, 1, 1]]

    def run(lib):
        return _flat(fn(lib, lib.tensor(data)))

    ours, theirs = run(gradgen), oracle("unique", run)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def test_unique_has_no_gradient_as_in_torch() -> None:
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return lib.autograd.grad(lib._unique2(x)[0].sum(), x)

    with pytest.raises(NotImplementedError, match="_unique2"):
        fn(gradgen)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.nonzero(x > 1, as_tuple=True),
        lambda lib, x: x.nonzero(as_tuple=True),
        lambda lib, x: x[0, 0].nonzero(as_tuple=True),
        lambda lib, x: (x[0, 0] * 0).nonzero(as_tuple=True),
        lambda lib, x: x.nonzero(as_tuple=False),
        lambda lib, x: lib.argwhere(x),
        lambda lib, x: x[0].argwhere(),
    ],
)
def test_nonzero_as_tuple_and_argwhere_match_torch(fn) -> None:
    def run(lib):
        return _flat(fn(lib, lib.tensor(X)))

    ours, theirs = run(gradgen), oracle("nonzero", run)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.nonzero(x).float(),
        lambda lib, x: (x > 1).nonzero().float(),
        lambda lib, x: x[0, 0].nonzero().float(),
        lambda lib, x: x[:0].nonzero().float(),
        lambda lib, x: lib.histc(x, 4) * 1.0,
        lambda lib, x: x.histc(3, -1, 2) * 1.0,  # out-of-range values left out
        lambda lib, x: x[0].histc(2, 1, 1) * 1.0,  # min == max: the data's range
        lambda lib, x: lib.bincount(lib.tensor([0, 3, 3, 1])).float(),
        lambda lib, x: lib.tensor([1, 1, 0]).bincount(minlength=5).float(),
        lambda lib, x: lib.bincount(lib.tensor([2, 2, 0]), x[0, :3].detach())
        * x[0, :3],
        lambda lib, x: lib.bincount(lib.tensor([2, 0]), lib.tensor([1, 2])),
        lambda lib, x: lib.bincount(lib.tensor([], dtype=lib.int64)).float(),
    ],
)
def test_counting_operators_match_torch(fn) -> None:
    compare(fn, X)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.bincount(lib.tensor([1, -1])),
        lambda lib: lib.bincount(lib.tensor([[1]])),
        lambda lib: lib.bincount(lib.tensor([1.0])),
        lambda lib: lib.histc(lib.tensor([1, 2]), 2),
        lambda lib: lib.histc(lib.tensor([1.0]), 2, 3, 1),
    ],
)
def test_counting_errors_are_torchs(fn) -> None:
    same_error(fn)


def test_bincount_weights_have_no_derivative_as_in_torch() -> None:
    def fn(lib):
        weights = lib.tensor([1.0, 2.0], requires_grad=True)
        counts = lib.bincount(lib.tensor([1, 1]), weights)
        return lib.autograd.grad(counts.sum(), weights)

    same_error(fn)


@pytest.mark.parametrize("right", [False, True])
def test_batched_searchsorted_with_many_ties_matches_torch(right) -> None:
    """Rows of boundaries full of repeated values, values equal to them."""
    rng = np.random.default_rng(11)
    boundaries = np.sort(rng.integers(0, 5, (3, 2, 6)).astype(float), -1)
    values = rng.integers(-1, 6, (3, 2, 5)).astype(float)

    def run(lib):
        return lib.searchsorted(
            lib.tensor(boundaries), lib.tensor(values), right=right
        ).numpy()

    np.testing.assert_array_equal(run(gradgen), oracle("found", run))
