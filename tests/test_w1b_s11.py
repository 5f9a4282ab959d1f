"""Session 11 (issue 14): W1's backward on a tree.

compute_dependencies tells whether the graph is a tree (no node has two edges into
it); then engine_tree.run_tree runs it without dependency counts or waiting buffers.
These tests check that it runs exactly then, in PyTorch's order and with PyTorch's
gradients and errors, and that it steps aside (to _run_loop) where it must: hooks,
anomaly mode, the tensor forms, create_graph.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import autograd, engine
from gradgen.graph import AccumulateGrad, Node
from gradgen.helpers.arrays import tensor_forms_only
from torch_oracle import oracle


def _leaf(lib: Any, value: Any, dtype: str = "float64") -> Any:
    return lib.tensor(value, dtype=getattr(lib, dtype), requires_grad=True)


def _grad(t: Any) -> Any:
    return None if t.grad is None else np.array(t.grad.detach().numpy())


def _w1(lib: Any, dtype: str = "float64") -> tuple[Any, Any, Any]:
    a, b = _leaf(lib, 2.0, dtype), _leaf(lib, 6.0, dtype)
    return 3 * a**3 - b**2, a, b


@pytest.fixture
def loops() -> Iterator[list[str]]:
    """Which lean loop each backward ran ("tree" or "plain")."""
    seen: list[str] = []
    run_tree, run_plain = engine.run_tree, engine._run_plain

    def tree(*args: Any) -> Any:
        seen.append("tree")
        return run_tree(*args)

    def plain(*args: Any) -> Any:
        seen.append("plain")
        return run_plain(*args)

    engine.run_tree, engine._run_plain = tree, plain  # type: ignore[assignment]
    try:
        yield seen
    finally:
        engine.run_tree, engine._run_plain = run_tree, run_plain


# -- which graphs are trees ---------------------------------------------------------


def _is_tree(output: Any) -> bool:
    return engine.compute_dependencies(output.grad_fn, engine.GraphTask(True))


def test_w1_is_a_tree() -> None:
    q, _, _ = _w1(gradgen)
    assert _is_tree(q)


def test_a_leaf_used_twice_is_not_a_tree() -> None:
    x = _leaf(gradgen, 1.5)
    assert not _is_tree(x * 2.0 + x)


def test_an_interior_node_used_twice_is_not_a_tree() -> None:
    x = _leaf(gradgen, 1.5)
    y = x.exp()
    assert not _is_tree(y * 3.0 - y.sin())


def test_both_outputs_of_one_node_make_no_tree() -> None:
    x = _leaf(gradgen, [1.0, 2.0])
    first, second = x.unbind()
    assert not _is_tree(first * second)


# -- which loop runs ----------------------------------------------------------------


def test_w1_runs_on_the_tree_loop(loops: list[str]) -> None:
    q, a, b = _w1(gradgen)
    q.backward()
    assert loops == ["tree"]
    assert a.grad is not None and b.grad is not None
    assert (a.grad.item(), b.grad.item()) == (36.0, -12.0)  # 9 a**2, -2 b


def test_a_given_root_gradient_runs_on_the_tree_loop(loops: list[str]) -> None:
    x = _leaf(gradgen, [1.0, -2.0])
    (x.exp() * 2.0).backward(gradgen.tensor([1.0, 0.5], dtype=gradgen.float64))
    assert loops == ["tree"]
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [2 * np.exp(1.0), np.exp(-2.0)])


def test_a_shared_node_runs_on_the_plain_loop(loops: list[str]) -> None:
    x = _leaf(gradgen, 1.5)
    (x * x).backward()
    assert loops == ["plain"]
    assert x.grad is not None and x.grad.item() == 3.0


def test_tensor_forms_only_use_neither_loop(loops: list[str]) -> None:
    q, a, _ = _w1(gradgen)
    with tensor_forms_only():
        q.backward()
    assert loops == []
    assert a.grad is not None and a.grad.item() == 36.0


def test_anomaly_mode_steps_aside_with_the_same_gradients(loops: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (anomaly mode warns that it is on)
        with autograd.detect_anomaly():
            q, a, b = _w1(gradgen)
            q.backward()
    assert loops == ["tree"]  # entered, and handed over at its first node
    assert a.grad is not None and b.grad is not None
    assert (a.grad.item(), b.grad.item()) == (36.0, -12.0)


def test_create_graph_takes_the_tensor_form() -> None:
    a = _leaf(gradgen, 2.0)
    (first,) = autograd.grad(a**3, (a,), create_graph=True)
    assert first.item() == 12.0  # 3 a**2
    first.backward()  # recorded: a tree again, run from the tensor form's graph
    assert a.grad is not None and a.grad.item() == 12.0  # 6 a


# -- order, gradients and errors against PyTorch ------------------------------------


def _nodes(root: Any) -> list[Any]:
    seen: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        stack.extend(function for function, _ in node.next_functions)
    return seen


def _tree(lib: Any) -> tuple[Any, list[Any]]:
    a, b, c = _leaf(lib, 0.5), _leaf(lib, [1.5, -0.5]), _leaf(lib, 2.0)
    left = (a * 2.0).exp() + (b**2).sin().sum()
    right = (c - 1.0).tanh() * 3.0
    return left * right - (c.detach() * a.detach()).cos(), [a, b, c]


def _torch_order(torch: Any) -> list[str]:
    out, _ = _tree(torch)
    order: list[str] = []
    for node in _nodes(out.grad_fn):
        if node.name() != "torch::autograd::AccumulateGrad":
            node.register_prehook(lambda g, n=node.name(): order.append(n))
    out.backward()
    return order


def test_a_tree_runs_its_nodes_in_pytorchs_order() -> None:
    out, _ = _tree(gradgen)
    order: list[str] = []
    classes = {
        type(n) for n in _nodes(out.grad_fn) if not isinstance(n, AccumulateGrad)
    }
    originals = {cls: cls.apply_arrays for cls in classes}

    def recorder(cls: type) -> Callable[..., Any]:
        def apply_arrays(node: Node, grads: list[Any], *rest: Any) -> Any:
            order.append(cls.__name__)
            return originals[cls](node, grads, *rest)  # type: ignore[call-arg]

        return apply_arrays

    for cls in classes:
        cls.apply_arrays = recorder(cls)  # type: ignore[method-assign]
    try:
        out.backward()
    finally:
        for cls, original in originals.items():
            cls.apply_arrays = original  # type: ignore[method-assign]
    assert order == oracle("tree order", _torch_order)


def _tree_grads(lib: Any) -> list[Any]:
    out, leaves = _tree(lib)
    out.backward()
    return [_grad(t) for t in leaves]


def test_a_tree_gets_pytorchs_gradients() -> None:
    expected = oracle("tree grads", _tree_grads)
    for got, want in zip(_tree_grads(gradgen), expected):
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_w1_gradients_match_pytorch(dtype: str) -> None:
    def grads(lib: Any) -> list[Any]:
        q, a, b = _w1(lib, dtype)
        q.backward()
        return [_grad(a), _grad(b)]

    expected = oracle(f"w1 {dtype}", grads)
    got = grads(gradgen)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape == ()
        assert g == e


def test_gradients_cast_and_summed_on_the_way_match_pytorch() -> None:
    # float32 leaf times a float64 0-d leaf: the product's gradient for x is summed
    # and cast where it is handed on (run_tree's passed_on)
    def grads(lib: Any) -> list[Any]:
        x = _leaf(lib, [[1.0, 2.0], [3.0, 4.0]], "float32")
        s = _leaf(lib, 0.5)
        (x * s).exp().sum().backward()
        return [_grad(x), _grad(s)]

    expected = oracle("cast and sum", grads)
    for got, want in zip(grads(gradgen), expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _hook_order(lib: Any) -> list[str]:
    order: list[str] = []
    a, b = _leaf(lib, 2.0), _leaf(lib, 6.0)
    a.register_post_accumulate_grad_hook(lambda t: order.append("a acc"))
    b.register_hook(lambda g: order.append("b"))
    p = a**3
    p.register_hook(lambda g: order.append("p"))
    q = b**2
    out = 3 * p - q
    out.grad_fn.register_prehook(lambda g: order.append("sub pre"))
    out.backward()
    order.append(f"{a.grad.item()} {b.grad.item()}")
    return order


def test_hooks_on_a_tree_run_in_pytorchs_order() -> None:
    assert _hook_order(gradgen) == oracle("hook order", _hook_order)


def _second_backward(lib: Any) -> list[Any]:
    # exp saves its result, the adds save nothing: the second backward accumulates
    # a's gradient (its branch runs first), then fails at exp
    a, b = _leaf(lib, 1.0), _leaf(lib, 0.0)
    out = b.exp() + (a + 1.0)
    out.backward()
    try:
        out.backward()
    except RuntimeError as error:
        return [str(error), _grad(a), _grad(b)]
    return ["no error"]


def test_a_second_backward_fails_as_pytorchs_after_the_same_accumulation() -> None:
    assert _second_backward(gradgen) == oracle("second", _second_backward)


def test_a_tree_keeps_its_graph_when_asked() -> None:
    q, a, b = _w1(gradgen)
    q.backward(retain_graph=True)
    q.backward()
    assert a.grad is not None and b.grad is not None
    assert (a.grad.item(), b.grad.item()) == (72.0, -24.0)


# -- threads and reentrance ---------------------------------------------------------


def test_threads_running_trees_on_shared_leaves_sum_every_gradient() -> None:
    a, b = _leaf(gradgen, 2.0), _leaf(gradgen, 6.0)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(200):
                (3 * a**3 - b**2).backward()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert a.grad is not None and b.grad is not None
    assert (a.grad.item(), b.grad.item()) == (800 * 36.0, 800 * -12.0)


def test_a_hook_mid_tree_may_run_a_backward_of_its_own(loops: list[str]) -> None:
    x, y = _leaf(gradgen, 3.0), _leaf(gradgen, 0.5)

    def hook(g: Any) -> None:
        with gradgen.enable_grad():  # (hooks run under the engine's no-grad)
            (y * 4.0).backward()  # another tree, run from inside this one

    p = x**2
    p.register_hook(hook)
    (p * 2.0).backward()
    assert loops == ["tree", "tree"]
    assert x.grad is not None and y.grad is not None
    assert (x.grad.item(), y.grad.item()) == (12.0, 4.0)


# -- execute_root's check of the root gradient --------------------------------------


def test_execute_root_refuses_a_root_gradient_of_another_dtype_or_shape() -> None:
    q, a, _ = _w1(gradgen)
    node = q.grad_fn
    assert not engine.execute_root(node, 0, np.float32(1.0), False)
    assert not engine.execute_root(node, 0, np.ones(1), False)
    assert a.grad is None  # nothing ran
    assert engine.execute_root(node, 0, np.array(1.0), False)  # a 0-d array fits
    assert a.grad is not None and a.grad.item() == 36.0
