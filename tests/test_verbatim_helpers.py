"""The helpers added so that PyTorch's formulas are read verbatim: scalar_tensor,
evenly_read_jvp, gather_with_keepdimed_indices, amaxamin_jvp, logsumexp_jvp; each
against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradgen
from gradgen import helpers


def _t(values: object) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=gradgen.float64)


def test_scalar_tensor_is_a_0d_constant_of_the_dtype() -> None:
    value = helpers.scalar_tensor(0.5, gradgen.float32)
    assert value.shape == ()
    assert value.dtype == gradgen.float32
    assert value.item() == 0.5
    assert not value.requires_grad


def test_evenly_read_jvp_is_the_mean_tangent_over_ties() -> None:
    x = _t([1.0, 3.0, 3.0, 2.0])
    dx = _t([10.0, 4.0, 6.0, 100.0])
    # max is 3, reached twice: the tangent is (4 + 6) / 2
    assert helpers.evenly_read_jvp(dx, x, _t(3.0)).item() == 5.0
    # a NaN result: the mean over the NaNs, (4 + 100) / 2
    y = _t([1.0, math.nan, 2.0, math.nan])
    assert helpers.evenly_read_jvp(dx, y, _t(math.nan)).item() == 52.0


@pytest.mark.parametrize("keepdim", [False, True])
def test_gather_with_keepdimed_indices(keepdim: bool) -> None:
    x = _t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    indices = gradgen.tensor([[2], [0]] if keepdim else [2, 0])
    out = helpers.gather_with_keepdimed_indices(x, 1, indices, keepdim)
    expected = [[3.0], [4.0]] if keepdim else [3.0, 4.0]
    np.testing.assert_array_equal(out.numpy(), expected)


def test_gather_with_keepdimed_indices_of_a_0d_input_is_the_input() -> None:
    x = _t(7.0)
    out = helpers.gather_with_keepdimed_indices(x, 0, gradgen.tensor(0), True)
    assert out.shape == () and out.item() == 7.0


@pytest.mark.parametrize("keepdim", [False, True])
def test_amaxamin_jvp_shares_the_tangent_among_ties(keepdim: bool) -> None:
    x = _t([[1.0, 5.0, 5.0], [2.0, 0.0, -1.0]])
    dx = _t([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]])
    result = _t([[5.0], [2.0]] if keepdim else [5.0, 2.0])
    out = helpers.amaxamin_jvp(x, dx, result, [1], keepdim)
    expected = [[3.0], [8.0]] if keepdim else [3.0, 8.0]
    np.testing.assert_array_equal(out.numpy(), expected)


def test_logsumexp_jvp_is_the_softmax_weighted_tangent() -> None:
    values = np.array([[0.5, -1.0, 2.0], [1000.0, 1000.0, 999.0]])
    tangent = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]])
    out = helpers.logsumexp_jvp(_t(values), _t(tangent), [1], False)
    # d/de logsumexp(x + e t) at e = 0, by a central difference in long double
    x, t = values.astype(np.longdouble), tangent.astype(np.longdouble)

    def lse(e: float) -> np.ndarray:
        shifted = x + e * t
        top = shifted.max(axis=1, keepdims=True)
        return (top + np.log(np.exp(shifted - top).sum(axis=1, keepdims=True)))[:, 0]

    h = 1e-6
    expected = (lse(h) - lse(-h)) / (2 * h)
    np.testing.assert_allclose(out.numpy(), expected.astype(float), rtol=1e-6)
    kept = helpers.logsumexp_jvp(_t(values), _t(tangent), [1], True)
    assert kept.shape == (2, 1)


def test_zeros_and_ones_are_constants_of_a_shape_and_dtype() -> None:
    z = helpers.zeros([2, 3], gradgen.float32)
    o = helpers.ones([], gradgen.complex128)
    assert (z.shape, z.dtype) == ((2, 3), gradgen.float32)
    assert (o.shape, o.dtype) == ((), gradgen.complex128)
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3)))
    assert o.item() == 1
    assert not z.requires_grad and not o.requires_grad
