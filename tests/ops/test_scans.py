"""Scans and the reductions added with them beyond the operator table: cumsum,
cumprod, logcumsumexp, cummax, cummin, diff, nansum, nanmean, aminmax, std_mean,
var_mean and count_nonzero, with ties, NaN, zeros, large values, empty and 0-d tensors,
negative dims, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

from torch_compare import compare, same_error

NAN = float("nan")
INF = float("inf")

X = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 0.0, -6.0, 2.5], [0.5, 7.0, 0.0, -1.0]])
TIES = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 1.0, 1.0, 0.5]])
WITH_NAN = np.array([[1.0, NAN, 3.0, 2.0], [4.0, 0.5, -1.0, NAN], [0.5, 2.0, 2.0, 1.0]])


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: x.cumsum(-1) * x, X),
        (lambda lib, x: lib.cumsum(x, 0, dtype=lib.float32), X),
        (lambda lib, x: x.cumprod(1), X),  # zeros in the rows
        (lambda lib, x: x[:, :0].cumprod(1), X),
        (lambda lib, x: x[0, 0].cumsum(0) * x[0, 0].cumprod(-1), X),
    ],
)
def test_cumsum_and_cumprod_match_torch(fn, data) -> None:
    compare(fn, data, create_graph=True)


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: x.logcumsumexp(1), X),
        (lambda lib, x: lib.logcumsumexp(x * 300.0, -2), X),  # no overflow
        (lambda lib, x: lib.logcumsumexp(x - 1000.0, 0), X),  # no underflow to -inf
        (lambda lib, x: x[0, 0].logcumsumexp(0), X),
        (lambda lib, x: x[:0].logcumsumexp(0), X),
    ],
)
def test_logcumsumexp_matches_torch(fn, data) -> None:
    compare(fn, data, create_graph=True)


def test_logcumsumexp_in_single_precision_matches_torch() -> None:
    compare(
        lambda lib, x: lib.logcumsumexp(x, 1), X.astype(np.float32), grad_rtol32=1e-5
    )


def test_logcumsumexp_with_minus_infinity_matches_torch() -> None:
    compare(
        lambda lib, x: lib.logcumsumexp(x, 1),
        np.array([[-INF, 0.0, 1.0], [2.0, -INF, -INF]]),
    )


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize(
    "data, dim",
    [(X, 1), (X, -2), (TIES, 1), (TIES, 0), (WITH_NAN, 1), (WITH_NAN, 0)],
)
def test_cummax_and_cummin_values_indices_and_gradients(name, data, dim) -> None:
    """Ties move the index on (the gradient goes to the last equal value); a NaN, once
    met, stays the extreme."""
    compare(lambda lib, x: getattr(x, name)(dim).values * 1.0, data, create_graph=True)
    compare(lambda lib, x: getattr(lib, name)(x, dim).indices * x, data)


def test_cummax_of_0d_and_empty_tensors_match_torch() -> None:
    compare(lambda lib, x: x[1, 1].cummax(0).values * 2.0, X)
    compare(lambda lib, x: x[1, 1].cummin(-1).indices * x, X)
    compare(lambda lib, x: x[:0].cummax(0).values, X)


def test_cummax_of_integers_matches_torch() -> None:
    compare(
        lambda lib, x: lib.tensor([[3, 1, 3], [0, 5, 5]]).cummax(1).indices * x,
        np.ones((2, 3)),
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.diff(x),
        lambda lib, x: x.diff(n=2, dim=0),
        lambda lib, x: x.diff(n=0),
        lambda lib, x: x.diff(n=5),  # more than the length: empty
        lambda lib, x: lib.diff(
            x, 1, -1, prepend=x[:, :1] * 2.0, append=x[:, 1:] * x[:, 1:]
        ),
        lambda lib, x: lib.diff(x > 0, dim=1) * x[:, 1:],
    ],
)
def test_diff_matches_torch(fn) -> None:
    compare(fn, X, create_graph=True)


def test_diff_errors_are_torchs() -> None:
    same_error(lambda lib: lib.diff(lib.tensor(1.0)))
    same_error(lambda lib: lib.diff(lib.ones(3), n=-1))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.nansum(x) * x,
        lambda lib, x: x.nansum(1, keepdim=True) * x,
        lambda lib, x: x.nansum((0, 1)),
        lambda lib, x: lib.nanmean(x, 0),
        lambda lib, x: x.nanmean() * x,
        lambda lib, x: x.nanmean(-1, True),
    ],
)
def test_nansum_and_nanmean_skip_nan(fn) -> None:
    compare(fn, WITH_NAN, create_graph=True)


def test_nansum_of_integers_and_nanmean_errors_match_torch() -> None:
    compare(lambda lib, x: lib.tensor([[1, 2], [3, 4]]).nansum(0) * x, np.ones(2))
    same_error(lambda lib: lib.nanmean(lib.tensor([1, 2])))


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: lib.aminmax(x).min * x + x.aminmax().max, X),
        (lambda lib, x: lib.aminmax(x, dim=-1).max * 2.0, TIES),  # ties share
        (lambda lib, x: x.aminmax(dim=0, keepdim=True).min * x, TIES),
        (lambda lib, x: x.aminmax(dim=1).max, WITH_NAN),
        (lambda lib, x: x[0, 0].aminmax().min * 2.0, X),
    ],
)
def test_aminmax_matches_torch(fn, data) -> None:
    compare(fn, data, create_graph=True)


def test_aminmax_errors_are_torchs() -> None:
    same_error(lambda lib: lib.aminmax(lib.ones(0)))
    same_error(lambda lib: lib.aminmax(lib.ones(2, 0), dim=1))


@pytest.mark.parametrize("name", ["std_mean", "var_mean"])
@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((), {}),
        ((False,), {}),
        (((1,), True, True), {}),
        ((None,), {"correction": 0}),
        (([0, 1],), {"correction": 2, "keepdim": True}),
        ((-1,), {"correction": 1.5}),
    ],
)
def test_std_mean_and_var_mean_match_torch(name, args, kwargs) -> None:
    def fn(lib, x):
        spread, mean = getattr(lib, name)(x, *args, **kwargs)
        return spread * 2.0 + mean * spread

    compare(fn, X, create_graph=True)


def test_std_mean_of_constant_rows_has_torchs_gradient() -> None:
    """std is 0 on a constant row: its gradient is 0 there, as PyTorch's."""
    compare(
        lambda lib, x: lib.std_mean(x, 1)[0] + lib.std_mean(x, 1)[1],
        np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]),
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.count_nonzero(x) * x,
        lambda lib, x: x.count_nonzero(0) * x,
        lambda lib, x: x.count_nonzero(dim=-1).unsqueeze(1) * x,
        lambda lib, x: lib.count_nonzero(x, [0, 1]) * x,
        lambda lib, x: (x > 0).count_nonzero([1]).unsqueeze(1) * x,
        lambda lib, x: x[:0].count_nonzero(0).sum() * x,
    ],
)
def test_count_nonzero_matches_torch(fn) -> None:
    compare(fn, X)


# -- quantile, nanquantile -----------------------------------------------------------------

Q_DATA = np.array(
    [[1.0, 2.0, 3.0, 4.0, 2.0], [5.0, 6.0, 7.0, 8.0, 1.0], [3.0, 3.0, 3.0, 0.0, 1.0]]
)


@pytest.mark.parametrize(
    "interpolation", ["linear", "lower", "higher", "midpoint", "nearest"]
)
@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x, i: lib.quantile(x, 0.4, dim=1, interpolation=i),
        lambda lib, x, i: x.quantile(0.7, interpolation=i) * x,
        lambda lib, x, i: lib.quantile(
            x, lib.tensor([0.1, 0.5, 1.0], dtype=lib.float64), -2, True, interpolation=i
        ),
        lambda lib, x, i: lib.nanquantile(
            x * lib.tensor([1.0, NAN, 1.0, 1.0, 1.0], dtype=lib.float64),
            0.3,
            1,
            interpolation=i,
        ),
        lambda lib, x, i: lib.quantile(
            x * lib.tensor([1.0, NAN, 1.0, 1.0, 1.0], dtype=lib.float64),
            0.3,
            0,
            interpolation=i,
        ),
        lambda lib, x, i: x.nanquantile(
            lib.tensor([0.25, 0.75], dtype=lib.float64), keepdim=True, interpolation=i
        ),
        lambda lib, x, i: x[0, 0].quantile(0.5, interpolation=i) * x,
    ],
)
def test_quantile_and_nanquantile_match_torch(fn, interpolation) -> None:
    compare(lambda lib, x: fn(lib, x, interpolation), Q_DATA, create_graph=True)


def test_quantile_gradient_reaches_q_as_in_torch() -> None:
    compare(
        lambda lib, x, q: lib.quantile(x, q, dim=1),
        Q_DATA,
        np.array([0.3, 0.55]),
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.quantile(lib.ones(0), 0.5),
        lambda lib: lib.quantile(lib.ones(3), 1.5),
        lambda lib: lib.quantile(lib.ones(3).long(), 0.5),
        lambda lib: lib.nanquantile(lib.ones(3).long(), 0.5),
        lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64)),
        lambda lib: lib.quantile(lib.ones(3), lib.tensor([[0.5]])),
        lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5, 2.0])),
        lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="cubic"),
    ],
)
def test_quantile_errors_are_torchs(fn) -> None:
    same_error(fn)


def test_quantile_of_infinite_values_matches_torch() -> None:
    compare(
        lambda lib, x: lib.quantile(x, lib.tensor([0.25, 0.5], dtype=lib.float64), 1),
        np.array([[-INF, 1.0, 2.0], [1.0, 2.0, INF]]),
    )
