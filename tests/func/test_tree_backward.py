"""vmap(grad)'s backward over a tree of array-form nodes (gradgen/func/tree_backward.py):
the engine's gradients bit for bit (autograd.grad on the same graph, the per-example
loop), and the graphs it must leave to the engine."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as F
from gradgen import autograd
from gradgen.autograd import Function
from gradgen.func import grad, vmap
from gradgen.func import eager_transforms
from gradgen.engine import validate_outputs
from gradgen.func import tree_backward
from gradgen.func.tree_backward import tree_grads

from .common import mlp, mlp_arrays

RNG = np.random.default_rng(77)


def _leaf(*shape: int, dtype: str = "float64") -> gradgen.Tensor:
    return gradgen.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=True)


def _engine(output: gradgen.Tensor, inputs: list[gradgen.Tensor]) -> Any:
    seed = gradgen.tensor(np.ones_like(output.detach().numpy()))
    return autograd.grad(
        [output], inputs, grad_outputs=[seed], retain_graph=True, allow_unused=True
    )


def _same(got: Any, expected: Any) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        if b is None:
            assert a is None
            continue
        assert type(a) is gradgen.Tensor and a.grad_fn is None
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.numpy().tobytes() == b.numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_chain_gives_the_engines_bits(dtype: str) -> None:
    w1, b1, w2 = (
        _leaf(5, 4, dtype=dtype),
        _leaf(5, dtype=dtype),
        _leaf(3, 5, dtype=dtype),
    )
    x = gradgen.tensor(RNG.standard_normal((6, 4)).astype(dtype))
    output = (F.relu(F.linear(x, w1, b1)) @ w2.t()).tanh().sum(1)
    seed = np.ones((6,), dtype)
    _same(tree_grads(output, seed, [w1, b1, w2]), _engine(output, [w1, b1, w2]))


def test_branches_and_a_broadcast_gradient_give_the_engines_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two branches (a tree, not a chain) and a bias broadcast over rows (its gradient
    # summed to its shape, as the engine's validation does).
    a, b, c = _leaf(4, 3), _leaf(3), _leaf(4, 3)
    left = (a * 2.0 + b).exp()
    right = (c * 3.0).sin()
    output = (left + right).sum(1)
    seed = RNG.standard_normal(4)
    checked: list[str] = []

    def spy(edges: Any, grads: Any, node: Any) -> None:
        checked.append(node.name())
        validate_outputs(edges, grads, node)

    monkeypatch.setattr(tree_backward, "validate_outputs", spy)
    got = tree_grads(output, seed, [a, b, c])
    assert checked == ["AddBackward0"]  # b's (4, 3) gradient, summed to (3,)
    expected = autograd.grad(
        [output],
        [a, b, c],
        grad_outputs=[gradgen.tensor(seed)],
        retain_graph=True,
        allow_unused=True,
    )
    _same(got, expected)


def test_unused_and_unreached_inputs_get_none() -> None:
    a, b = _leaf(3), _leaf(3)
    never = _leaf(2)  # never recorded: no AccumulateGrad
    output = a.sin() * 2.0
    got = tree_grads(output, np.ones(3), [a, never, b])
    assert got is not None and got[1] is None and got[2] is None
    _same(got, _engine(output, [a, never, b]))


def test_the_graph_is_kept() -> None:
    a = _leaf(3)
    output = a.exp().sum(0, keepdim=True)
    first = tree_grads(output, np.ones(1), [a])
    second = tree_grads(output, np.ones(1), [a])  # retain_graph: runs again
    _same(first, second)


def _steps_aside(output: gradgen.Tensor, inputs: list[gradgen.Tensor]) -> None:
    seed = np.ones(output.shape, output.detach().numpy().dtype)
    assert tree_grads(output, seed, inputs) is None


def test_a_node_reached_twice_is_left_to_the_engine() -> None:
    a = _leaf(3)
    _steps_aside(a.sin() * a.cos(), [a])  # a's sink reached twice
    h = _leaf(3).exp()
    _steps_aside(h * h.sin(), [a])  # an interior node reached twice


def test_hooks_are_left_to_the_engine() -> None:
    a = _leaf(3)
    middle = a.exp()
    middle.register_hook(lambda g: g * 2)
    _steps_aside(middle.sin(), [a])
    b = _leaf(3)
    b.register_hook(lambda g: g * 2)  # on the input leaf
    _steps_aside(b.sin(), [b])
    c = _leaf(3)
    kept = c.exp()
    kept.retain_grad()
    _steps_aside(kept.sin(), [c])
    d = _leaf(3)
    out = d.exp()
    out.grad_fn.register_prehook(lambda grads: None)
    _steps_aside(out, [d])


def test_other_leaves_and_non_leaf_inputs_are_left_to_the_engine() -> None:
    a, other = _leaf(3), _leaf(3)
    _steps_aside(a.sin() + other.cos(), [a])  # other's sink would not run
    middle = a.exp()
    _steps_aside(middle.sin(), [middle])  # a non-leaf input


class _Twice(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x * 2

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g * 2


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_nodes_without_an_array_form_and_anomaly_mode_are_left_to_the_engine() -> None:
    a = _leaf(3)
    _steps_aside(_Twice.apply(a).sin(), [a])
    b = _leaf(3)
    with autograd.detect_anomaly():
        out = b.sin()
        _steps_aside(out, [b])


# -- inside vmap(grad) --------------------------------------------------------------------


def _per_example(params: list[gradgen.Tensor], x: Any, t: Any) -> Any:
    return vmap(grad(mlp), in_dims=(None, 0, 0))(params, x, t)


def _engine_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eager_transforms, "tree_grads", lambda *args: None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_per_example_gradients_are_the_engines_and_the_loops(
    dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    arrays, x, t = mlp_arrays(dtype, 5, (4, 6, 3), 8)
    params = [gradgen.tensor(a) for a in arrays]
    used: list[bool] = []
    original = eager_transforms.tree_grads

    def spy(*args: Any) -> Any:
        found = original(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(eager_transforms, "tree_grads", spy)
    fast = _per_example(params, gradgen.tensor(x), gradgen.tensor(t))
    assert used == [True]
    _engine_only(monkeypatch)
    general = _per_example(params, gradgen.tensor(x), gradgen.tensor(t))
    for got, expected in zip(fast, general):
        assert got.numpy().tobytes() == expected.numpy().tobytes()
    for index in range(len(x)):  # each example's own gradient
        example = grad(mlp)(params, gradgen.tensor(x[index]), gradgen.tensor(t[index]))
        for got, expected in zip(fast, example):
            np.testing.assert_allclose(
                got.numpy()[index], expected.numpy(), rtol=1e-5, atol=1e-6
            )


def test_a_weight_used_twice_gives_the_engines_gradients(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Tied weights: the weight's sink is reached twice, the engine sums.
    w = gradgen.tensor(RNG.standard_normal((4, 4)))
    x = gradgen.tensor(RNG.standard_normal((5, 4)))

    def f(w: Any, x: Any) -> Any:
        return F.linear(F.linear(x, w).tanh(), w).sum()

    fast = vmap(grad(f), in_dims=(None, 0))(w, x)
    _engine_only(monkeypatch)
    general = vmap(grad(f), in_dims=(None, 0))(w, x)
    assert fast.numpy().tobytes() == general.numpy().tobytes()


def test_second_derivatives_keep_the_engine() -> None:
    # grad of grad records the first backward (create_graph): not the tree's run.
    x = gradgen.tensor(RNG.standard_normal((5, 3)))

    def f(v: Any) -> Any:
        return (v.sin() * v).sum()

    second = vmap(grad(lambda v: grad(f)(v).sum()))(x)
    v = x.numpy()
    expected = 2 * np.cos(v) - v * np.sin(v)
    np.testing.assert_allclose(second.numpy(), expected, rtol=1e-12)


def test_nodes_run_in_the_engines_order() -> None:
    # Unpack hooks see the order the nodes run in: the engine's (the node made ready
    # next, else the latest-created ready one).
    unpacked: list[int] = []
    count = iter(range(1000))

    def pack(t: Any) -> Any:
        return next(count), t

    def unpack(packed: Any) -> Any:
        unpacked.append(packed[0])
        return packed[1]

    a, b, c = _leaf(3), _leaf(3), _leaf(3)
    with autograd.graph.saved_tensors_hooks(pack, unpack):
        first = (a.sin() * 2.0).exp()
        second = (b.cos() * c.tanh()).exp()
        output = (first * second).sin()
    got = tree_grads(output, np.ones(3), [a, b, c])
    order = list(unpacked)
    unpacked.clear()
    _same(got, _engine(output, [a, b, c]))
    assert order == unpacked and len(order) > 8
