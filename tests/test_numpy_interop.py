"""numpy on gradgen tensors: ufuncs and numpy functions route to gradgen operators
(`__array_ufunc__`, `__array_function__`), `np.asarray` gives the data."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck
from gradgen.numpy_interop import FUNCTION_OPERATORS, UFUNC_OPERATORS

from torch_oracle import oracle, outcome


def leaf(values):
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=True)


def test_a_ufunc_on_a_tensor_is_the_gradgen_operator_and_differentiates() -> None:
    x = leaf([0.5, 1.0])
    y = np.exp(x)
    assert isinstance(y, gradgen.Tensor) and y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]))


def test_an_array_on_the_left_gives_a_tensor() -> None:
    x = leaf([1.0, 2.0])
    z = np.array([2.0, 3.0]) * x
    assert isinstance(z, gradgen.Tensor) and z.grad_fn.name() == "MulBackward0"
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 3.0]


def test_every_mapped_ufunc_names_an_existing_operator() -> None:
    for ufunc, operator in UFUNC_OPERATORS.items():
        assert hasattr(np, ufunc), ufunc
        assert hasattr(gradgen, operator), operator


@pytest.mark.parametrize("name", ["sin", "tanh", "sqrt", "log1p", "negative", "square"])
def test_unary_ufuncs_match_numpy(name: str) -> None:
    values = np.array([0.25, 0.5, 2.0])
    result = getattr(np, name)(gradgen.tensor(values))
    np.testing.assert_allclose(result.numpy(), getattr(np, name)(values), rtol=1e-6)


def test_a_ufunc_without_an_operator_is_numpys_type_error() -> None:
    x = gradgen.tensor([4, 6])
    with pytest.raises(TypeError, match="returned NotImplemented"):
        np.gcd(x, x)
    with pytest.raises(TypeError, match="returned NotImplemented"):
        np.add.reduce(x)


def test_asarray_gives_the_data() -> None:
    x = gradgen.tensor([1.0, 2.0])
    assert np.shares_memory(np.asarray(x), x.numpy())


# -- __array__ ------------------------------------------------------------------------------


def test_asarray_of_a_tensor_that_requires_grad_is_refused_as_in_pytorch() -> None:
    x = leaf([1.0, 2.0])
    message = "Can't call numpy() on Tensor that requires grad"
    with pytest.raises(RuntimeError, match=re.escape(message)):
        np.asarray(x)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        np.array(x * 2)
    assert np.shares_memory(np.asarray(x.detach()), x.detach().numpy())
    assert np.asarray(gradgen.tensor([1, 2]), dtype=np.float64).dtype == np.float64


def test_asarray_matches_torch() -> None:
    def run(library: Any) -> tuple[list[float], Any]:
        plain = np.asarray(library.tensor([1.0, 2.0])).tolist()
        error = outcome(lambda: np.asarray(library.tensor([1.0], requires_grad=True)))
        return plain, error

    ours, theirs = run(gradgen), oracle("values and error", run)
    assert ours[0] == theirs[0] == [1.0, 2.0]
    assert isinstance(ours[1], RuntimeError) and isinstance(theirs[1], RuntimeError)
    assert str(ours[1]) == str(theirs[1])


# -- __array_function__: values -------------------------------------------------------------

DATA = np.random.default_rng(0).standard_normal((2, 3, 4))

# Each case runs on the ndarray and on a tensor of the same data: results must agree.
FUNCTION_CASES: dict[str, Callable[[Any], Any]] = {
    "sum": lambda x: np.sum(x),
    "sum axis": lambda x: np.sum(x, axis=1),
    "sum axes keepdims": lambda x: np.sum(x, axis=(0, 2), keepdims=True),
    "sum dtype": lambda x: np.sum(x, -1, np.float32),
    "mean": lambda x: np.mean(x),
    "mean axis keepdims": lambda x: np.mean(x, axis=-1, keepdims=True),
    "prod": lambda x: np.prod(x),
    "prod axes": lambda x: np.prod(x, axis=(0, 2)),
    "prod keepdims": lambda x: np.prod(x, keepdims=True),
    "max": lambda x: np.max(x),
    "amax axis": lambda x: np.amax(x, axis=1),
    "min axes keepdims": lambda x: np.min(x, axis=(0, 1), keepdims=True),
    "amin": lambda x: np.amin(x),
    "sort": lambda x: np.sort(x),
    "sort axis None": lambda x: np.sort(x, axis=None),
    "sort stable axis": lambda x: np.sort(x, axis=0, kind="stable"),
    "any": lambda x: np.any(x > 1.5),
    "all axis keepdims": lambda x: np.all(x > -1.5, axis=(0, 2), keepdims=True),
    "tril": lambda x: np.tril(x[0], 1),
    "triu": lambda x: np.triu(x[1]),
    "diag of a matrix": lambda x: np.diag(x[0], -1),
    "diag of a vector": lambda x: np.diag(x[0, 0]),
    "trace": lambda x: np.trace(x[0]),
    "linalg.norm": lambda x: np.linalg.norm(x),
    "linalg.norm axis": lambda x: np.linalg.norm(x, axis=2),
    "linalg.norm ord inf keepdims": lambda x: np.linalg.norm(
        x, np.inf, axis=0, keepdims=True
    ),
    "linalg.norm 1-d ord 1": lambda x: np.linalg.norm(x[0, 0], 1),
    "allclose": lambda x: np.allclose(x, x + 1e-9),
    "array_equal": lambda x: np.array_equal(x, x),
    "array_equal shapes": lambda x: np.array_equal(x, x[0]),
    "nan_to_num": lambda x: np.nan_to_num(x, nan=1.0),
    "argmax": lambda x: np.argmax(x),
    "argmin axis": lambda x: np.argmin(x, axis=2),
    "argmax keepdims": lambda x: np.argmax(x, keepdims=True),
    "var": lambda x: np.var(x),
    "var ddof": lambda x: np.var(x, axis=1, ddof=1),
    "std keepdims": lambda x: np.std(x, axis=(0, 2), keepdims=True),
    "std correction": lambda x: np.std(x, correction=1),
    "cumsum": lambda x: np.cumsum(x),
    "cumsum axis": lambda x: np.cumsum(x, axis=1),
    "cumprod axis": lambda x: np.cumprod(x, axis=-1),
    "transpose": lambda x: np.transpose(x),
    "transpose axes": lambda x: np.transpose(x, (1, 0, 2)),
    "swapaxes": lambda x: np.swapaxes(x, 0, 2),
    "moveaxis": lambda x: np.moveaxis(x, 0, -1),
    "moveaxis several": lambda x: np.moveaxis(x, [0, 1], [-1, -2]),
    "reshape": lambda x: np.reshape(x, (4, 6)),
    "reshape int": lambda x: np.reshape(x, -1),
    "reshape keyword": lambda x: np.reshape(x, shape=(6, -1)),
    "ravel": lambda x: np.ravel(x),
    "expand_dims squeeze": lambda x: np.squeeze(np.expand_dims(x, (0, 3))),
    "expand_dims negative": lambda x: np.expand_dims(x, -1),
    "squeeze axis": lambda x: np.squeeze(np.expand_dims(x, 1), axis=1),
    "flip": lambda x: np.flip(x),
    "flip axis": lambda x: np.flip(x, 1),
    "roll flat": lambda x: np.roll(x, 2),
    "roll axes": lambda x: np.roll(x, (1, 2), axis=(0, 2)),
    "roll one shift, two axes": lambda x: np.roll(x, 1, axis=(0, 2)),
    "concatenate": lambda x: np.concatenate([x, x], axis=1),
    "concatenate flat": lambda x: np.concatenate([x, x], axis=None),
    "stack": lambda x: np.stack([x, x], axis=-1),
    "where": lambda x: np.where(x > 0, x, 0.0),
    "where truthy": lambda x: np.where(x, 1.0, 2.0),
    "clip": lambda x: np.clip(x, -0.5, 0.5),
    "clip upper": lambda x: np.clip(x, None, 0.2),
    "clip min keyword": lambda x: np.clip(x, min=0.0),
    "clip neither": lambda x: np.clip(x, None, None),
    "round decimals": lambda x: np.round(x, 2),
    "around": lambda x: np.around(x),
    "real": lambda x: np.real(x),
    "angle deg": lambda x: np.angle(x, deg=True),
    "dot matrices": lambda x: np.dot(x[0], np.transpose(x[1])),
    "dot vectors": lambda x: np.dot(x[0, 0], x[1, 0]),
    "dot scalar": lambda x: np.dot(x[0], 2.0),
    "vdot": lambda x: np.vdot(x, x),
    "outer": lambda x: np.outer(x[0, 0], x[1, 1]),
    "matmul (a ufunc)": lambda x: np.matmul(x, np.swapaxes(x, 1, 2)),
    "copy": lambda x: np.copy(x),
    "split sections": lambda x: np.split(x, 2, axis=2),
    "split indices": lambda x: np.split(x, [1, 3], axis=1),
    "broadcast_to": lambda x: np.broadcast_to(x[0, 0], (5, 4)),
    "tile": lambda x: np.tile(x[0], 2),
    "tile more dims": lambda x: np.tile(x[0], (2, 1, 1)),
    "shape": lambda x: np.shape(x),
    "ndim": lambda x: np.ndim(x),
    "size": lambda x: np.size(x),
    "size axis": lambda x: np.size(x, 1),
}


def _check_same(got: Any, expected: Any) -> None:
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _check_same(g, e)
    elif isinstance(expected, (np.ndarray, np.generic)):
        assert isinstance(got, gradgen.Tensor), type(got)
        assert tuple(got.shape) == np.shape(expected)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    else:
        assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("case", FUNCTION_CASES)
def test_numpy_functions_on_tensors_match_numpy_on_the_data(case: str) -> None:
    function = FUNCTION_CASES[case]
    _check_same(function(gradgen.tensor(DATA)), function(DATA))


def test_every_translated_function_calls_existing_operators() -> None:
    for function, operators in FUNCTION_OPERATORS.items():
        assert callable(function)
        for name in operators:
            assert hasattr(gradgen, name) or hasattr(gradgen.Tensor, name), name


def test_the_result_is_in_the_graph() -> None:
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    assert np.sum(x).grad_fn.name() == "SumBackward0"
    assert np.sum(x, axis=0).grad_fn.name() == "SumBackward1"
    assert np.transpose(x).grad_fn.name() == "PermuteBackward0"
    assert np.concatenate([x, x]).grad_fn.name() == "CatBackward0"


# -- __array_function__: gradients ----------------------------------------------------------


def test_gradients_through_sum_and_mean_by_hand() -> None:
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (np.sum(x * x) + np.mean(x, axis=1).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() + 1.0 / 3.0)


def test_gradient_of_var_by_hand() -> None:
    values = np.array([1.0, 2.0, 4.0, 7.0])
    x = leaf(values)
    np.var(x, ddof=1).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (values - values.mean()) / 3)


GRADIENT_CASES: dict[str, Callable[[Any], Any]] = {
    "sum": lambda x: np.sum(x, axis=(0, 2)),
    "mean keepdims": lambda x: np.mean(x, axis=1, keepdims=True),
    "prod axes": lambda x: np.prod(x, axis=(0, 2)),
    "prod": lambda x: np.prod(x),
    "max": lambda x: np.max(x, axis=1),
    "amin": lambda x: np.amin(x),
    "std": lambda x: np.std(x, axis=-1),
    "var": lambda x: np.var(x, ddof=1),
    "cumsum": lambda x: np.cumsum(x),
    "cumprod": lambda x: np.cumprod(x, axis=1),
    "transpose": lambda x: np.transpose(x, (2, 0, 1)),
    "moveaxis": lambda x: np.moveaxis(x, 0, -1),
    "reshape": lambda x: np.reshape(x, (6, 4)),
    "expand_dims squeeze": lambda x: np.squeeze(np.expand_dims(x, 0), 0),
    "flip roll": lambda x: np.roll(np.flip(x, 1), 1, axis=2),
    "concatenate": lambda x: np.concatenate([x, x * 2.0], axis=2),
    "stack": lambda x: np.stack([x, x * x]),
    "where": lambda x: np.where(np.asarray(DATA) > 0, x, x * x),
    "clip": lambda x: np.clip(x, -0.5, 0.5),
    "dot": lambda x: np.dot(x[0], np.transpose(x[1])),
    "outer": lambda x: np.outer(x[0, 0], x[1, 1]),
    "split": lambda x: np.split(x, 2, axis=2)[1],
    "tile": lambda x: np.tile(x, (1, 2, 1)),
    "broadcast_to": lambda x: np.broadcast_to(x[0], (5, 3, 4)),
    "sort": lambda x: np.sort(x, axis=1),
    "tril triu": lambda x: np.tril(x[0], -1) + np.triu(x[1], 1),
    "diag": lambda x: np.diag(x[0], 1),
    "trace": lambda x: np.trace(x[1]),
    "norm": lambda x: np.linalg.norm(x),
    "norm axis ord": lambda x: np.linalg.norm(x, 3, axis=1),
}


@pytest.mark.parametrize("case", GRADIENT_CASES)
def test_gradcheck_through_numpy_functions(case: str) -> None:
    x = gradgen.tensor(DATA + 0.01, dtype=gradgen.float64, requires_grad=True)
    assert gradcheck(GRADIENT_CASES[case], (x,))


# -- mixed arguments and refusals -----------------------------------------------------------


def test_ndarray_and_tensor_arguments_mix() -> None:
    x = leaf([1.0, -2.0, 3.0])
    array = np.array([10.0, 20.0, 30.0])
    joined = np.concatenate([x, array])
    assert isinstance(joined, gradgen.Tensor) and joined.dtype == gradgen.float64
    chosen = np.where(np.array([True, False, True]), x, array)
    product = np.dot(array, x)
    (
        np.sum(joined) + np.sum(chosen) + product + np.sum(np.stack([array, x]))
    ).backward()
    # d/dx: 1 (cat) + mask (where) + array (dot) + 1 (stack)
    np.testing.assert_allclose(
        x.grad.numpy(), [1 + 1 + 10 + 1, 1 + 0 + 20 + 1, 1 + 1 + 30 + 1]
    )


def test_a_function_without_an_operator_is_numpys_type_error() -> None:
    x = gradgen.tensor([3.0, 1.0, 2.0])
    for call in (
        lambda: np.median(x),
        lambda: np.where(x > 1),
        lambda: np.linalg.norm(x[None], "fro"),
    ):
        with pytest.raises(
            TypeError,
            match="no implementation found for 'numpy.(median|where|linalg.norm)'",
        ):
            call()


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda x: np.sum(x, out=np.zeros(())),
            "numpy.sum() on a gradgen Tensor does not support out=",
        ),
        (
            lambda x: np.max(x, initial=0.0),
            "numpy.max() on a gradgen Tensor does not support initial=0.0",
        ),
        (
            lambda x: np.mean(x, where=np.array([True, False])),
            "numpy.mean() on a gradgen Tensor does not support where=",
        ),
        (lambda x: np.reshape(x, (2, 1), order="F"), "does not support order='F'"),
        (lambda x: np.sum(x, dtype=np.uint16), "expected a gradgen dtype"),
        (
            lambda x: np.concatenate([x, x], casting="unsafe"),
            "does not support casting='unsafe'",
        ),
    ],
)
def test_arguments_gradgen_cannot_honour_are_a_type_error(
    call: Callable[[Any], Any], message: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        call(gradgen.tensor([1.0, 2.0]))


def test_numpys_own_argument_errors() -> None:
    x = gradgen.tensor(DATA)
    with pytest.raises(np.exceptions.AxisError):
        np.sum(x, axis=3)
    with pytest.raises(ValueError, match="repeated axis"):
        np.sum(x, axis=(1, 1))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        np.squeeze(x, axis=0)
    with pytest.raises(ValueError, match="equal division"):
        np.split(x, 3, axis=2)
    with pytest.raises(ValueError, match="both or neither"):
        np.where(x > 0, x)


def test_another_overriding_type_gets_its_turn() -> None:
    class Other:
        def __array_function__(
            self, func: Any, types: Any, args: Any, kwargs: Any
        ) -> Any:
            return "handled by Other"

    assert np.concatenate([gradgen.tensor([1.0]), Other()]) == "handled by Other"
