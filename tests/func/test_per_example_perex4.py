"""Session 9's second trim of vmap(grad) per-example gradients (perex4): the bias
gradient of the one-node linear without a reduction when an example has one row
(0 plus the row: the sum's bits, -0.0 included), and pytree's leaf classes learnt as
they are met. Each checked against the general path (bit for bit), PyTorch, and the
cases the shortcut must leave alone."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as F
from gradgen.func import grad, vmap
from gradgen.func.batching_linear import PerExampleLinearBackward
from gradgen.func.pytree import tree_flatten, tree_leaves, tree_unflatten
from gradgen.graph import NO_EDGE, SavedVariable
from gradgen.variable_type_utils import next_edge
from torch_oracle import oracle

from .common import general_path, mlp, mlp_arrays

RNG = np.random.default_rng(44)


def _node(x: np.ndarray, weight: np.ndarray) -> PerExampleLinearBackward:
    return PerExampleLinearBackward(
        SavedVariable.input(gradgen.tensor(x)),
        SavedVariable.input(gradgen.tensor(weight)),
        False,
        rows=True,
    )


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("rows", [1, 3])
def test_bias_gradient_has_the_sums_bits(dtype: str, rows: int) -> None:
    # -0.0 sums to 0.0 (numpy adds the row to 0): the one-row shortcut must too;
    # NaN, infinities and subnormals pass as they are.
    special = [-0.0, np.nan, np.inf, -np.inf, 1e-45, -2.5]
    grad_out = np.resize(np.array(special), (4, rows, 6)).astype(dtype)
    x = RNG.standard_normal((4, rows, 3)).astype(dtype)
    weight = RNG.standard_normal((4, 6, 3)).astype(dtype)
    node = _node(x, weight)
    leaf = gradgen.zeros(4, 6, dtype=getattr(gradgen, dtype), requires_grad=True)
    node.set_next_edges((next_edge(leaf), NO_EDGE, NO_EDGE))  # the bias's only
    bias_grad = node.apply_arrays([grad_out])[0]  # type: ignore[index]
    expected = np.sum(grad_out, axis=1)
    assert bias_grad.dtype == expected.dtype and bias_grad.shape == expected.shape
    assert bias_grad.tobytes() == expected.tobytes()
    assert not np.shares_memory(bias_grad, grad_out)
    if rows == 1:
        assert np.signbit(grad_out[0, 0, 0]) and not np.signbit(bias_grad[0, 0])


def _mlp_arrays(dtype: str) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    return mlp_arrays(dtype, 9, (5, 6, 4), 8)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_same_bytes_as_the_general_path(dtype: str) -> None:
    params, x, target = _mlp_arrays(dtype)
    tensors = [gradgen.tensor(p) for p in params]
    per_example = vmap(grad(mlp), in_dims=(None, 0, 0))
    fast = per_example(tensors, gradgen.tensor(x), gradgen.tensor(target))
    with general_path():
        general = per_example(tensors, gradgen.tensor(x), gradgen.tensor(target))
    for got, expected in zip(fast, general):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.numpy().tobytes() == expected.numpy().tobytes()


def test_bias_of_a_zero_gradient_example_is_positive_zero() -> None:
    # An example whose logits already give its target (target all zero: no pull)
    # has gradient 0 for its bias; the general path's sum gives +0.0, as here.
    params, x, _ = _mlp_arrays("float64")
    target = np.zeros((8, 4))
    tensors = [gradgen.tensor(p) for p in params]
    per_example = vmap(grad(mlp), in_dims=(None, 0, 0))
    fast = per_example(tensors, gradgen.tensor(x), gradgen.tensor(target))
    with general_path():
        general = per_example(tensors, gradgen.tensor(x), gradgen.tensor(target))
    for got, expected in zip(fast, general):
        assert got.numpy().tobytes() == expected.numpy().tobytes()
    assert not np.signbit(fast[3].numpy()).any()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_gradients_equal_torch_func(dtype: str) -> None:
    params, x, target = _mlp_arrays(dtype)
    got = vmap(grad(mlp), in_dims=(None, 0, 0))(
        [gradgen.tensor(p) for p in params], gradgen.tensor(x), gradgen.tensor(target)
    )

    def by_torch(torch: Any) -> list[Any]:
        def loss(p: Any, xi: Any, ti: Any) -> Any:
            hidden = torch.relu(torch.nn.functional.linear(xi[None], p[0], p[1]))
            logits = torch.nn.functional.linear(hidden, p[2], p[3])
            return torch.nn.functional.cross_entropy(logits, ti[None])

        p = [torch.tensor(a) for a in params]
        result = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(
            p, torch.tensor(x), torch.tensor(target)
        )
        return [r.numpy() for r in result]

    tolerance = 1e-5 if dtype == "float32" else 1e-12
    for value, expected in zip(got, oracle(f"perex4_mlp_{dtype}", by_torch)):
        assert value.numpy().dtype == np.dtype(dtype)
        np.testing.assert_allclose(value.numpy(), expected, atol=tolerance)


def test_rows_per_example_still_summed() -> None:
    # Three rows per example: the bias gradient is a real sum over them (no shortcut).
    w = RNG.standard_normal((4, 3))
    b = RNG.standard_normal(4)
    x = RNG.standard_normal((5, 3, 3))

    def loss(w: Any, b: Any, xi: Any) -> Any:
        return F.linear(xi, w, b).sum()

    _, bias_grad = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(
        gradgen.tensor(w), gradgen.tensor(b), gradgen.tensor(x)
    )
    np.testing.assert_array_equal(bias_grad.numpy(), np.full((5, 4), 3.0))


# -- pytree's learnt leaf classes --------------------------------------------------------


class _Leaf:
    pass


class _MyDict(dict):  # type: ignore[type-arg]
    pass


def test_leaf_classes_are_learnt_and_containers_still_flatten() -> None:
    leaf, tensor = _Leaf(), gradgen.tensor([1.0])
    tree = {"a": leaf, "b": (tensor, [leaf, 3])}
    for _ in range(2):  # the second time with the leaf classes known
        leaves, spec = tree_flatten(tree)
        assert [id(v) for v in leaves[:3]] == [id(leaf), id(tensor), id(leaf)]
        assert leaves[3] == 3
        assert tree_unflatten(leaves, spec)["b"][1][0] is leaf
    # Subclasses of the containers stay containers, met after leaves or not.
    Pair = namedtuple("Pair", "x y")
    nested = [_MyDict(k=Pair(tensor, leaf)), OrderedDict(z=leaf)]
    leaves, spec = tree_flatten(nested)
    assert [id(v) for v in leaves] == [id(tensor), id(leaf), id(leaf)]
    rebuilt = tree_unflatten([1, 2, 3], spec)
    assert rebuilt[0]["k"] == Pair(1, 2) and type(rebuilt[0]["k"]) is Pair
    assert tree_leaves(nested) == leaves
    assert tree_flatten(leaf)[0] == [leaf] and tree_flatten(leaf)[1].kind == "leaf"
