"""Half precision as PyTorch computes it. A number too large for float16 meeting a
float16 tensor: PyTorch computes half-precision arithmetic in float32 and rounds the
result to float16, so `x_half * 70000` is 35008 for x = 0.5 (not inf from casting 70000 to float16 first),
and `x_half / 70000` is a small number, not 0. Wrapped Python numbers and 0-d tensors
alike, on the recorded fast path, the kernel and under no_grad, without numpy's
overflow warning. Sums and means of float16 accumulate in float32 likewise. Answers
are PyTorch's (tests/torch_oracle.py)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

F = Callable[[Any], Any]


def _half(lib: Any, requires_grad: bool = False) -> Any:
    return lib.tensor(
        [0.5, 0.3333, 1e-3, 1.0, -2.0],
        dtype=lib.float16,
        requires_grad=requires_grad,
    )


CASES: dict[str, F] = {
    "mul int": lambda lib: _half(lib) * 70000,
    "rmul int": lambda lib: 70000 * _half(lib),
    "mul float": lambda lib: _half(lib) * 1.0e5,
    "div float": lambda lib: _half(lib) / 70000.0,
    "div method": lambda lib: _half(lib).div(70000),
    "add float": lambda lib: _half(lib) + 70000.0,
    "sub int": lambda lib: _half(lib) - 65536,
    "sub function": lambda lib: lib.sub(_half(lib), 70000.0),
    "mul function": lambda lib: lib.mul(_half(lib), 70000),
    "mul 0-d float64 tensor": lambda lib: _half(lib)
    * lib.tensor(70000.0, dtype=lib.float64),
    "mul 0-d int tensor": lambda lib: _half(lib) * lib.tensor(70000),
    "add 0-d float32 tensor": lambda lib: _half(lib)
    + lib.tensor(-70000.0, dtype=lib.float32),
    "mul recorded": lambda lib: (_half(lib, True) * 70000).detach(),
    "div recorded": lambda lib: (_half(lib, True) / 70000.0).detach(),
    "mul in range": lambda lib: _half(lib) * 0.1,
    "mul inf": lambda lib: _half(lib) * float("inf"),
    "mul nan": lambda lib: _half(lib) * float("nan"),
    "maximum 0-d": lambda lib: lib.maximum(_half(lib), lib.tensor(70000.0)),
    # sums and means accumulate in float32 and round once (numpy's float16 sum
    # rounds every partial sum: 60000 + 10000 is inf there)
    "sum": lambda lib: lib.tensor(
        [60000.0, 10000.0, -10000.0], dtype=lib.float16
    ).sum(),
    "sum dim": lambda lib: lib.tensor(
        [[60000.0, 1.0], [10000.0, 2.0], [-10000.0, 3.0]], dtype=lib.float16
    ).sum(0),
    "mean": lambda lib: lib.ones(70000, dtype=lib.float16).mean(),
    "mean dim": lambda lib: lib.ones((2, 70000), dtype=lib.float16).mean(1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_half_with_a_large_number_as_pytorch(case: str) -> None:
    call = CASES[case]
    expected = oracle("answer", lambda torch: call(torch).numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "overflow encountered in cast"
        got = call(gradgen)
    assert got.dtype == gradgen.float16
    np.testing.assert_array_equal(got.numpy(), expected)


def test_the_same_under_no_grad_and_in_a_loop() -> None:
    """The number's cast is cached per dtype (tensor.NumberCasts): the second call,
    the float32 tensor after the float16 one, and no_grad all give the same answer
    as the first call's kernel."""
    x = gradgen.tensor([0.5, 2.0], dtype=gradgen.float16)
    first = (x * 70000).numpy()
    np.testing.assert_array_equal((x * 70000).numpy(), first)
    with gradgen.no_grad():
        np.testing.assert_array_equal((x * 70000).numpy(), first)
    np.testing.assert_array_equal(first, [35008.0, np.inf])  # 140000 is past 65504
    y = gradgen.tensor([0.5, 2.0], dtype=gradgen.float32)
    np.testing.assert_array_equal((y * 70000).numpy(), [35000.0, 140000.0])
    assert (y * 70000).dtype == gradgen.float32


GRAD_CASES: dict[str, F] = {
    "div": lambda x: x / 70000.0,
    "mul": lambda x: (x * 1e-2) * 70000,
    "mul float": lambda x: (x * 1e-3) * 70000.0,
    "rmul": lambda x: 1.0e5 * (x * 1e-2),
    "sub": lambda x: (x - 70000.0) * 1e-3,
}


def _grad(lib: Any, case: str, create_graph: bool) -> Any:
    x = lib.tensor(
        [0.5, 0.3333, 1e-3, 1.0, -2.0], dtype=lib.float16, requires_grad=True
    )
    (grad,) = lib.autograd.grad(
        GRAD_CASES[case](x).sum(), [x], create_graph=create_graph
    )
    return grad.detach().numpy()


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradient_through_a_large_number(case: str) -> None:
    """The backward's array formulas and its tensor form (create_graph) take the
    number as the forward does: d(x / 70000)/dx is 1.43e-05 in float16, not 0."""
    expected = oracle("grad", lambda torch: _grad(torch, case, False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(_grad(gradgen, case, False), expected)
        np.testing.assert_array_equal(_grad(gradgen, case, True), expected)


def _mean_grad(lib: Any) -> Any:
    x = lib.ones(70000, dtype=lib.float16, requires_grad=True)
    x.mean().backward()
    return x.grad.numpy()


def test_mean_over_more_elements_than_float16_holds() -> None:
    """mean's backward divides the seed by numel (70000, inf in float16): every
    element's gradient is 1.43e-05, not 0 (the array form's spread quotient)."""
    expected = oracle("grad", lambda torch: _mean_grad(torch)[:3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _mean_grad(gradgen)
    np.testing.assert_array_equal(got[:3], expected)
    assert np.all(got == got[0])
