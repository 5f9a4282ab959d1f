"""nn.Linear inside vmap(grad): one PerExampleLinearBackward node per layer
(gradgen/func/batching_linear.py), whose gradients equal the per-example ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as F
from gradgen.func import debug_unwrap, grad, vmap
from gradgen.func.batching_linear import linear_node
from torch_oracle import oracle

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 4))
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal(3)
C = RNG.standard_normal((5, 3))


def _t(array: np.ndarray, requires_grad: bool = False) -> gradgen.Tensor:
    return gradgen.tensor(array, requires_grad=requires_grad)


def test_weight_and_bias_gradients_are_the_hand_outer_products() -> None:
    # loss = sum(c * (W x + b)): dW = outer(c, x), db = c, example by example.
    def loss(w: Any, b: Any, x: Any, c: Any) -> Any:
        return (F.linear(x, w, b) * c).sum()

    dw, db = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(
        _t(W), _t(B), _t(X), _t(C)
    )
    np.testing.assert_allclose(dw.numpy(), np.einsum("bi,bj->bij", C, X), atol=1e-12)
    np.testing.assert_allclose(db.numpy(), C, atol=1e-12)
    assert dw.is_contiguous()


def test_one_node_records_the_layer() -> None:
    names: list[str] = []

    def loss(w: Any, b: Any, x: Any) -> Any:
        out = F.linear(x.unsqueeze(0), w, b)
        names.append(type(debug_unwrap(out).grad_fn).__name__)
        return out.tanh().sum()

    vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(_t(W), _t(B), _t(X))
    assert names == ["PerExampleLinearBackward"]


def _mlp_loss(params: Any, x: Any, target: Any) -> Any:
    (w1, b1), (w2, b2) = params
    hidden = F.relu(F.linear(x.unsqueeze(0), w1, b1))
    logits = F.linear(hidden, w2, b2)
    return F.cross_entropy(logits, target.unsqueeze(0))


def test_mlp_per_example_gradients_equal_the_loop_and_torch() -> None:
    rng = np.random.default_rng(3)
    arrays = [
        rng.standard_normal((6, 4)),
        rng.standard_normal(6),
        rng.standard_normal((3, 6)),
        rng.standard_normal(3),
    ]
    x = rng.standard_normal((5, 4))
    target = rng.integers(0, 3, 5)
    params = ((_t(arrays[0]), _t(arrays[1])), (_t(arrays[2]), _t(arrays[3])))
    batched = vmap(grad(_mlp_loss), in_dims=(None, 0, 0))(
        params, _t(x), gradgen.tensor(target)
    )
    got = [g.numpy() for pair in batched for g in pair]
    for index in range(len(x)):
        single = grad(_mlp_loss)(params, _t(x[index]), gradgen.tensor(target[index]))
        for value, expected in zip(got, [g for pair in single for g in pair]):
            np.testing.assert_allclose(value[index], expected.numpy(), atol=1e-12)

    def by_torch(torch: Any) -> list[Any]:
        def loss(p: Any, xi: Any, ti: Any) -> Any:
            hidden = torch.relu(torch.nn.functional.linear(xi[None], p[0], p[1]))
            logits = torch.nn.functional.linear(hidden, p[2], p[3])
            return torch.nn.functional.cross_entropy(logits, ti[None])

        p = [torch.tensor(a) for a in arrays]
        result = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(
            p, torch.tensor(x), torch.tensor(target)
        )
        return [r.numpy() for r in result]

    for value, expected in zip(got, oracle("mlp", by_torch)):
        np.testing.assert_allclose(value, expected, atol=1e-10)


def test_gradient_of_a_gradient_through_the_node() -> None:
    # Per example: g(w) = |d/dx sum(tanh(W x + b))|^2, differentiated in W: the
    # node's backward recorded (create_graph), compared with the loop without vmap.
    def inner(w: Any, b: Any, x: Any) -> Any:
        return F.linear(x.unsqueeze(0), w, b).tanh().sum()

    def outer(w: Any, b: Any, x: Any) -> Any:
        return (grad(inner, argnums=2)(w, b, x) ** 2).sum()

    batched = vmap(grad(outer), in_dims=(None, None, 0))(_t(W), _t(B), _t(X))
    for index in range(len(X)):
        single = grad(outer)(_t(W), _t(B), _t(X[index]))
        np.testing.assert_allclose(batched[index].numpy(), single.numpy(), atol=1e-12)


def _plain_call() -> tuple[Any, ...]:
    weight = _t(np.stack([W, 2 * W]), requires_grad=True)
    bias = _t(np.stack([B, -B]), requires_grad=True)
    x = _t(X[:2, None, :], requires_grad=True)
    out = linear_node(bias, x, weight.transpose(1, 2))
    assert out is not None
    return weight, bias, x, out


def test_linear_node_values_and_gradients_on_plain_batches() -> None:
    weight, bias, x, out = _plain_call()
    np.testing.assert_allclose(
        out.detach().numpy(),
        np.einsum("bni,boi->bno", X[:2, None], weight.detach().numpy())
        + bias.detach().numpy()[:, None],
    )
    g = RNG.standard_normal((2, 1, 3))
    out.backward(_t(g))
    np.testing.assert_allclose(
        weight.grad.numpy(), np.einsum("bno,bni->boi", g, X[:2, None])
    )
    np.testing.assert_allclose(bias.grad.numpy(), g[:, 0])
    np.testing.assert_allclose(
        x.grad.numpy(), np.einsum("bno,boi->bni", g, weight.detach().numpy())
    )
    assert weight.grad.is_contiguous()


def test_linear_node_with_an_unpeeled_weight() -> None:
    wt = _t(np.stack([W.T, W.T]), requires_grad=True)
    out = linear_node(_t(np.stack([B, B])), _t(X[:2, None, :]), wt)
    assert out is not None
    out.sum().backward()
    expected = np.einsum("bni,bno->bio", X[:2, None], np.ones((2, 1, 3)))
    np.testing.assert_allclose(wt.grad.numpy(), expected)


def test_linear_node_backward_twice_and_inplace_errors() -> None:
    _, _, _, out = _plain_call()
    out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()
    _, _, x, out = _plain_call()
    with gradgen.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_linear_node_leaves_other_calls_to_the_generic_rules() -> None:
    x = _t(X[:2, None, :])
    wt = _t(np.stack([W.T, W.T]))
    assert linear_node(_t(np.stack([B, B])), x, wt) is None  # nothing records
    assert linear_node(_t(B, requires_grad=True), x, wt) is None  # bias (out,)
    with gradgen.no_grad():
        assert linear_node(_t(np.stack([B, B]), requires_grad=True), x, wt) is None


def test_linear_node_keeps_the_transpose_when_it_has_a_hook() -> None:
    weight = _t(np.stack([W, W]), requires_grad=True)
    wt = weight.transpose(1, 2)
    wt.register_hook(lambda g: g * 3)
    out = linear_node(_t(np.stack([B, B])), _t(X[:2, None, :]), wt)
    assert out is not None
    out.sum().backward()
    expected = 3 * np.einsum("bno,bni->boi", np.ones((2, 1, 3)), X[:2, None])
    np.testing.assert_allclose(weight.grad.numpy(), expected)
