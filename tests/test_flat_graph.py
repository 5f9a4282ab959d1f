"""Flat graph nodes (issue 14, session 9): a Node keeps its next edges in its own
slots (`_num_edges`, `_fn0/_nr0`, `_fn1/_nr1`, then `_more`), so a recorded op leaves
one object the cyclic garbage collector tracks (the node) instead of the node plus
its edges' tuples; the fast paths store saved inputs inline; the engine sums small
gradients in its loop; binary kernels wrap a 0-d result's numpy scalar inline. And
what must not change: the Node API, PyTorch's errors, hooks seeing every save."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd.graph import saved_tensors_hooks
from gradgen.graph import ERR_BACKWARD_TWICE, Node
from gradgen.tensor import Tensor


def leaf(values: Any, dtype: Any = None) -> Tensor:
    return gradgen.tensor(values, dtype=dtype or gradgen.float64, requires_grad=True)


class _Pass(Node):
    __slots__ = ()


# -- objects the collector tracks ------------------------------------------------------


def _tracked_holding_a_node() -> int:
    """How many tracked objects other than nodes refer to a Node directly."""
    count = 0
    for obj in gc.get_objects():
        if type(obj) is tuple and any(issubclass(type(item), Node) for item in obj):
            count += 1
    return count


def test_a_recorded_chain_leaves_no_edge_tuples() -> None:
    x = leaf(1.0)
    gc.collect()
    before = _tracked_holding_a_node()
    y = x
    for _ in range(200):
        y = y * 1.0001
    gc.collect()
    # Before: each op left a tuple of edges and an edge tuple holding the previous node.
    assert _tracked_holding_a_node() - before == 0
    y.backward()
    assert x.grad is not None
    assert x.grad.item() == pytest.approx(1.0001**200)


# -- the Node API over flat edges ------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5])
def test_set_next_edges_reads_back_as_pairs(count: int) -> None:
    children = [_Pass() for _ in range(count)]
    edges = tuple((None, 0) if i == 1 else (children[i], i % 2) for i in range(count))
    node = _Pass()
    node.set_next_edges(edges)
    assert node._next_edges == edges
    assert node.next_functions == edges
    assert node.num_outputs == count
    assert [node.should_compute_output(i) for i in range(count)] == [
        i != 1 for i in range(count)
    ]
    assert node.task_needs_input_grad() == tuple(i != 1 for i in range(count))
    for i in range(count):
        assert node.next_edge(i) == edges[i]
    # one more than the deepest child (children are at 0)
    assert node._topological_nr == (1 if count else 0)


def test_assigning_next_edges_replaces_them() -> None:
    a, b = _Pass(), _Pass()
    node = _Pass()
    node.set_next_edges(((a, 0), (b, 1), (a, 2)))
    node._next_edges = ((b, 3),)
    assert node.next_functions == ((b, 3),)
    assert node.num_outputs == 1


def test_fast_path_edges_and_topological_numbers() -> None:
    x, c = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * c  # both inputs leaves: edges into their accumulators
    node: Any = y.grad_fn
    assert node.next_functions == (
        (x._get_grad_accumulator(), 0),
        (c._get_grad_accumulator(), 0),
    )
    assert node._topological_nr == 1
    z = (y + 1.0) * y  # depth: mul(add(mul), mul)
    assert z.grad_fn._topological_nr == 3
    assert z.grad_fn.next_functions[1] == (node, 0)
    w = gradgen.tensor([5.0, 6.0]) * y  # first input needs no gradient
    assert w.grad_fn.next_functions[0] == (None, 0)
    assert w.grad_fn._topological_nr == 2


def test_three_input_node_gradients() -> None:
    a, b, c = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([5.0, 6.0])
    out = gradgen.addcmul(a, b, c, value=2.0)  # a + 2 b c
    assert out.grad_fn.num_outputs == 3
    assert [f is not None for f, _ in out.grad_fn.next_functions] == [True] * 3
    out.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    assert b.grad.tolist() == [10.0, 12.0]  # 2 c
    assert c.grad.tolist() == [6.0, 8.0]  # 2 b
    # grad() with inputs: exec info decides what runs
    (gb,) = gradgen.autograd.grad(gradgen.addcmul(a, b, c).sum(), [b])
    assert gb.tolist() == [5.0, 6.0]


def test_cat_of_many_inputs_keeps_every_edge() -> None:
    parts = [leaf([float(i)]) for i in range(5)]
    out = gradgen.cat(parts) * gradgen.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    cat_node = out.grad_fn.next_functions[0][0]
    assert cat_node.num_outputs == 5
    out.sum().backward()
    assert [p.grad.item() for p in parts] == [1.0, 2.0, 3.0, 4.0, 5.0]


# -- what must not change --------------------------------------------------------------


def test_second_backward_through_a_released_chain_raises() -> None:
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    assert ERR_BACKWARD_TWICE.startswith("Trying to backward through the graph")


def test_inplace_change_of_an_input_saved_by_a_fast_path_raises() -> None:
    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    y = x * c  # saves c inline (no version counter yet)
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensor_hooks_see_the_fast_path_saves() -> None:
    packed: list[Any] = []

    def pack(t: Tensor) -> Tensor:
        packed.append(t)
        return t

    x, c = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    with saved_tensors_hooks(pack, lambda t: t):
        y = x * c
    assert len(packed) == 2
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


# -- the engine's small sums, and 0-d results ------------------------------------------


@pytest.mark.parametrize("size", [1, 8, 1024, 1025, 5000])
def test_many_gradients_into_one_leaf(size: int) -> None:
    x = leaf(np.linspace(0.5, 1.5, size))
    total = x * 0.0
    for k in range(1, 21):
        total = total + x * float(k)
    total.sum().backward()
    assert np.array_equal(x.grad.numpy(), np.full(size, 210.0))  # 1 + ... + 20


def test_a_0d_leaf_used_many_times() -> None:
    x = leaf(2.0)
    y = x * x * x + x * 3.0  # dy/dx = 3 x^2 + 3
    y.backward()
    assert x.grad.item() == 15.0
    assert type(x.grad._data) is np.ndarray


@pytest.mark.parametrize("dtype", [gradgen.float32, gradgen.float64])
def test_binary_0d_results_are_0d_arrays_of_the_common_dtype(dtype: Any) -> None:
    x = gradgen.tensor(1.5, dtype=dtype)
    y = gradgen.tensor(2.0, dtype=dtype)
    for result in (x * y, x + y, x - y, x * 2.0):
        assert type(result._data) is np.ndarray
        assert result._data.shape == ()
        assert result.dtype == dtype
    assert (x * y).item() == 3.0
    mixed = gradgen.tensor(1.5, dtype=gradgen.float32) * gradgen.tensor(
        2.0, dtype=gradgen.float64
    )
    assert mixed.dtype == gradgen.float64 and type(mixed._data) is np.ndarray
