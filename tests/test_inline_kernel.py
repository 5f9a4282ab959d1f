"""The fast paths' inline kernel (session 9, "inline"): a recorded `mul.Tensor` or
`add.Tensor` of two tensors of one dtype evaluates the `numpy:` expression in the fast
path itself; every other case (type promotion, two wrapped numbers, a broadcasting
error, numpy's result in another dtype) goes through the kernel as before."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import gradgen
from gradgen.generated import variable_type

from torch_oracle import oracle


def _leaf(values: object, dtype: gradgen.dtype) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("dtype", [gradgen.float64, gradgen.float32])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_same_dtype_results_and_gradients(
    dtype: gradgen.dtype, shape: tuple[int, ...]
) -> None:
    x_values = np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape) / 4
    y_values = x_values + 0.5
    x, y = _leaf(x_values, dtype), _leaf(y_values, dtype)
    product = x * y
    total = gradgen.add(x, y, alpha=2)
    expected = np.asarray(x_values * y_values, dtype=dtype.numpy)
    assert product.dtype is dtype and total.dtype is dtype
    assert product.shape == shape and total.shape == shape
    assert type(product._data) is np.ndarray  # a 0-d result is an array, not a scalar
    np.testing.assert_array_equal(product._data, expected)
    np.testing.assert_array_equal(
        total._data, np.asarray(x_values + 2 * y_values, dtype=dtype.numpy)
    )
    assert type(product.grad_fn).__name__ == "MulBackward0"
    assert type(total.grad_fn).__name__ == "AddBackward0"
    (product.sum() + total.sum()).backward()
    # d(x*y + x + 2y)/dx = y + 1, /dy = x + 2
    np.testing.assert_array_equal(x.grad._data, np.asarray(y_values + 1, dtype.numpy))
    np.testing.assert_array_equal(y.grad._data, np.asarray(x_values + 2, dtype.numpy))


def test_integer_and_bool_tensors_keep_their_dtype() -> None:
    x = _leaf([1.5, 2.0], gradgen.float64)
    ints = gradgen.tensor([3, 4])
    flags = gradgen.tensor([True, False])
    assert (ints * ints).dtype is gradgen.int64  # not recorded: the kernel
    assert (flags * flags).dtype is gradgen.bool
    mixed = x * gradgen.tensor([3, 4])  # promotion: the kernel
    assert mixed.dtype is gradgen.float64
    assert mixed.tolist() == [4.5, 8.0]


def test_promotion_and_wrapped_numbers_go_through_the_kernel() -> None:
    x = _leaf([1.0, 2.0], gradgen.float32)
    assert (x * 2.5).dtype is gradgen.float32  # a wrapped float64 number
    assert (x * gradgen.tensor(2.0, dtype=gradgen.float64)).dtype is gradgen.float32
    wide = x * gradgen.tensor([2.0, 1.0], dtype=gradgen.float64)
    assert wide.dtype is gradgen.float64 and wide.tolist() == [2.0, 2.0]
    wide.sum().backward()
    assert x.grad is not None and x.grad.dtype is gradgen.float32
    assert x.grad.tolist() == [2.0, 1.0]


def test_a_broadcasting_error_is_the_kernels() -> None:
    x = _leaf([1.0, 2.0], gradgen.float64)
    message = oracle(
        "inline_kernel.broadcast_error",
        lambda torch: _error_text(
            lambda: torch.ones(2, dtype=torch.float64, requires_grad=True)
            * torch.ones(3, dtype=torch.float64)
        ),
    )
    assert _error_text(lambda: x * gradgen.ones(3, dtype=gradgen.float64)) == message
    assert _error_text(lambda: x + gradgen.ones(3, dtype=gradgen.float64)) == message


def _error_text(call: object) -> str:
    try:
        call()  # type: ignore[operator]
    except RuntimeError as error:
        return str(error)
    raise AssertionError("no RuntimeError")


def test_overflow_is_silent_as_in_the_kernel() -> None:
    y = _leaf(1e308, gradgen.float64)
    with warnings.catch_warnings(record=True) as caught:
        big = y * 10.0
        doubled = y + y
        nan = (big - big) * y
    assert big.item() == float("inf") and doubled.item() == float("inf")
    assert np.isnan(nan.item())
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []


def test_hooks_and_anomaly_still_see_the_node() -> None:
    x = _leaf(3.0, gradgen.float64)
    seen: list[float] = []
    y = x * 2.0
    y.register_hook(lambda grad: seen.append(grad.item()))
    with gradgen.autograd.detect_anomaly():
        z = y * y
    z.backward()
    assert seen == [12.0]  # dz/dy = 2y
    assert x.grad is not None and x.grad.item() == 24.0  # dz/dx = 8x


def test_only_plain_arithmetic_over_a_pair_is_inlined() -> None:
    inlined = {
        name: "array_0 = " in inspect.getsource(getattr(variable_type, name))
        for name in (
            "fast_mul_Tensor",  # self * other
            "fast_add_Tensor",  # self + other if alpha == 1 else ...
            "fast_sub_Tensor",  # the helper `subtract`'s arithmetic (not for bool)
            "fast_mul_Scalar",  # one tensor and a Python number (session 10)
            "fast_div_Tensor",  # calls a helper
        )
    }
    assert inlined == {
        "fast_mul_Tensor": True,
        "fast_add_Tensor": True,
        "fast_sub_Tensor": True,
        "fast_mul_Scalar": True,
        "fast_div_Tensor": False,
    }
