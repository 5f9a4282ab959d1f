"""gather, scatter, scatter_add, scatter_reduce, index_*, masked_*, take, put and their
in-place forms beyond the operator table: duplicates in the index (gradients that add
up), ties in amax/amin, empty and 0-d tensors, negative dims and indices, int dtypes,
and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from torch_compare import compare, same_error
from torch_oracle import oracle

X = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 0.0, -6.0, 2.5], [0.5, 7.0, 0.0, -1.0]])
S = np.array([[0.5, 2.0, -1.0, 3.0], [1.5, -0.5, 2.0, 0.0], [2.0, 1.0, 0.0, -3.0]])
TIES = np.array([[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]])  # equal values for amax/amin


def _index(lib, rows):
    return lib.tensor(rows)


# -- scatter_add and scatter_reduce with duplicate positions ------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        # duplicates in the index: src gradients are read at their positions, self's
        # gradient passes through, and the written values add up
        lambda lib, x, s: x.scatter_add(
            1, _index(lib, [[0, 0, 0], [1, 1, 3]]), s[:2, :3]
        ),
        lambda lib, x, s: lib.scatter_add(x, -2, _index(lib, [[2, 2, 2, 2]]), s[:1]),
        lambda lib, x, s: (x * 1.0).scatter_add_(0, _index(lib, [[1, 1, 0, 1]]), s[1:2])
        * x,
        lambda lib, x, s: x.scatter(1, _index(lib, [[3, 1], [0, 2]]), s[:2, :2]),
        lambda lib, x, s: (x * 2.0).scatter_(-1, _index(lib, [[3], [0]]), 1.5) * x,
    ],
)
def test_scatter_and_scatter_add_match_torch(fn) -> None:
    compare(fn, X, S, create_graph=True)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_with_duplicates_matches_torch(reduce, include_self) -> None:
    index = [[0, 0, 2, 0], [1, 3, 3, 1], [2, 2, 2, 2]]

    def fn(lib, x, s):
        return x.scatter_reduce(
            1, _index(lib, index), s, reduce, include_self=include_self
        )

    compare(fn, X, S, create_graph=reduce in ("sum", "mean"))


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_scatter_reduce_shares_the_gradient_among_ties(reduce) -> None:
    """Two src values equal to the result (and self equal to it) split the gradient."""
    src = np.array([[2.0, 2.0, 1.0], [3.0, 1.0, 3.0]])
    compare(
        lambda lib, x, s: x.scatter_reduce(
            1, _index(lib, [[1, 1, 0], [0, 2, 0]]), s, reduce
        ),
        TIES,
        src,
    )


def test_scatter_reduce_prod_with_zeros_matches_torch() -> None:
    """A single zero at a position still gets the product of the others."""
    src = np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]])
    compare(
        lambda lib, x, s: x.scatter_reduce(
            1, _index(lib, [[0, 0, 1], [2, 1, 1]]), s, "prod"
        ),
        np.array([[1.5, 0.0, 2.0], [3.0, 2.0, -1.0]]),
        src,
    )


def test_scatter_reduce_of_integers_is_floor_mean() -> None:
    compare(
        lambda lib, x: lib.tensor([1, 2, 3]).scatter_reduce(
            0, lib.tensor([0, 0, 1]), lib.tensor([4, 5, 6]), "mean"
        )
        * x,
        np.array([1.0, 1.0, 1.0]),
    )


def test_scatter_reduce_forward_mode_of_every_reduction() -> None:
    from gradgen.autograd import forward_ad

    x = gradgen.tensor(X)
    s = gradgen.tensor(S)
    index = gradgen.tensor([[0, 0, 2, 0], [1, 3, 3, 1], [2, 2, 2, 2]])
    tx = gradgen.tensor(np.full(X.shape, 0.25))
    ts = gradgen.tensor(np.linspace(-1, 1, 12).reshape(3, 4))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            with forward_ad.dual_level():
                out = forward_ad.make_dual(x, tx).scatter_reduce(
                    1,
                    index,
                    forward_ad.make_dual(s, ts),
                    reduce,
                    include_self=include_self,
                )
                tangent = forward_ad.unpack_dual(out).tangent
            h = 1e-6

            def at(step):
                return (
                    (gradgen.tensor(X + step * tx.numpy()))
                    .scatter_reduce(
                        1,
                        index,
                        gradgen.tensor(S + step * ts.numpy()),
                        reduce,
                        include_self=include_self,
                    )
                    .numpy()
                )

            expected = (at(h) - at(-h)) / (2 * h)
            np.testing.assert_allclose(tangent.numpy(), expected, atol=1e-6)


# -- index_add, index_copy, index_fill, index_select ---------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, s: x.index_add(0, lib.tensor([2, 2, 0]), s, alpha=-1.5),
        lambda lib, x, s: (x * 1.0).index_add_(-1, lib.tensor([1, 1, 1, 0]), s) * x,
        lambda lib, x, s: x.index_copy(-1, lib.tensor([3, 0, 1, 2]), s),
        lambda lib, x, s: (x * 1.0).index_copy_(0, lib.tensor([1]), s[1:2]) * s,
        lambda lib, x, s: x.index_fill(1, lib.tensor([-1, 0]), -2.0) * s,
        lambda lib, x, s: (x * s).index_fill_(0, lib.tensor([2, 2]), s[0, 1]),
        lambda lib, x, s: x.index_select(-1, lib.tensor([3, 3, 0])) * s[:, :3],
    ],
)
def test_index_operators_match_torch(fn) -> None:
    compare(fn, X, S, create_graph=True)


def test_index_operators_on_0d_and_empty_tensors() -> None:
    compare(
        lambda lib, x: x[0, 0].index_fill(0, lib.tensor([0]), 2.0) + x[0, 0] * 2.0, X
    )
    compare(lambda lib, x: x[0, 0].index_copy(0, lib.tensor([0]), x[1, 1] * 3.0), X)
    compare(
        lambda lib, x: x[:, :0].index_add(1, lib.tensor([], dtype=lib.int64), x[:, :0]),
        X,
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(2, 3).index_copy(0, lib.tensor([5]), lib.ones(1, 3)),
        lambda lib: lib.ones(2, 3).index_copy(0, lib.tensor([1.0]), lib.ones(1, 3)),
        lambda lib: lib.ones(2, 3).index_copy(0, lib.tensor([1, 0]), lib.ones(1, 3)),
        lambda lib: lib.ones(2, 3).index_copy(0, lib.tensor([[1]]), lib.ones(1, 3)),
        lambda lib: lib.ones(2, 3).index_copy(0, lib.tensor([1]), lib.ones(1, 2)),
        lambda lib: lib.ones(2, 3).index_copy(
            0, lib.tensor([1]), lib.ones(1, 3, dtype=lib.float64)
        ),
        lambda lib: lib.ones(2, 3).index_fill(0, lib.tensor([5]), 1.0),
        lambda lib: lib.ones(2, 3).index_fill(0, lib.tensor([1], dtype=lib.int32), 1.0),
        lambda lib: lib.ones(2, 3).index_fill(0, lib.tensor([[1]]), 1.0),
        lambda lib: lib.ones(2, 3).index_fill(0, lib.tensor([1]), lib.ones(2)),
        lambda lib: lib.ones(2, 3).index_add(0, lib.tensor([2]), lib.ones(1, 3)),
    ],
)
def test_index_errors_are_torchs(fn) -> None:
    same_error(fn)


# -- masked_select, masked_scatter ----------------------------------------------------------

MASK = np.array([[True], [False], [True]])


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, s: x.masked_select(lib.tensor(MASK)),  # mask broadcast to x
        lambda lib, x, s: x[0].masked_select(lib.tensor(MASK)),  # x broadcast to mask
        lambda lib, x, s: lib.masked_select(x, x > 0.5) * 2.0,
        lambda lib, x, s: x.masked_scatter(x > 0.5, s),
        lambda lib, x, s: x[1].masked_scatter(lib.tensor(MASK), s.flatten()),
        lambda lib, x, s: (x * 1.0).masked_scatter_(lib.tensor(MASK), s) * x,
    ],
)
def test_masked_operators_match_torch(fn) -> None:
    compare(fn, X, S, create_graph=True)


def test_masked_select_of_empty_mask_and_tensor() -> None:
    compare(lambda lib, x: x.masked_select(x > 100.0), X)
    compare(lambda lib, x: x[:0].masked_select(x[:0] > 0), X)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(2, 3).masked_select(lib.tensor([1, 0, 1])),
        lambda lib: lib.ones(2, 3).masked_select(lib.tensor([True, False])),
        lambda lib: lib.ones(2, 3).masked_scatter(
            lib.tensor([True, False, True]), lib.ones(3)
        ),
        lambda lib: lib.ones(2, 3).masked_scatter(
            lib.tensor([True, False, True]), lib.ones(4, dtype=lib.float64)
        ),
        lambda lib: lib.ones(2, 3).masked_scatter(lib.tensor([1, 0, 1]), lib.ones(4)),
    ],
)
def test_masked_errors_are_torchs(fn) -> None:
    same_error(fn)


# -- take, put, take_along_dim, gather ---------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, s: x.take(lib.tensor([[0, 0], [-1, 11]])),  # twice, negative
        lambda lib, x, s: lib.take(x[0, 0], lib.tensor([0, -1, 0])),
        lambda lib, x, s: x.put(lib.tensor([1, 1, -1]), s[0, :3], accumulate=True),
        lambda lib, x, s: x.put(lib.tensor([[2, 0]]), s[1, :2]) * s,
        lambda lib, x, s: (x * 1.0).put_(lib.tensor([5, 5]), s[2, :2], True) * x,
        lambda lib, x, s: lib.take_along_dim(x, lib.tensor([[3], [0], [0]]), -1) * s,
        lambda lib, x, s: x.take_along_dim(lib.tensor([[1, 1, 0, 2]]), dim=0),
        lambda lib, x, s: x.take_along_dim(lib.tensor([11, 0, 0])),
        lambda lib, x, s: x.gather(-1, lib.tensor([[0, 0], [3, 3], [1, 0]])) * s[:, :2],
    ],
)
def test_take_put_and_gather_match_torch(fn) -> None:
    compare(fn, X, S, create_graph=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(2, 3).take(lib.tensor([6])),
        lambda lib: lib.ones(2, 3).take(lib.tensor([-7])),
        lambda lib: lib.ones(2, 3).take(lib.tensor([1], dtype=lib.int32)),
        lambda lib: lib.ones(0).take(lib.tensor([0])),
        lambda lib: lib.ones(2, 3).put(lib.tensor([1, 2]), lib.ones(1)),
        lambda lib: lib.ones(2, 3).put(lib.tensor([1.0]), lib.ones(1)),
        lambda lib: lib.ones(2, 3).put(lib.tensor([1]), lib.ones(1, dtype=lib.float64)),
        lambda lib: lib.take_along_dim(lib.ones(2, 3), lib.tensor([0.0]), 0),
        lambda lib: lib.take_along_dim(lib.ones(2, 3), lib.tensor([0, 1]), 1),
        lambda lib: lib.ones(2, 3).gather(1, lib.tensor([[3]])),
        lambda lib: lib.ones(2, 3).gather(1, lib.tensor([[1.0]])),
        lambda lib: lib.ones(2, 3).scatter_reduce(
            0, lib.tensor([[0]]), lib.ones(2, 3), "add"
        ),
        lambda lib: lib.ones(2, 3).scatter_reduce(
            0, lib.tensor([[0]]), lib.ones(2, 3, dtype=lib.int64), "sum"
        ),
        lambda lib: lib.ones(2, 3).scatter_add(0, lib.tensor([[2]]), lib.ones(2, 3)),
    ],
)
def test_take_put_gather_and_scatter_errors_are_torchs(fn) -> None:
    same_error(fn)


def test_in_place_forms_write_into_self_and_return_it() -> None:
    x = gradgen.zeros(2, 3)
    index = gradgen.tensor([[0, 2]])
    assert x.scatter_(1, index, 4.0) is x
    assert x.scatter_add_(1, index, gradgen.ones(1, 2)) is x
    assert x.index_fill_(0, gradgen.tensor([1]), -1.0) is x
    assert x.put_(gradgen.tensor([1]), gradgen.tensor([7.0])) is x
    np.testing.assert_array_equal(x.numpy(), [[5.0, 7.0, 5.0], [-1.0, -1.0, -1.0]])


def test_in_place_scatter_records_the_functional_backward() -> None:
    x = gradgen.tensor(X, requires_grad=True)
    y = x * 1.0
    y.scatter_add_(0, gradgen.tensor([[1, 1, 0, 1]]), gradgen.ones(1, 4).double())
    assert y.grad_fn.name() == "ScatterAddBackward0"
    z = x * 1.0
    z.index_add_(0, gradgen.tensor([0]), gradgen.ones(1, 4).double())
    assert z.grad_fn.name() == "IndexAddBackward0"


@pytest.mark.parametrize("alias, name", [("max", "amax"), ("min", "amin")])
def test_scatter_reduce_takes_max_and_min_for_amax_and_amin(alias, name) -> None:
    """As values only: PyTorch's backward refuses the aliases (tested below)."""

    def fn(lib, x, s):
        index = _index(lib, [[0, 0, 2, 0], [1, 3, 3, 1], [2, 2, 2, 2]])
        x, s = x.detach(), s.detach()
        return x.scatter_reduce(1, index, s, alias) + x.scatter_reduce(
            1, index, s, name
        )

    compare(fn, X, S)
    same_error(lambda lib: _alias_backward(lib, alias))


def _alias_backward(lib, alias):
    x = lib.ones(3, requires_grad=True)
    y = x.scatter_reduce(0, lib.tensor([0, 0]), lib.ones(2), alias)
    return lib.autograd.grad(y.sum(), x)


def test_a_src_larger_than_the_index_fails_in_backward_as_in_torch() -> None:
    """gather reads src's gradient at index's shape; PyTorch's engine, and gradgen's,
    refuse a gradient of another shape than src's."""

    def fn(lib):
        s = lib.ones(3, 4, dtype=lib.float64, requires_grad=True)
        y = lib.zeros(3, 4, dtype=lib.float64).scatter_add(1, lib.tensor([[0, 1]]), s)
        return lib.autograd.grad(y.sum(), s)

    same_error(fn)


# -- index_reduce and the scatters of views ------------------------------------------------


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_with_a_repeated_index_matches_torch(reduce, include_self) -> None:
    def fn(lib, x, s):
        return x.index_reduce(
            1, lib.tensor([0, 3, 0, 0]), s, reduce, include_self=include_self
        )

    compare(fn, X, S)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(2, 3).index_reduce(
            0, lib.tensor([0]), lib.ones(1, 3), "sum"
        ),
        lambda lib: lib.ones(2, 3).index_reduce(
            0, lib.tensor([2]), lib.ones(1, 3), "prod"
        ),
        lambda lib: lib.ones(2, 3).slice_scatter(lib.ones(2, 2), 1, 1, 2),
        lambda lib: lib.ones(2, 3).select_scatter(lib.ones(2), 0, 0),
        lambda lib: lib.ones(2, 3).select_scatter(lib.ones(3), 0, 2),
        lambda lib: lib.ones(2, 3).diagonal_scatter(lib.ones(3)),
        lambda lib: lib.ones(2, 3).index_add(1, lib.tensor([3]), lib.ones(2, 1)),
    ],
)
def test_index_reduce_and_view_scatter_errors_are_torchs(fn) -> None:
    same_error(fn)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, s: x.slice_scatter(s[:, 1:3], 1, 1, 3),
        lambda lib, x, s: lib.slice_scatter(x, s[:2], start=-2),
        lambda lib, x, s: x.slice_scatter(s[:, :2], -1, 0, None, 2) * x,
        lambda lib, x, s: x.select_scatter(s[:, 0] * s[:, 1], -1, -1),
        lambda lib, x, s: lib.diagonal_scatter(x, s[0, :3]) * s,
        lambda lib, x, s: x.diagonal_scatter(s[1, :2], -1),
        lambda lib, x, s: x.t().diagonal_scatter(s[2, :2], 2, 1, 0),
    ],
)
def test_view_scatters_match_torch(fn) -> None:
    compare(fn, X, S, create_graph=True)


def test_an_undefined_gradient_passes_through_a_conditional_formula() -> None:
    """`a if c else b` formulas (index_copy's source, put's self) give None for an
    undefined gradient on either branch, not an error on the taken one."""
    from gradgen.generated import functions

    index = gradgen.tensor([1])
    source = gradgen.ones(1, 3)
    assert functions.index_copy_backward0_apply(
        [None], (True, True), dim=0, index=index, source=source, source_dim=2
    ) == [None, None]
    y = gradgen.zeros(2, 3, requires_grad=True).put(index, gradgen.ones(1))
    assert y.grad_fn.apply([None]) == [None, None]


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, s: x.detach().scatter(
            1, _index(lib, [[0, 0], [3, 3]]), s.detach(), reduce="multiply"
        )
        * x,
        lambda lib, x, s: lib.scatter(
            x.detach(), 0, _index(lib, [[2, 2, 0, 0]]), 0.5, reduce="add"
        )
        * s,
        lambda lib, x, s: x.detach()
        .clone()
        .scatter_(0, _index(lib, [[1, 1, 1, 1]]), 2.0, reduce="multiply")
        * x,
    ],
)
def test_scatter_with_the_old_reduce_keyword_matches_torch(fn) -> None:
    compare(fn, X, S)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_scatter_with_the_old_reduce_keyword_errors_are_torchs() -> None:
    same_error(
        lambda lib: lib.zeros(2, 3).scatter(0, lib.tensor([[0]]), 2.0, reduce="mean")
    )

    def backward(lib):
        x = lib.zeros(2, 3, requires_grad=True)
        y = x.scatter(0, lib.tensor([[0, 1, 0]]), 2.0, reduce="add")
        return lib.autograd.grad(y.sum(), x)

    same_error(backward)


SURFACE = (
    """gather scatter scatter_ scatter_add scatter_add_ scatter_reduce scatter_reduce_
index_select index_add index_add_ index_copy index_copy_ index_fill index_fill_ index_put
index_put_ index_reduce index_reduce_ masked_scatter masked_scatter_ masked_select take
take_along_dim put put_ slice_scatter select_scatter diagonal_scatter cumsum cumsum_
cumprod cumprod_ logcumsumexp cummax cummin sort argsort msort topk kthvalue median
nanmedian mode searchsorted bucketize unique unique_consecutive nonzero argwhere histc
bincount count_nonzero prod std var std_mean var_mean amax amin aminmax logsumexp nansum
nanmean diff""".split()
)


def test_the_indexing_scan_and_sorting_names_are_torchs() -> None:
    """Each is a function and a Tensor method exactly where PyTorch has one."""

    def surface(lib):
        return [[hasattr(lib, n), hasattr(lib.Tensor, n)] for n in SURFACE]

    assert surface(gradgen) == oracle("surface", surface)
