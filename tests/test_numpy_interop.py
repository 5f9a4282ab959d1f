"""numpy functions on gradgen tensors: ufuncs route to gradgen operators."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from gradgen.tensor import _UFUNC_OPERATORS


def leaf(values):  # type: ignore[no-untyped-def]
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
    for ufunc, operator in _UFUNC_OPERATORS.items():
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
