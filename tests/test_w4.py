"""Issue 14, W4 (the MLP training step): the kernels made faster keep their values to
the last bit, by hand: sum_to_size's fresh result, relu and threshold_backward with
-0.0, NaN and inf, and mean's backward."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from gradgen.helpers import arrays
from gradgen.numpy_kernels.shape import sum_to_size


def test_sum_to_size_over_leading_dimensions_returns_a_fresh_array() -> None:
    values = np.arange(12.0).reshape(3, 4)
    result = sum_to_size(values, (4,))
    np.testing.assert_array_equal(result, [12.0, 15.0, 18.0, 21.0])
    assert result.base is None and result.flags.writeable
    inner = sum_to_size(values, (3, 1))  # an inner dimension kept as 1
    np.testing.assert_array_equal(inner, [[6.0], [22.0], [38.0]])
    assert inner.shape == (3, 1)
    batched = sum_to_size(np.arange(24.0).reshape(2, 3, 4), (3, 4))
    np.testing.assert_array_equal(batched, np.arange(12.0).reshape(3, 4) * 2 + 12.0)
    assert batched.base is None
    with pytest.raises(RuntimeError, match="is not expandable"):
        sum_to_size(values, (5,))


def test_expand_of_a_number_is_a_read_only_broadcast_view() -> None:
    number = np.asarray(2.5, dtype=np.float32)
    spread = arrays.expand(number, (2, 3))
    assert spread.shape == (2, 3) and spread.dtype == np.float32
    assert spread.strides == (0, 0) and not spread.flags.writeable
    np.testing.assert_array_equal(spread, np.full((2, 3), 2.5, dtype=np.float32))
    assert arrays.expand(number, ()).shape == ()
    with pytest.raises(RuntimeError, match="must match the existing size"):
        arrays.expand(np.ones(2), (3,))


def test_mean_backward_is_one_over_numel_in_the_input_dtype() -> None:
    for dtype, third in ((gradgen.float64, 1.0 / 3.0), (gradgen.float32, None)):
        x = gradgen.zeros((3,), dtype=dtype, requires_grad=True)
        x.mean().backward()
        assert x.grad is not None
        grad = x.grad.numpy()
        expected = np.float32(1.0) / np.float32(3.0) if third is None else third
        assert grad.dtype == x.detach().numpy().dtype
        np.testing.assert_array_equal(grad, [expected] * 3)


def test_division_by_a_number_keeps_the_floating_dtype() -> None:
    values = np.array([3.0, -1.0], dtype=np.float32)
    result = arrays.div(values, 7)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, values / np.float32(7.0))


def test_relu_keeps_nan_and_negative_zero() -> None:
    x = gradgen.tensor([-1.0, -0.0, 0.0, np.nan, 2.0, np.inf, -np.inf])
    y = gradgen.relu(x).numpy()
    np.testing.assert_array_equal(y, [0.0, 0.0, 0.0, np.nan, 2.0, np.inf, 0.0])
    assert np.signbit(y[1]) and not np.signbit(y[0]) and not np.signbit(y[2])


def test_threshold_backward_zeroes_even_inf_and_nan_gradients() -> None:
    self = np.array([-1.0, -0.0, 0.0, np.nan, 2.0, np.inf])
    grad = np.array([np.inf, np.nan, 5.0, 7.0, np.nan, -3.0])
    result = arrays.threshold_backward(grad, self, 0)
    # self <= 0 -> 0 whatever the gradient; NaN in self lets the gradient through.
    np.testing.assert_array_equal(result, [0.0, 0.0, 0.0, 7.0, np.nan, -3.0])
    assert result.dtype == np.float64


def test_relu_backward_through_the_graph() -> None:
    x = gradgen.tensor([-2.0, -0.0, 0.5, np.nan], requires_grad=True)
    (gradgen.relu(x) * gradgen.tensor([np.inf, np.nan, 4.0, 1.0])).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 4.0, 1.0])
