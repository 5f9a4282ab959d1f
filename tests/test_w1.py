"""Issue 14, W1 (`Q = 3*a**3 - b**2; Q.backward()` on 0-d tensors): the lean paths of
`backward()` on a one-element output, 0-d results and scalar operands give the same
values, dtypes and errors as the general paths (hand math)."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from gradgen.helpers.arrays import tensor_forms_only
from gradgen.tensor import Tensor


def leaf(value: object, dtype: object = gradgen.float64) -> Tensor:
    return gradgen.tensor(value, dtype=dtype, requires_grad=True)


def test_w1_gives_the_hand_gradients_on_every_step() -> None:
    a, b = leaf(2.0), leaf(3.0)
    for step in range(1, 4):
        q = 3 * a**3 - b**2
        q.backward()
        assert a.grad is not None and b.grad is not None
        # dQ/da = 9 a^2 = 36, dQ/db = -2 b = -6, accumulated over the steps.
        assert a.grad.item() == 36.0 * step
        assert b.grad.item() == -6.0 * step
        assert a.grad.dtype == gradgen.float64 and a.grad.shape == ()


def test_the_implicit_root_gradient_of_a_one_element_tensor_keeps_its_shape() -> None:
    x = leaf([[2.0]])
    (x * 5).backward()
    assert x.grad is not None
    assert x.grad.shape == (1, 1)
    assert x.grad.tolist() == [[5.0]]


def test_the_implicit_root_gradient_keeps_a_float32_dtype() -> None:
    x = leaf(1.5, gradgen.float32)
    (x * x).backward()
    assert x.grad is not None
    assert x.grad.dtype == gradgen.float32
    assert x.grad.item() == 3.0


def test_the_root_gradient_is_not_shared_between_calls() -> None:
    # y = x + 0 hands the root gradient of ones straight to x.grad, which the next
    # backward adds into in place: each call must make its own ones.
    x = leaf(1.0)
    (x + 0).backward()
    (x + 0).backward()
    assert x.grad is not None and x.grad.item() == 2.0
    y = leaf(1.0)
    (y + 0).backward()
    assert y.grad is not None and y.grad.item() == 1.0


def test_a_non_scalar_output_still_needs_a_gradient() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="implicitly created only for scalar"):
        (x * 2).backward()


def test_a_complex_output_is_refused_as_before() -> None:
    x = leaf(1.0 + 1.0j, gradgen.complex128)
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        (x * x).backward()


def test_retain_graph_lets_the_lean_path_run_twice() -> None:
    x = leaf(3.0)
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad is not None and x.grad.item() == 12.0
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_a_view_output_takes_the_general_path() -> None:
    x = leaf([4.0])
    y = (x * 2).view(())
    y.backward()
    assert x.grad is not None and np.array_equal(x.grad.numpy(), [2.0])


def test_power_of_a_float_base_keeps_numpy_values() -> None:
    x = gradgen.tensor(1.5, dtype=gradgen.float64)
    assert (x**3).item() == 1.5**3
    assert (x**-2).item() == 1.5**-2


def test_power_of_an_integer_base_to_a_negative_scalar_is_still_refused() -> None:
    x = gradgen.tensor([2, 3])
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        x**-1
    assert (x**2).tolist() == [4, 9]


def test_a_zero_d_result_is_a_tensor_of_the_operator_dtype() -> None:
    x = gradgen.tensor(2.0, dtype=gradgen.float32)
    y = x**3
    assert y.dtype == gradgen.float32 and y.shape == () and y.item() == 8.0
    z = gradgen.tensor(2, dtype=gradgen.int64) ** 2.5
    assert z.dtype == gradgen.float32  # the default dtype, as PyTorch
    assert z.item() == pytest.approx(2.0**2.5)


@pytest.mark.parametrize("exponent", [3, 2, 2.5, -1.5, 1, 0])
@pytest.mark.parametrize("values", [0.7310585786300049, [0.3, 1.7, 2.9]])
def test_pow_backward_array_form_matches_the_tensor_form_bit_for_bit(
    exponent: float, values: object
) -> None:
    def gradient() -> np.ndarray:
        x = leaf(values)
        y = x**exponent * 1.3  # the incoming gradient is not ones
        y.sum().backward()
        assert x.grad is not None
        return x.grad.numpy()

    array_form = gradient()
    with tensor_forms_only():
        tensor_form = gradient()
    assert array_form.dtype == np.float64
    assert array_form.tobytes() == tensor_form.tobytes()
    # By hand: d/dx (1.3 x^e) = 1.3 e x^(e-1).
    x = np.asarray(values, dtype=np.float64)
    expected = 1.3 * exponent * x ** (exponent - 1) if exponent else 0 * x
    np.testing.assert_allclose(array_form, expected, rtol=1e-14)


def test_pow_backward_of_a_float32_zero_d_base_keeps_its_dtype() -> None:
    x = leaf(1.5, gradgen.float32)
    (x**3).backward()
    assert x.grad is not None and x.grad.dtype == gradgen.float32
    assert x.grad.item() == np.float32(3) * np.float32(1.5) ** 2
