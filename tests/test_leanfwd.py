"""The lean recording path and engine loop (issue 14): the fused edge collection, the
SavedVariable without a version counter, tuple input metadata, the engine's inline
validation. Values are hand-computed."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import engine
from gradgen.graph import NO_EDGE, AccumulateGrad, Edge, Node
from gradgen.variable_type_utils import next_edges, next_edges_1, next_edges_2


def leaf(value: Any) -> gradgen.Tensor:
    return gradgen.tensor(np.asarray(value, dtype=np.float64), requires_grad=True)


def test_next_edges_is_none_when_nothing_records() -> None:
    x, c = leaf([1.0, 2.0]), gradgen.tensor([1.0, 2.0])
    assert next_edges_1(c) is None and next_edges_2(c, c) is None
    assert next_edges(c, None, c) is None
    with gradgen.no_grad():
        assert next_edges_1(x) is None and next_edges_2(x, x) is None
        assert next_edges(x, x, x) is None


def test_next_edges_point_at_the_producer_or_the_accumulator() -> None:
    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    y = x * c
    edges = next_edges_2(y, c)
    assert edges == ((y.grad_fn, 0), NO_EDGE)
    (accumulator, nr), none = next_edges_2(x, None)  # type: ignore[misc]
    assert isinstance(accumulator, AccumulateGrad) and nr == 0 and none is NO_EDGE
    assert next_edges(c, y, None) == (NO_EDGE, (y.grad_fn, 0), NO_EDGE)
    assert next_edges_1(None) is None


def test_save_guards_follow_the_edges() -> None:
    # mul saves `other` only for self's gradient and `self` only for other's.
    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    node: Any = (x * c).grad_fn
    assert node.other_ is not None and node.self_ is None
    node = (c * x).grad_fn
    assert node.self_ is not None and node.other_ is None


def test_a_tensor_saved_without_a_version_counter_still_detects_changes() -> None:
    x = leaf([1.0, 2.0])
    c = gradgen.tensor([3.0, 4.0])
    assert c._version_counter is None
    y = x * c  # saves c, which has no counter yet
    assert c._version_counter is None
    c.add_(1.0)  # the counter is created now, at version 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_an_unchanged_saved_tensor_unpacks() -> None:
    x = leaf([1.0, 2.0])
    c = gradgen.tensor([3.0, 4.0])
    (x * c).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_input_metadata_is_an_untracked_tuple() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2.0
    metadata = y.grad_fn._input_metadata  # type: ignore[union-attr]
    assert type(metadata) is tuple and metadata == (((2,), np.dtype(np.float64)),)
    # The collector untracks a tuple once it has found its items untracked: the shape,
    # then the (shape, dtype) entry, then the tuple holding it, one level per pass.
    for _ in range(3):
        gc.collect()
    assert not gc.is_tracked(metadata)


def test_accumulate_grad_makes_its_mutex_with_the_node() -> None:
    # Made with the node (the C lock: cheaper than a lazy one made under a module
    # lock when the first gradient arrives), and kept by it.
    x = leaf(2.0)
    y = x * 3.0
    accumulator = y.grad_fn.next_functions[0][0]  # type: ignore[union-attr]
    assert isinstance(accumulator, AccumulateGrad)
    mutex = accumulator._mutex
    assert mutex is not None
    y.backward()
    assert accumulator._mutex is mutex and x.grad.item() == 3.0


class _Returns(Node):
    """A node returning a fixed gradient, whatever it receives."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value

    def apply(self, grads: Any) -> list[Any]:
        return [self.value]


def _run_through(value: Any, x: gradgen.Tensor) -> None:
    node = _Returns(value)
    node.set_next_edges(((x._get_grad_accumulator(), 0),))
    node._input_metadata = (((), np.dtype(np.float64)),)
    seed = [gradgen.tensor(np.array(1.0))]
    engine.execute([Edge(node, 0)], seed, keep_graph=False, create_graph=False)


def test_the_engine_sums_a_broadcast_gradient_to_the_input_shape() -> None:
    x = leaf([1.0, 2.0])
    _run_through(gradgen.tensor(np.ones((3, 2))), x)
    assert x.grad.tolist() == [3.0, 3.0]


def test_the_engine_casts_a_gradient_to_the_input_dtype() -> None:
    x = leaf([1.0, 2.0])
    _run_through(gradgen.tensor(np.ones(2, dtype=np.float32)), x)
    assert x.grad.dtype == gradgen.float64 and x.grad.tolist() == [1.0, 1.0]


def test_the_engine_refuses_a_gradient_that_is_not_a_tensor() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(
        TypeError,
        match="Function _Returns returned an invalid gradient at index 0 - expected "
        "a Tensor or None, but got list",
    ):
        _run_through([1.0, 2.0], x)


def test_the_engine_refuses_a_gradient_of_the_wrong_shape() -> None:
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="got \\[3\\] but expected shape"):
        _run_through(gradgen.tensor(np.ones(3)), x)


def test_a_deep_chain_runs_without_recursion() -> None:
    x = leaf(1.0)
    y = x
    for _ in range(20_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0
