"""The backward that records no graph hands gradients on as bare arrays between nodes
with an array form (engine.py, Node.apply_arrays): the values, `.grad`'s stealing and
aliasing rules, hooks, captures and mixed graphs are as with Tensors (hand math)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import engine
from gradgen.autograd import Function
from gradgen.graph import Node
from gradgen.helpers.arrays import tensor_forms_only
from gradgen.tensor import Tensor

from engine_spies import accumulated_arrays


def leaf(values: Any) -> Tensor:
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=True)


def test_a_chain_of_array_forms_gives_the_hand_gradient() -> None:
    x = leaf([1.0, 2.0])
    y = x
    for _ in range(50):
        y = y * 1.5
    y.sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [1.5**50, 1.5**50])


def test_the_leaf_takes_over_a_fresh_gradient_without_a_copy() -> None:
    x = leaf(np.ones((3, 4)))
    w = gradgen.tensor(np.full((4, 2), 2.0))
    with accumulated_arrays() as seen:
        gradgen.matmul(x, w).sum().backward()
    assert x.grad is not None
    assert seen == [id(x.grad._data)]  # the array mm made became .grad
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 4), 4.0))


def test_a_gradient_the_user_holds_is_copied_not_aliased() -> None:
    x = leaf([1.0, 2.0, 3.0])
    seed = gradgen.tensor([1.0, 1.0, 1.0], dtype=gradgen.float64)
    (x + 0.0).backward(seed)  # AddBackward passes the user's array on
    assert x.grad is not None
    assert not np.shares_memory(x.grad._data, seed._data)
    seed._data[0] = 5.0
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_grad_accumulates_in_place_across_backwards() -> None:
    x = leaf([1.0, 2.0])
    (x * 3.0).sum().backward()
    assert x.grad is not None
    first = x.grad
    version = first._version
    (x * 4.0).sum().backward()
    assert x.grad is first  # the same .grad object, as PyTorch
    assert first._version == version + 1
    assert first.tolist() == [7.0, 7.0]


def test_two_paths_into_one_buffer_are_summed() -> None:
    x = leaf(2.0)
    y = x * 3.0
    z = y * y + y * 5.0  # dz/dy = 2 y + 5 = 17, dy/dx = 3
    z.backward()
    assert x.grad is not None and x.grad.item() == 51.0


def test_tensor_hooks_see_tensors_and_may_replace_them() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2.0
    seen: list[Any] = []

    def hook(grad: Tensor) -> Tensor:
        seen.append(type(grad))
        return grad * 10.0

    y.register_hook(hook)
    (y * 3.0).sum().backward()
    assert seen == [Tensor]
    assert x.grad is not None and x.grad.tolist() == [60.0, 60.0]


def test_leaf_hooks_and_post_accumulate_hooks_run() -> None:
    x = leaf([1.0])
    calls: list[str] = []
    x.register_hook(lambda g: calls.append(f"hook {g.tolist()}"))
    x.register_post_accumulate_grad_hook(lambda t: calls.append("post"))
    (x * 2.0).sum().backward()
    assert calls == ["hook [2.0]", "post"]


def test_autograd_grad_returns_tensors_and_leaves_grad_alone() -> None:
    x = leaf([1.0, 2.0])
    (g,) = gradgen.autograd.grad((x * x).sum(), [x])
    assert type(g) is Tensor
    assert g.tolist() == [2.0, 4.0]
    assert x.grad is None


def test_retain_grad_of_a_non_leaf_is_a_tensor() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.retain_grad()
    (y * 3.0).sum().backward()
    assert type(y.grad) is Tensor
    assert y.grad is not None and y.grad.tolist() == [3.0, 3.0]


class _Double(Function):
    """A custom Function (no array form) between nodes that have one."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return x * 2.0

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        assert type(grad) is Tensor
        return grad * 2.0


def test_a_node_without_array_form_gets_tensors_in_a_mixed_graph() -> None:
    x = leaf([1.0, -1.0])
    y = _Double.apply(x * 3.0) * 5.0
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [30.0, 30.0]


def test_broadcast_gradient_is_summed_to_the_input_shape() -> None:
    b = leaf([0.0, 0.0, 0.0])
    x = gradgen.tensor(np.arange(6.0).reshape(2, 3))
    (x + b).sum().backward()
    assert b.grad is not None and b.grad.tolist() == [2.0, 2.0, 2.0]


def test_a_gradient_of_the_wrong_shape_is_refused_with_the_node_named() -> None:
    class Wrong(Node):
        __slots__ = ()
        _has_array_form = True

        def apply(self, grads: Any) -> list[Any]:
            raise AssertionError("apply_arrays runs first")

        def apply_arrays(self, grads: list[Any]) -> list[Any]:
            return [np.ones((5,))]

    x = leaf([1.0, 2.0])
    node = Wrong()
    node.set_next_edges(((x._get_grad_accumulator(), 0),))
    node._input_metadata = (((2,), np.dtype("float64")),)
    with pytest.raises(
        RuntimeError, match="Function Wrong returned an invalid gradient"
    ):
        engine.execute(
            [gradgen.graph.Edge(node, 0)],
            [gradgen.tensor(np.ones(2))],
            keep_graph=False,
            create_graph=False,
        )


def test_tensor_forms_only_gives_the_same_gradients() -> None:
    def run() -> list[float]:
        x = leaf([0.5, -1.5, 2.0])
        ((x**3 - x * 2.0).exp() / (x * x + 1.0)).sum().backward()
        assert x.grad is not None
        return list(x.grad.tolist())

    with_arrays = run()
    with tensor_forms_only():
        with_tensors = run()
    assert with_arrays == with_tensors


def test_retain_graph_runs_twice_and_release_refuses_a_third() -> None:
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad is not None and x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
