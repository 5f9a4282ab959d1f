"""Reductions and scans beyond the operator table: ties and NaN, named returns,
grad_fn names, dtypes, prod/cumprod with zeros, var/std, empty and 0-d inputs, errors.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from torch_compare import compare, same_error
from torch_oracle import numbered, oracle

NAN = float("nan")
INF = float("inf")

# Kernels make inf and nan silently (test_kernels_make_inf_and_nan_silently checks it
# in a fresh interpreter); under pytest's own filters the warnings would only be noise.
pytestmark = pytest.mark.filterwarnings(
    "ignore:(divide by zero|invalid value|overflow) encountered:RuntimeWarning"
)


# -- ties and NaN ------------------------------------------------------------------------

TIES = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, -1.0], [0.0, 4.0, 0.0, 4.0]])


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.max(),
        lambda lib, x: x.min(),
        lambda lib, x: lib.amax(x),
        lambda lib, x: x.amax(1),
        lambda lib, x: x.amin(0, keepdim=True),
        lambda lib, x: x.amax((0, 1)),
        lambda lib, x: x.max(1).values,
        lambda lib, x: x.max(0, keepdim=True).values,
        lambda lib, x: x.min(1).values,
        lambda lib, x: x.min(-1, True)[0],
    ],
    ids=[
        "max",
        "min",
        "amax-all",
        "amax-dim",
        "amin-keepdim",
        "amax-dims",
        "max.dim",
        "max.dim-keepdim",
        "min.dim",
        "min.dim-keepdim",
    ],
)
def test_ties_share_or_select_the_gradient_as_torch(fn) -> None:
    compare(fn, TIES)


def test_ties_by_hand() -> None:
    x = gradgen.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    (g,) = gradgen.autograd.grad(x.max(), x)  # evenly among the ties
    assert g.tolist() == [0.0, 0.5, 0.5, 0.0]
    (g,) = gradgen.autograd.grad(x.amax(0), x)
    assert g.tolist() == [0.0, 0.5, 0.5, 0.0]
    values, indices = x.max(0)  # max.dim: all of it to the returned (first) index
    assert indices.item() == 1
    (g,) = gradgen.autograd.grad(values, x)
    assert g.tolist() == [0.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.max(),
        lambda lib, x: x.min(),
        lambda lib, x: x.amax(1),
        lambda lib, x: x.max(1).values,
        lambda lib, x: x.min(1).indices,
        lambda lib, x: x.argmax(1),
        lambda lib, x: x.argmin(),
        lambda lib, x: x.logsumexp(1),
    ],
)
def test_nan_propagates_as_in_torch(fn) -> None:
    compare(fn, np.array([[1.0, NAN, 3.0, NAN], [2.0, 2.0, -1.0, 0.5]]))


def test_infinite_rows_in_logsumexp() -> None:
    rows = np.array([[-INF, -INF], [INF, 1.0], [0.0, -INF]])
    compare(lambda lib, x: x.logsumexp(1), rows)
    compare(lambda lib, x: lib.softmax(x, 1), rows)


# -- named returns, grad_fn names, non-differentiable results ----------------------------


def test_max_dim_returns_a_named_tuple() -> None:
    x = gradgen.tensor([[1.0, 4.0], [3.0, 2.0]], requires_grad=True)
    values, indices = x.max(0)
    result = gradgen.max(x, dim=1, keepdim=True)
    assert result.values.tolist() == [[4.0], [3.0]]
    assert result.indices.tolist() == [[1], [0]]
    assert result[0] is result.values and result[1] is result.indices
    assert values.tolist() == [3.0, 4.0] and indices.tolist() == [1, 0]
    assert type(result).__name__ == "max" and type(x.min(0)).__name__ == "min"
    assert indices.dtype == gradgen.int64 and not indices.requires_grad
    assert indices.grad_fn is None and values.grad_fn.name() == "MaxBackward0"


GRAD_FNS = {
    "prod": lambda lib, x: x.prod(),
    "prod.dim_int": lambda lib, x: x.prod(1),
    "max.dim": lambda lib, x: x.max(1).values,
    "max": lambda lib, x: x.max(),
    "min.dim": lambda lib, x: x.min(1).values,
    "min": lambda lib, x: x.min(),
    "amax": lambda lib, x: x.amax(),
    "amin": lambda lib, x: x.amin(0),
    "logsumexp": lambda lib, x: x.logsumexp(0),
    "var": lambda lib, x: x.var(),
    "var.dim": lambda lib, x: x.var(0, False),
    "var.correction": lambda lib, x: x.var(correction=0),
    "std": lambda lib, x: x.std(),
    "std.correction": lambda lib, x: x.std(1, correction=2),
    "cumsum": lambda lib, x: x.cumsum(0),
    "cumprod": lambda lib, x: x.cumprod(1),
    "softmax": lambda lib, x: x.softmax(0),
    "log_softmax": lambda lib, x: x.log_softmax(1),
    "_softmax_backward_data": lambda lib, x: lib._softmax_backward_data(
        x, x.detach(), 1, x.dtype
    ),
    "_log_softmax_backward_data": lambda lib, x: lib._log_softmax_backward_data(
        x, x.detach(), 1, x.dtype
    ),
    "flip": lambda lib, x: x.flip(0),
    "roll": lambda lib, x: x.roll(1),
    "repeat": lambda lib, x: x.repeat(1, 2),
    "index_select": lambda lib, x: x.index_select(0, lib.tensor([0])),
    "index_add": lambda lib, x: x.index_add(0, lib.tensor([0]), x[:1] * 1),
    "gather": lambda lib, x: x.gather(0, lib.tensor([[0]])),
    "scatter.src": lambda lib, x: x.scatter(0, lib.tensor([[0]]), x * 1),
    "scatter.value": lambda lib, x: x.scatter(0, lib.tensor([[0]]), 1.0),
    "scatter_add": lambda lib, x: x.scatter_add(0, lib.tensor([[0]]), x * 1),
    "masked_fill.Scalar": lambda lib, x: x.masked_fill(lib.tensor(True), 1.0),
    "masked_fill.Tensor": lambda lib, x: x.masked_fill(lib.tensor(True), x.sum()),
    "expand_as": lambda lib, x: x.expand_as(x),
    "view_as": lambda lib, x: x.view_as(x),
    "to": lambda lib, x: x.to(lib.float32),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_grad_fn_names_are_torchs(name: str) -> None:
    data = np.array([[1.0, 2.0, 0.5], [3.0, 0.25, 4.0]])
    ours = GRAD_FNS[name](gradgen, gradgen.tensor(data, requires_grad=True))
    theirs = oracle(
        "name",
        lambda t: GRAD_FNS[name](t, t.tensor(data, requires_grad=True)).grad_fn.name(),
    )
    assert ours.grad_fn.name() == theirs


def test_argmax_and_argmin_never_require_grad() -> None:
    x = gradgen.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    for result in (x.argmax(), x.argmin(1), gradgen.argmax(x, 0, keepdim=True)):
        assert result.dtype == gradgen.int64
        assert not result.requires_grad and result.grad_fn is None
    assert x.argmax().item() == 2 and x.argmin(1).tolist() == [0, 1]


# -- dtypes -------------------------------------------------------------------------------

INT = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: x.prod(), INT),
        (lambda lib, x: x.prod(0), INT.astype(np.int32)),
        (lambda lib, x: x.prod(1), INT > 2),
        (lambda lib, x: x.prod(dtype=lib.float64), INT.astype(np.float32)),
        (
            lambda lib, x: x.detach().prod(0, dtype=lib.int64),
            INT.astype(np.float64) / 2,
        ),
        (lambda lib, x: x.max(), INT),
        (lambda lib, x: x.max(1).values, INT.astype(np.int32)),
        (lambda lib, x: x.amax(0), INT > 2),
        (lambda lib, x: x.max(0).values, INT > 2),
        (lambda lib, x: x.argmax(), INT.astype(np.int32)),
        (lambda lib, x: x.cumsum(1), INT.astype(np.int32)),
        (lambda lib, x: x.cumsum(0), INT > 2),
        (lambda lib, x: x.cumprod(0), INT > 2),
        (lambda lib, x: x.cumsum(0, dtype=lib.float64), INT),
        (lambda lib, x: x.logsumexp(1), INT),
        (lambda lib, x: x.logsumexp(0), INT > 2),
        (lambda lib, x: x.softmax(1, dtype=lib.float64), INT),
        (lambda lib, x: x.log_softmax(0, lib.float64), INT.astype(np.float32)),
        (lambda lib, x: x.var(), INT.astype(np.float32)),
        (lambda lib, x: x.std(0), INT.astype(np.complex64) * 1j),
        (lambda lib, x: x.masked_fill(lib.tensor([True, False, True]), 2.7), INT),
        (lambda lib, x: x.masked_fill(lib.tensor([True, False, True]), True), INT),
        (lambda lib, x: x.index_select(1, lib.tensor([2, 0])), INT.astype(np.int32)),
        (lambda lib, x: x.gather(0, lib.tensor([[1, 0, 1]])), INT > 2),
        (lambda lib, x: x.scatter(1, lib.tensor([[0], [2]]), 2.5), INT),
        (lambda lib, x: x.flip(1).roll(1).repeat(2, 1), INT > 2),
        (lambda lib, x: x.to(lib.float64), INT),
    ],
)
def test_result_dtypes_are_torchs(fn, data) -> None:
    compare(fn, data)


def test_float32_stays_float32() -> None:
    data = np.array([[0.5, 2.0, 1.5], [1.0, 3.0, 0.25]], dtype=np.float32)
    for fn in (
        lambda lib, x: x.prod(1) + x.amax() + x.logsumexp(0).sum() + x.var(0).sum(),
        lambda lib, x: x.cumprod(1) * x.softmax(0) + x.log_softmax(1) + x.std(),
    ):
        ours = fn(gradgen, gradgen.tensor(data))
        theirs = oracle(numbered("value"), lambda t: fn(t, t.tensor(data)))
        assert ours.dtype == gradgen.float32 and theirs.dtype == np.float32
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5)


# -- prod and cumprod with zeros ----------------------------------------------------------

ZEROS = {
    "one zero": np.array([[2.0, 0.0, 3.0], [1.5, -1.0, 0.5]]),
    "two zeros": np.array([[0.0, 0.0, 3.0], [1.5, -1.0, 0.0]]),
    "all zero": np.zeros((2, 3)),
}


@pytest.mark.parametrize("case", sorted(ZEROS))
@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.prod(),
        lambda lib, x: x.prod(1),
        lambda lib, x: x.prod(0, keepdim=True),
        lambda lib, x: x.cumprod(1),
        lambda lib, x: x.cumprod(0),
    ],
    ids=["prod", "prod-dim", "prod-keepdim", "cumprod-1", "cumprod-0"],
)
def test_zeros_in_prod_and_cumprod(fn, case: str) -> None:
    compare(fn, ZEROS[case], create_graph=True)


@pytest.mark.parametrize(
    "fn", [lambda x: x.prod(1), lambda x: x.cumprod(1), lambda x: x.prod()]
)
def test_gradcheck_at_zeros(fn) -> None:
    x = gradgen.tensor(
        [[2.0, 0.0, 3.0, 0.5], [0.0, -1.0, 0.0, 1.5]],
        dtype=gradgen.float64,
        requires_grad=True,
    )
    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])


def test_prod_of_two_zeros_without_grad_mode_is_zero() -> None:
    x = gradgen.tensor([0.0, 2.0, 0.0], requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_complex_cumprod_with_a_zero() -> None:
    data = np.array([1.0 + 1.0j, 0.0, 2.0 - 0.5j, 0.5j])
    compare(lambda lib, x: x.cumprod(0), data, create_graph=True)
    compare(lambda lib, x: x.prod(), data, create_graph=True)


# -- var and std --------------------------------------------------------------------------

VAR_DATA = np.array([[1.0, 2.0, 4.0], [0.5, -3.0, 2.5]])


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.var(),
        lambda lib, x: x.var(0),
        lambda lib, x: x.var(1, False),
        lambda lib, x: x.var(unbiased=False),
        lambda lib, x: x.var(dim=0, keepdim=True),
        lambda lib, x: x.var([0, 1], correction=0.5, keepdim=True),
        lambda lib, x: x.var([], correction=2),
        lambda lib, x: lib.var(x, None, correction=3, keepdim=True),
        lambda lib, x: x.std(),
        lambda lib, x: x.std(1, True, True),
        lambda lib, x: lib.std(x, dim=(0,), correction=0),
    ],
)
def test_var_and_std_overloads(fn) -> None:
    compare(fn, VAR_DATA, create_graph=True)


@pytest.mark.parametrize(
    "fn, data",
    [
        (lambda lib, x: x.var(), np.array([3.0])),
        (lambda lib, x: x.var(correction=2), np.array([1.0, 2.0])),
        (lambda lib, x: x.var(correction=2), np.array([1.5, 1.5])),
        (lambda lib, x: x.var(0, correction=2), np.array([[1.0, 2.0], [3.0, 2.0]])),
        (lambda lib, x: x.std(correction=5), np.array([1.0, 2.0, 3.0])),
        (lambda lib, x: x.var(), np.array(2.0)),
    ],
)
def test_degrees_of_freedom_at_most_zero(fn, data) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(fn, data)


def test_degrees_of_freedom_warning() -> None:
    with pytest.warns(
        UserWarning,
        match=re.escape(
            "var(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel)."
        ),
    ):
        assert math.isnan(gradgen.tensor([2.0]).var().item())
    with pytest.warns(
        UserWarning, match=re.escape("std(): degrees of freedom is <= 0.")
    ):
        gradgen.tensor([2.0, 3.0]).std(correction=2)


def test_std_of_a_constant_has_zero_gradient() -> None:
    compare(lambda lib, x: x.std(1), np.array([[2.0, 2.0, 2.0], [1.0, 3.0, 2.0]]))


def test_complex_var_is_real() -> None:
    data = np.array([[1.0 + 2.0j, -1.0j, 0.5], [2.0, 1.0 + 1.0j, -0.5j]])
    compare(lambda lib, x: x.var(1), data, create_graph=True)
    compare(lambda lib, x: x.std(), data, create_graph=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.logsumexp(1),
        lambda lib, x: x.cumsum(0),
        lambda lib, x: x.flip(0).roll(1, 1).repeat(1, 2),
        lambda lib, x: x.index_select(1, lib.tensor([2, 0])),
        lambda lib, x: x.gather(1, lib.tensor([[0, 0], [2, 1]])),
        lambda lib, x: x.masked_fill(lib.tensor([True, False, True]), 2.0),
        lambda lib, x: x.scatter_add(1, lib.tensor([[0, 0, 1]]), x[:1] * 1j),
    ],
)
def test_complex_inputs_match_torch(fn) -> None:
    data = np.array([[1.0 + 1.0j, 2.0, -0.5j], [0.5, 1j, 2 - 1j]])
    compare(fn, data, create_graph=True)


# -- empty and 0-d inputs -----------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.prod(),
        lambda lib, x: x.prod(1),
        lambda lib, x: x.max(0).values,
        lambda lib, x: x.max(0).indices,
        lambda lib, x: x.amax(0),
        lambda lib, x: x.argmax(0),
        lambda lib, x: x.logsumexp(1),
        lambda lib, x: x.cumsum(1),
        lambda lib, x: x.cumprod(0),
        lambda lib, x: x.softmax(1),
        lambda lib, x: x.flip(1),
        lambda lib, x: x.roll(1, 1),
        lambda lib, x: x.repeat(2, 3),
        lambda lib, x: x.index_select(1, lib.tensor([], dtype=lib.int64)),
        lambda lib, x: x.gather(1, lib.zeros(2, 0, dtype=lib.int64)),
    ],
)
def test_empty_inputs(fn) -> None:
    compare(fn, np.zeros((2, 0)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.max(),
        lambda lib, x: x.max(0).values,
        lambda lib, x: x.min(-1).indices,
        lambda lib, x: x.amax(0),
        lambda lib, x: x.amin(),
        lambda lib, x: x.argmax(0),
        lambda lib, x: x.argmin(keepdim=True),
        lambda lib, x: x.prod(0),
        lambda lib, x: x.prod(),
        lambda lib, x: x.logsumexp(0),
        lambda lib, x: x.cumsum(0),
        lambda lib, x: x.cumprod(-1),
        lambda lib, x: x.softmax(0),
        lambda lib, x: x.log_softmax(-1),
        lambda lib, x: x.flip(0),
        lambda lib, x: x.roll(1),
        lambda lib, x: x.repeat(2),
        lambda lib, x: x.repeat([]),
        lambda lib, x: x.index_select(0, lib.tensor([0])),
        lambda lib, x: x.gather(0, lib.tensor(0)),
        lambda lib, x: x.index_add(0, lib.tensor([0]), x * 2),
        lambda lib, x: x.masked_fill(lib.tensor([True, False]), 5.0),
    ],
)
def test_zero_dim_inputs(fn) -> None:
    compare(fn, np.array(1.5))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.zeros(0).max(),
        lambda lib: lib.zeros(0).min(),
        lambda lib: lib.zeros(0).amax(),
        lambda lib: lib.zeros(0).argmax(),
        lambda lib: lib.zeros(2, 0).max(1),
        lambda lib: lib.zeros(2, 0).amin(1),
        lambda lib: lib.zeros(2, 0).argmin(1),
        lambda lib: lib.tensor(1.0).max(1),
        lambda lib: lib.tensor(1.0).flip(1),
        lambda lib: lib.tensor(1.0).roll(1, 0),
        lambda lib: lib.zeros(2, 3).cumsum(2),
        lambda lib: lib.zeros(2, 3).prod(-3),
        lambda lib: lib.zeros(2, 3).softmax(2),
    ],
)
def test_empty_and_dim_errors_are_torchs(fn) -> None:
    same_error(fn)


# -- error messages -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.zeros(2, 3).flip((0, -2)),
        lambda lib: lib.zeros(2, 3).amax((1, 1)),
        lambda lib: lib.zeros(2, 3).logsumexp((0, 0)),
        lambda lib: lib.zeros(2, 3).logsumexp(()),
        lambda lib: lib.zeros(2, 3).roll((1, 2), (0,)),
        lambda lib: lib.zeros(2, 3).roll((1, 2)),
        lambda lib: lib.zeros(2, 3).repeat(2),
        lambda lib: lib.zeros(2, 3).repeat(2, -1),
        lambda lib: lib.zeros(2, 3).index_select(0, lib.tensor([[0]])),
        lambda lib: lib.zeros(2, 3).index_select(0, lib.tensor([0.0])),
        lambda lib: lib.zeros(2, 3).index_select(0, lib.tensor([2])),
        lambda lib: lib.tensor(5.0).index_select(0, lib.tensor([0, 0])),
        lambda lib: lib.zeros(2, 3).gather(0, lib.tensor([0])),
        lambda lib: lib.zeros(2, 3).gather(0, lib.tensor([[0.0]])),
        lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[3]])),
        lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[-1]])),
        lambda lib: lib.zeros(2, 3).gather(1, lib.tensor([[0], [0], [0]])),
        lambda lib: lib.zeros(3).scatter(0, lib.tensor([0.0]), lib.ones(1)),
        lambda lib: lib.zeros(3).scatter(0, lib.tensor([[0]]), lib.ones(1, 1)),
        lambda lib: lib.zeros(3).scatter_add(
            0, lib.tensor([1]), lib.ones(1, dtype=lib.float64)
        ),
        lambda lib: lib.zeros(3).scatter_add(0, lib.tensor([0, 0, 2]), lib.ones(2)),
        lambda lib: lib.zeros(3).scatter(0, lib.tensor([5]), 1.0),
        lambda lib: lib.zeros(3).index_add(0, lib.tensor([0, 0]), lib.ones(3)),
        lambda lib: lib.zeros(3).index_add(
            0, lib.tensor([0]), lib.ones(1, dtype=lib.float64)
        ),
        lambda lib: lib.zeros(3).index_add(0, lib.tensor([0.0]), lib.ones(1)),
        lambda lib: lib.zeros(3).index_add(0, lib.tensor([[0]]), lib.ones(1)),
        lambda lib: lib.zeros(3).index_add(0, lib.tensor([4]), lib.ones(1)),
        lambda lib: lib.zeros(3).index_add(0, lib.tensor([1]), lib.tensor(4.0)),
        lambda lib: lib.zeros(2, 3).index_add(1, lib.tensor([0, 0]), lib.ones(3, 2)),
        lambda lib: lib.zeros(3).masked_fill(lib.tensor([1, 0, 1]), 0.0),
        lambda lib: lib.zeros(3).masked_fill(lib.tensor([1.0, 0.0, 1.0]), 0.0),
        lambda lib: lib.zeros(3).masked_fill(
            lib.tensor([True, False, True]), lib.ones(1)
        ),
        lambda lib: lib.zeros(3).masked_fill(lib.tensor([True, False, True]), 1j),
        lambda lib: lib.zeros(2, 3).masked_fill(lib.tensor([True, False]), 0.0),
        lambda lib: lib.tensor([1, 2]).softmax(0),
        lambda lib: lib.tensor([[1, 2]]).log_softmax(0),
        lambda lib: lib.tensor([True]).softmax(0),
        lambda lib: lib._softmax(lib.zeros(3), 0, True),
        lambda lib: lib.tensor([1, 2]).var(),
        lambda lib: lib.tensor([1, 2]).std(0),
        lambda lib: lib.tensor([1j]).max(),
        lambda lib: lib.tensor([1j]).max(0),
        lambda lib: lib.tensor([1j]).amax(),
        lambda lib: lib.tensor([1j]).argmax(),
        lambda lib: lib.tensor([True, False]).argmax(),
        lambda lib: lib.zeros(2, 3).view_as(lib.zeros(4)),
        lambda lib: lib.ones(2, requires_grad=True).prod(dtype=lib.int64),
        lambda lib: lib.ones(2, requires_grad=True).cumsum(0, dtype=lib.int64),
    ],
)
def test_error_messages_are_torchs(fn) -> None:
    same_error(fn)
