"""Session 10, third wave (issue 14): W1's backward.

The lean loop keeps the next node in a local when it would pop first anyway (its
sequence number beats the heap's top), so where the graph branches it pushes and pops
less; the order nodes run in stays PyTorch's (checked here with hooks, which record it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

Build = Callable[[Any, list[str]], Any]


def _hooked(t: Any, name: str, order: list[str]) -> Any:
    t.register_hook(lambda g: order.append(name))
    return t


def _w1(lib: Any, order: list[str]) -> Any:
    a = _hooked(lib.tensor(2.0, dtype=lib.float64, requires_grad=True), "a", order)
    b = _hooked(lib.tensor(6.0, dtype=lib.float64, requires_grad=True), "b", order)
    p = _hooked(a**3, "p", order)
    m = _hooked(3 * p, "m", order)
    q = _hooked(b**2, "q", order)
    return m - q


def _fan(lib: Any, order: list[str]) -> Any:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = [_hooked(x * (i + 1), f"y{i}", order) for i in range(5)]
    return (((y[3] + y[0]) + y[4]) + (y[1] + y[2])).sum()


def _leaves(lib: Any, order: list[str]) -> Any:
    # (hooks on the products, not the leaves: PyTorch's queue does not order the
    # leaves' sinks among themselves, they share one sequence number)
    a, b, c = (
        lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (1.5, 2.5, -0.5)
    )
    return (
        _hooked(a * b, "ab", order)
        + _hooked(c * a, "ca", order)
        + _hooked((b - c) * 2.0, "bc", order)
    )


def _diamond(lib: Any, order: list[str]) -> Any:
    x = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
    u = _hooked(x.exp(), "u", order)
    v = _hooked(x.sin(), "v", order)
    w = _hooked(u * v, "w", order)
    s = _hooked(u + 1.0, "s", order)
    return w * s - v


GRAPHS: dict[str, Build] = {
    "w1": _w1,
    "fan": _fan,
    "leaves": _leaves,
    "diamond": _diamond,
}


def _order(lib: Any, build: Build) -> list[str]:
    order: list[str] = []
    build(lib, order).backward()
    return order


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_hooks_run_in_pytorchs_order(name: str) -> None:
    build = GRAPHS[name]
    expected = oracle(name, lambda torch: _order(torch, build))
    assert _order(gradgen, build) == expected


def test_w1_gradients_by_hand() -> None:
    a = gradgen.tensor(2.0, dtype=gradgen.float64, requires_grad=True)
    b = gradgen.tensor(6.0, dtype=gradgen.float64, requires_grad=True)
    for _ in range(2):
        a.grad = None
        b.grad = None
        q = 3 * a**3 - b**2
        q.backward()
        assert a.grad is not None and b.grad is not None
        assert a.grad.dtype == gradgen.float64 and a.grad.shape == ()
        assert a.grad.item() == 36.0  # 9 a**2
        assert b.grad.item() == -12.0  # -2 b


def test_branching_graph_gradients_match_pytorch() -> None:
    def grads(lib: Any) -> list[Any]:
        x = lib.tensor([0.25, -1.5, 3.0], dtype=lib.float64, requires_grad=True)
        y = [x * (i + 1.5) for i in range(4)]
        z = (y[2] * y[0] + y[3].exp()) - (y[1] ** 2) * y[3]
        z.sum().backward()
        return [x.grad.detach().numpy() if lib is not gradgen else x.grad.numpy()]

    expected = oracle("branching", grads)
    got = grads(gradgen)
    assert np.array_equal(got[0], expected[0])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_zero_d_float_output_seeds_one_of_its_dtype(dtype: str) -> None:
    # backward() hands a 0-d float output's seed to the engine at once
    x = gradgen.tensor(1.5, dtype=getattr(gradgen, dtype), requires_grad=True)
    y = x * x * 4.0
    y.backward(retain_graph=True)
    assert x.grad is not None and x.grad.dtype == x.dtype and x.grad.shape == ()
    assert x.grad.item() == 12.0  # 8 x
    y.backward()  # retained: accumulates
    assert x.grad.item() == 24.0
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
