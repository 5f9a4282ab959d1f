"""The Python around bench W4's compiled MLP step: the SGD update `p -= lr * p.grad`
under no_grad takes the in-place operators' generated no-grad fast path
(variable_type.py's `fast_sub__Tensor`: the kernel and the version bump in one frame).
Each test checks which path ran (by counting calls of the ADInplaceOrView kernel in the
dispatch table, which only the dispatcher's path enters) and hand-computed values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.dispatch import AFTER_AUTOGRAD_KEYSET
from gradgen.generated import operators, variable_type


class _Counter:
    def __init__(self) -> None:
        self.calls = 0


@pytest.fixture
def sub_calls() -> Iterator[_Counter]:
    """Counts the dispatcher's no-grad calls of sub_.Tensor (its ADInplaceOrView
    kernel, which the fast path does not enter)."""
    table = operators.sub__Tensor._table
    original = table[AFTER_AUTOGRAD_KEYSET]
    assert original is not None
    counter = _Counter()

    def counting(*args: Any) -> Any:
        counter.calls += 1
        return original(*args)

    table[AFTER_AUTOGRAD_KEYSET] = counting
    try:
        yield counter
    finally:
        table[AFTER_AUTOGRAD_KEYSET] = original


def _sgd_setup() -> tuple[Any, Any]:
    p = gradgen.tensor([1.0, 2.0, 4.0], requires_grad=True)
    (p * p).sum().backward()  # p.grad = 2 p = [2, 4, 8]
    return p, p.grad


def test_the_sgd_update_takes_the_no_grad_fast_path(sub_calls: _Counter) -> None:
    assert operators.sub__Tensor.fast is variable_type.fast_sub__Tensor
    p, grad = _sgd_setup()
    memory = p._data
    version = p._version
    with gradgen.no_grad():
        p -= 0.5 * grad
    assert sub_calls.calls == 0
    assert p.tolist() == [0.0, 0.0, 0.0]  # p - 0.5 * 2p
    assert p._data is memory  # in place
    assert p._version == version + 1
    assert p.requires_grad and p.grad_fn is None


def test_the_version_bump_is_seen_by_a_saved_tensor() -> None:
    p = gradgen.tensor([1.0, 2.0], requires_grad=True)
    x = gradgen.tensor([3.0, 5.0])
    y = (p * x).sum()  # saves x
    with gradgen.no_grad():
        x.sub_(gradgen.tensor([1.0, 1.0]), alpha=2)
    assert x.tolist() == [1.0, 3.0]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_grad_mode_takes_the_dispatcher(sub_calls: _Counter) -> None:
    p, grad = _sgd_setup()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p -= grad
    x = gradgen.tensor([5.0, 7.0])
    x -= gradgen.tensor([1.0, 2.0], requires_grad=True)
    assert x.tolist() == [4.0, 5.0] and x.grad_fn is not None
    assert (
        sub_calls.calls == 1
    )  # grad mode on: the dispatcher's path (Autograd, then it)


def test_the_profiler_sees_the_no_grad_update(sub_calls: _Counter) -> None:
    p, grad = _sgd_setup()
    with gradgen.autograd.profiler.profile() as prof, gradgen.no_grad():
        p -= grad
    assert "aten::sub_" in [event.name for event in prof.function_events]
    assert p.tolist() == [-1.0, -2.0, -4.0]


def test_errors_match_the_dispatchers_path() -> None:
    x = gradgen.tensor([1, 2])
    with gradgen.no_grad(), pytest.raises(RuntimeError, match="can't be cast"):
        x -= gradgen.tensor([0.5, 0.5])
    assert x.tolist() == [1, 2]
    y = gradgen.tensor([1.0, 2.0])
    with gradgen.no_grad(), pytest.raises(RuntimeError, match="doesn't match"):
        y -= gradgen.tensor([[1.0, 2.0], [3.0, 4.0]])


def test_the_compiled_step_updates_as_numpy_does() -> None:
    rng = np.random.default_rng(16)
    x0, w0 = rng.standard_normal((8, 5)), rng.standard_normal((5, 3))
    x = gradgen.tensor(x0)
    w = gradgen.tensor(w0.copy(), requires_grad=True)
    lr = 0.1

    @gradgen.compile
    def loss_of(x: Any) -> Any:
        return gradgen.mean(gradgen.relu(gradgen.matmul(x, w)) ** 2)

    expected = w0.copy()
    for _ in range(3):
        w.grad = None
        loss_of(x).backward()
        with gradgen.no_grad():
            w -= lr * w.grad
        pre = x0 @ expected
        g = x0.T @ (2 * np.maximum(pre, 0) * (pre > 0) / pre.size)
        expected -= lr * g
    np.testing.assert_allclose(w.detach().numpy(), expected, rtol=1e-13, atol=1e-15)
