"""Per-example gradients by vmap(grad): the values (against the per-example loop and
against numpy by hand), the layout of the weight gradients, and the lean paths that
make them fast (bmm's outer products, mm under vmap as bmm, inputs and outputs at
dimension 0 without a permute)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.func import functional_call, grad, vmap
from gradgen.numpy_kernels import bmm
from gradgen.tensor import Tensor

SIZES = (5, 7, 3)


def _mlp() -> Any:
    gradgen.manual_seed(0)
    nn = gradgen.nn
    return nn.Sequential(
        nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(*SIZES[1:])
    )


def _per_example(model: Any, x: Tensor, target: Tensor) -> dict[str, Tensor]:
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: dict[str, Tensor], xi: Tensor, ti: Tensor) -> Tensor:
        logits = functional_call(model, p, (xi.unsqueeze(0),))
        return gradgen.nn.functional.cross_entropy(logits, ti.unsqueeze(0))

    result: dict[str, Tensor] = vmap(grad(loss), in_dims=(None, 0, 0))(
        params, x, target
    )
    return result


def _by_hand(model: Any, x: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """d(cross entropy)/d(weights) of each example, by the chain rule in numpy."""
    w1, b1, w2, b2 = (v.detach().numpy() for v in model.parameters())
    pre = x @ w1.T + b1
    hidden = np.maximum(pre, 0)
    logits = hidden @ w2.T + b2
    exp = np.exp(logits - logits.max(1, keepdims=True))
    grad_logits = exp / exp.sum(1, keepdims=True) - np.eye(SIZES[-1])[labels]
    grad_pre = (grad_logits @ w2) * (pre > 0)
    return {
        "0.weight": grad_pre[:, :, None] * x[:, None, :],
        "0.bias": grad_pre,
        "2.weight": grad_logits[:, :, None] * hidden[:, None, :],
        "2.bias": grad_logits,
    }


def test_vmap_grad_of_an_mlp_matches_the_chain_rule_and_the_loop() -> None:
    model = _mlp()
    rng = np.random.default_rng(3)
    data = rng.standard_normal((6, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], 6)
    x, target = gradgen.tensor(data), gradgen.tensor(labels)
    batched = _per_example(model, x, target)
    expected = _by_hand(model, data.astype(np.float64), labels)
    for name, value in expected.items():
        np.testing.assert_allclose(batched[name].numpy(), value, rtol=1e-4, atol=1e-6)
    for index in range(6):  # each example's own gradient, one at a time
        one = _per_example(model, x[index : index + 1], target[index : index + 1])
        for name in expected:
            np.testing.assert_allclose(
                batched[name].numpy()[index], one[name].numpy()[0], rtol=1e-5
            )


def test_per_example_weight_gradients_are_contiguous() -> None:
    model = _mlp()
    x = gradgen.randn(4, SIZES[0])
    batched = _per_example(model, x, gradgen.tensor([0, 1, 2, 0]))
    for name, value in batched.items():
        assert value.is_contiguous(), name
    assert tuple(batched["0.weight"].shape) == (4, SIZES[1], SIZES[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex128])
def test_bmm_outer_products_equal_the_broadcast_product(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    left = (rng.standard_normal((3, 4, 1)) * 4).astype(dtype)
    right = (rng.standard_normal((3, 1, 5)) * 4).astype(dtype)
    product = bmm(left, right)
    assert product.dtype == dtype and product.shape == (3, 4, 5)
    np.testing.assert_array_equal(product, left * right)
    # written as (3, 5, 4): its transpose (the weight gradient's layout) is contiguous
    assert product.transpose(0, 2, 1).flags.c_contiguous


def _names(tensor: Tensor) -> list[str]:
    """The names of the nodes of the graph behind `tensor`."""
    found: list[str] = []
    stack = [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None:
            found.append(node.name())
            stack += [function for function, _ in node.next_functions]
    return found


def test_mm_of_two_batched_matrices_records_one_bmm() -> None:
    a = gradgen.randn(3, 2, 4, requires_grad=True)
    b = gradgen.randn(3, 4, 5, requires_grad=True)
    out = vmap(gradgen.mm)(a, b)
    np.testing.assert_allclose(
        out.detach().numpy(), a.detach().numpy() @ b.detach().numpy(), rtol=1e-5
    )
    names = _names(out)
    assert names.count("BmmBackward0") == 1
    assert not {"ExpandBackward0", "ViewBackward0", "UnsafeViewBackward0"} & set(names)
    out.sum().backward()
    assert a.grad is not None and b.grad is not None
    np.testing.assert_allclose(
        a.grad.numpy(),
        np.ones((3, 2, 5)) @ b.detach().numpy().transpose(0, 2, 1),
        rtol=1e-5,
    )


def test_inputs_and_outputs_at_dimension_0_are_not_permuted() -> None:
    x = gradgen.randn(3, 2)
    assert vmap(lambda a: a)(x) is x  # as torch.func.vmap returns it
    moved = vmap(lambda a: a, out_dims=1)(x)
    assert tuple(moved.shape) == (2, 3)
    leaf = gradgen.randn(3, 2, requires_grad=True)
    through = vmap(lambda a: a * 2)(leaf)
    through.sum().backward()
    assert leaf.grad is not None and leaf.grad.tolist() == [[2.0, 2.0]] * 3


def test_grad_alias_of_an_unbatched_input_shares_its_version_counter() -> None:
    weight = gradgen.randn(4)
    seen: list[Any] = []

    def f(w: Tensor, x: Tensor) -> Tensor:
        seen.append(w)
        return (w * x).sum()

    x = gradgen.randn(3, 4)
    grads = vmap(grad(f), in_dims=(None, 0))(weight, x)
    np.testing.assert_allclose(grads.numpy(), x.numpy())
    alias = seen[0]._value  # the batch grad differentiated: weight repeated 3 times
    assert tuple(alias.shape) == (3, 4) and alias._data.strides[0] == 0
    assert alias._version == weight._version
    weight.add_(1.0)
    assert alias._version == weight._version
