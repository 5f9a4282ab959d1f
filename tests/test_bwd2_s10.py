"""Session 10, second wave (issue 14): the backward's per-node costs.

The array forms decide the no-op cases of `maybe_multiply` (a scalar of 1) and
`handle_r_to_c` (a gradient that is not complex) inline; the gradients stay the
helpers' (checked here by hand and against the tensor forms, bit for bit).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from codegen.array_formulas import inline_no_ops
from gradgen.helpers.arrays import tensor_forms_only

# -- the generator ----------------------------------------------------------------------


def test_handle_r_to_c_of_a_name_is_decided_inline() -> None:
    assert inline_no_ops("arrays.handle_r_to_c(self, grad)") == (
        "grad if grad is None or grad.dtype.kind != 'c' "
        "else arrays.handle_r_to_c(self, grad)"
    )


def test_handle_r_to_c_of_a_negated_name_tests_the_name() -> None:
    assert inline_no_ops("arrays.handle_r_to_c(other, arrays.neg(grad))") == (
        "arrays.neg(grad) if grad is None or grad.dtype.kind != 'c' "
        "else arrays.handle_r_to_c(other, arrays.neg(grad))"
    )


def test_maybe_multiply_by_a_conjugate_tests_the_number() -> None:
    got = inline_no_ops(
        "arrays.handle_r_to_c(other, "
        "arrays.maybe_multiply(grad, arrays.scalar_conj(alpha)))"
    )
    assert got == (
        "(grad if grad is None or grad.dtype.kind != 'c' "
        "else arrays.handle_r_to_c(other, grad)) if alpha == 1 "
        "else arrays.handle_r_to_c(other, "
        "arrays.maybe_multiply(grad, arrays.scalar_conj(alpha)))"
    )


def test_other_arguments_keep_the_calls() -> None:
    for expression in (
        "arrays.handle_r_to_c(self, arrays.mul(grad, other))",
        "arrays.maybe_multiply(grad, arrays.mul(alpha, 2))",
        "arrays.handle_r_to_c(self, grad, extra=1)",
        "handle_r_to_c(self, grad)",  # (not a twin)
    ):
        assert inline_no_ops(expression) == expression


# -- the runtime ------------------------------------------------------------------------


def _dtype(values: list[Any]) -> Any:
    return (
        gradgen.complex128
        if any(isinstance(v, complex) for v in values)
        else (gradgen.float64)
    )


def _grads_both_forms(
    function: Any, values: list[Any], seed: Any
) -> list[list[np.ndarray]]:
    results = []
    for tensor_form in (False, True):
        leaves = [
            gradgen.tensor(v, dtype=_dtype(v), requires_grad=True) for v in values
        ]
        out = function(*leaves)
        if tensor_form:
            with tensor_forms_only():
                out.backward(gradient=gradgen.tensor(seed, dtype=gradgen.complex128))
        else:
            out.backward(gradient=gradgen.tensor(seed, dtype=gradgen.complex128))
        results.append([leaf.grad.numpy() for leaf in leaves])
    for a, t in zip(*results):
        assert a.dtype == t.dtype and a.shape == t.shape
        np.testing.assert_array_equal(a, t)
    return results[0]


REAL = [1.0, -2.0]
COMPLEX = [1 + 2j, 3 - 1j]
SEED = np.array([1 + 1j, 2 - 3j])


@pytest.mark.parametrize("alpha", [1, 2, 1.0, 0.5j])
def test_sub_of_real_and_complex_takes_the_real_part(alpha: Any) -> None:
    gx, gy = _grads_both_forms(
        lambda x, y: gradgen.sub(x, y, alpha=alpha), [REAL, COMPLEX], SEED
    )
    assert gx.dtype == np.float64 and gx.tolist() == [1.0, 2.0]
    assert gy.dtype == np.complex128
    np.testing.assert_array_equal(gy, -SEED * np.conj(alpha))


@pytest.mark.parametrize("alpha", [1, 3, 1.0, 2j])
def test_add_of_complex_and_real_takes_the_real_part(alpha: Any) -> None:
    gx, gy = _grads_both_forms(
        lambda x, y: gradgen.add(x, y, alpha=alpha), [COMPLEX, REAL], SEED
    )
    assert gx.dtype == np.complex128 and gx.tolist() == SEED.tolist()
    expected = (SEED * np.conj(alpha)).real if alpha != 1 else SEED.real
    assert gy.dtype == np.float64 and gy.tolist() == expected.tolist()


def test_real_chain_gradients_are_the_hand_computed_ones() -> None:
    # W2's chain, two steps: y = (x * c + 0.5) - x, twice.
    x0, c0 = np.array([0.25, -0.75]), np.array([0.5, 2.0])
    x = gradgen.tensor(x0, dtype=gradgen.float64, requires_grad=True)
    c = gradgen.tensor(c0, dtype=gradgen.float64, requires_grad=True)
    y = x
    for _ in range(2):
        y = y * c + 0.5 - x
    y.sum().backward()
    # y1 = x (c - 1) + 0.5; y2 = y1 c + 0.5 - x = x (c^2 - c - 1) + 0.5 c + 0.5
    assert x.grad is not None and c.grad is not None
    assert x.grad.tolist() == (c0 * c0 - c0 - 1).tolist()
    assert c.grad.tolist() == (x0 * (2 * c0 - 1) + 0.5).tolist()


def test_a_broadcast_gradient_is_summed_to_its_input() -> None:
    # _run_plain hands anything but an array of the input's shape and dtype to
    # passed_on: here x's gradient (3, 4) is summed to x's shape (3, 1).
    x = gradgen.tensor([[1.0], [2.0], [3.0]], dtype=gradgen.float64, requires_grad=True)
    c = gradgen.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    (x * c).sum().backward()
    assert x.grad is not None and c.grad is not None
    assert x.grad.shape == (3, 1)
    assert x.grad.numpy().ravel().tolist() == [6.0, 22.0, 38.0]
    assert c.grad.numpy().tolist() == [[1.0] * 4, [2.0] * 4, [3.0] * 4]


def test_a_gradient_of_another_dtype_is_cast_to_its_input() -> None:
    x = gradgen.tensor([0.1, 0.2], dtype=gradgen.float32, requires_grad=True)
    w = gradgen.tensor([3.0, 5.0], dtype=gradgen.float64, requires_grad=True)
    (x * w).sum().backward()
    assert x.grad is not None and w.grad is not None
    assert x.grad.dtype == gradgen.float32 and x.grad.tolist() == [3.0, 5.0]
    assert w.grad.dtype == gradgen.float64
    assert w.grad.numpy().tolist() == np.array([0.1, 0.2], np.float32).tolist()
