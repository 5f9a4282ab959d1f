"""linear and cross_entropy as one node each inside vmap(grad)
(gradgen/func/batching_composites.py): the same values as the composites run
operator by operator (the general path, their slots emptied), PyTorch's per-example
gradients, and the cases where the one-node path must not apply."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as F
from gradgen.composites._common import BATCHED
from gradgen.func import debug_unwrap, grad, hessian, vmap
from gradgen.numpy_kernels.linalg import bmm
from torch_oracle import oracle

from .common import general_path, mlp, mlp_arrays

RNG = np.random.default_rng(11)


def _t(array: np.ndarray, requires_grad: bool = False) -> gradgen.Tensor:
    return gradgen.tensor(array, requires_grad=requires_grad)


def _problem(dtype: str, rows: int, classes: int = 5, batch: int = 6) -> list[Any]:
    """Weight, bias, inputs and probability targets; `rows` per example (0: one
    1-d example, as cross_entropy's class dimension 0)."""
    example = (rows,) if rows else ()
    weight = RNG.standard_normal((classes, 3)).astype(dtype)
    bias = RNG.standard_normal(classes).astype(dtype)
    x = RNG.standard_normal((batch, *example, 3)).astype(dtype)
    target = RNG.random((batch, *example, classes)).astype(dtype)
    return [weight, bias, x, target]


def _per_example(reduction: str) -> Any:
    def loss(w: Any, b: Any, x: Any, t: Any) -> Any:
        return F.cross_entropy(F.linear(x, w, b), t, reduction=reduction)

    return vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows", [0, 1, 3])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_same_bits_as_the_general_path(dtype: str, rows: int, reduction: str) -> None:
    arrays = [_t(a) for a in _problem(dtype, rows)]
    fast = _per_example(reduction)(*arrays)
    with general_path():
        general = _per_example(reduction)(*arrays)
    for got, expected in zip(fast, general):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def _recorded(loss_of: Any, *arrays: np.ndarray) -> list[str]:
    """The backward node names of the loss and of the logits, seen inside."""
    names: list[str] = []

    def loss(w: Any, b: Any, x: Any, t: Any) -> Any:
        logits = F.linear(x.unsqueeze(0), w, b)
        value = loss_of(logits, t.unsqueeze(0))
        for tensor in (value, logits):
            names.append(type(debug_unwrap(tensor).grad_fn).__name__)
        return value

    per_example = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))
    per_example(*[_t(a) for a in arrays])
    return names


def test_one_node_each_for_the_layer_and_the_loss() -> None:
    arrays = _problem("float64", 0)
    names = _recorded(F.cross_entropy, *arrays)
    assert names == ["PerExampleCrossEntropyBackward", "PerExampleLinearBackward"]


def test_the_layer_node_takes_the_weight_edge_without_a_transpose() -> None:
    graph: list[Any] = []

    def loss(w: Any, b: Any, x: Any) -> Any:
        out = F.linear(x.unsqueeze(0), w, b)
        graph.append(debug_unwrap(out).grad_fn)
        return out.sum()

    w, b, x, _ = _problem("float64", 0)
    vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(_t(w), _t(b), _t(x))
    kinds = [type(f).__name__ for f, _ in graph[0].next_functions if f is not None]
    assert kinds == ["AccumulateGrad", "AccumulateGrad"]  # bias and weight aliases


@pytest.mark.parametrize(
    "loss_of",
    [
        lambda y, t: F.cross_entropy(y, t, reduction="none").sum(),
        lambda y, t: F.cross_entropy(y, t, label_smoothing=0.1),
        lambda y, t: F.cross_entropy(y, t, weight=_t(np.arange(1.0, 6.0))),
        lambda y, t: F.cross_entropy(y, t.argmax(-1)),  # class indices
    ],
    ids=["reduction-none", "label-smoothing", "class-weights", "class-indices"],
)
def test_other_cross_entropy_calls_run_the_composite(loss_of: Any) -> None:
    arrays = _problem("float64", 0)
    names = _recorded(loss_of, *arrays)
    assert names[0] != "PerExampleCrossEntropyBackward"
    assert names[1] == "PerExampleLinearBackward"


def test_a_target_that_requires_grad_runs_the_composite() -> None:
    def loss(t: Any, w: Any, b: Any, x: Any) -> Any:
        logits = F.linear(x.unsqueeze(0), w, b)
        value = F.cross_entropy(logits, t.unsqueeze(0))
        assert type(debug_unwrap(value).grad_fn).__name__ != (
            "PerExampleCrossEntropyBackward"
        )
        return value

    w, b, x, t = _problem("float64", 0)
    got = vmap(grad(loss), in_dims=(0, None, None, 0))(_t(t), _t(w), _t(b), _t(x))
    for index in range(len(x)):
        single = grad(loss)(_t(t[index]), _t(w), _t(b), _t(x[index]))
        np.testing.assert_allclose(got[index].numpy(), single.numpy(), atol=1e-12)


def test_saved_tensor_hooks_see_the_operators_saves() -> None:
    packed: list[tuple[int, ...]] = []

    def pack(tensor: Any) -> Any:
        packed.append(tuple(tensor.shape))
        return tensor

    arrays = [_t(a) for a in _problem("float64", 1)]
    with gradgen.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        hooked = _per_example("mean")(*arrays)
    with general_path(), gradgen.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        count = len(packed)
        general = _per_example("mean")(*arrays)
    assert packed[:count] == packed[count:]  # the same saves with the slots or not
    for got, expected in zip(hooked, general):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def _mlp_arrays(dtype: str) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    return mlp_arrays(dtype, 5, (4, 8, 3), 7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_gradients_equal_torch_func(dtype: str) -> None:
    params, x, target = _mlp_arrays(dtype)
    got = vmap(grad(mlp), in_dims=(None, 0, 0))(
        [_t(p) for p in params], _t(x), _t(target)
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
    for value, expected in zip(got, oracle("mlp", by_torch)):
        assert value.numpy().dtype == np.dtype(dtype)
        np.testing.assert_allclose(value.numpy(), expected, atol=tolerance)


def test_nested_vmap_equals_the_loop() -> None:
    # Inside two levels the values are batched again: the one-node paths step aside.
    params, x, target = _mlp_arrays("float64")
    tensors = [_t(p) for p in params]
    xs, ts = _t(np.stack([x, 2 * x])), _t(np.stack([target, target[::-1]]))
    inner = vmap(grad(mlp), in_dims=(None, 0, 0))
    got = vmap(inner, in_dims=(None, 0, 0))(tensors, xs, ts)
    for outer in range(2):
        expected = inner(tensors, xs[outer], ts[outer])
        for value, want in zip(got, expected):
            np.testing.assert_allclose(value[outer].numpy(), want.numpy(), atol=1e-12)


def test_second_derivatives_through_both_nodes() -> None:
    # create_graph: the nodes' tensor forms, differentiated again (the logits'
    # path through the log-probabilities included), against the general path.
    params, x, target = _mlp_arrays("float64")

    def gradient_norm(p: Any, xi: Any, ti: Any) -> Any:
        return sum((g**2).sum() for g in grad(mlp)(p, xi, ti))

    per_example = vmap(grad(gradient_norm), in_dims=(None, 0, 0))
    args = ([_t(p) for p in params], _t(x), _t(target))
    fast = per_example(*args)
    with general_path():
        general = per_example(*args)
    for got, expected in zip(fast, general):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-12)
    single = grad(gradient_norm)([_t(p) for p in params], _t(x[2]), _t(target[2]))
    for got, expected in zip(fast, single):
        np.testing.assert_allclose(got.numpy()[2], expected.numpy(), atol=1e-12)


def test_hessian_per_example_under_forward_ad() -> None:
    # hessian = jacfwd(jacrev): forward AD is open, the nodes are not recorded.
    w, b, x, t = _problem("float64", 0, batch=3)

    def loss(bias: Any, xi: Any, ti: Any) -> Any:
        return F.cross_entropy(F.linear(xi.unsqueeze(0), _t(w), bias), ti.unsqueeze(0))

    got = vmap(hessian(loss), in_dims=(None, 0, 0))(_t(b), _t(x), _t(t))
    for index in range(3):
        single = hessian(loss)(_t(b), _t(x[index]), _t(t[index]))
        np.testing.assert_allclose(got[index].numpy(), single.numpy(), atol=1e-12)


def test_a_hook_on_the_logits_sees_the_batch_gradient() -> None:
    seen: list[tuple[int, ...]] = []

    def loss(w: Any, b: Any, x: Any, t: Any) -> Any:
        logits = F.linear(x.unsqueeze(0), w, b)
        logits.register_hook(lambda g: seen.append(tuple(debug_unwrap(g).shape)))
        return F.cross_entropy(logits, t.unsqueeze(0))

    w, b, x, t = _problem("float64", 0)
    vmap(grad(loss), in_dims=(None, None, 0, 0))(_t(w), _t(b), _t(x), _t(t))
    assert seen == [(6, 1, 5)]


def test_the_logits_changed_in_place_after_the_loss_do_not_matter() -> None:
    # As with the operators' nodes (log_softmax saves its result, not its input).
    def loss(w: Any, b: Any, x: Any, t: Any) -> Any:
        logits = F.linear(x.unsqueeze(0), w, b)
        value = F.cross_entropy(logits, t.unsqueeze(0))
        logits.mul_(2.0)
        return value

    arrays = [_t(a) for a in _problem("float64", 0)]
    per_example = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))
    fast = per_example(*arrays)
    with general_path():
        general = per_example(*arrays)
    for got, expected in zip(fast, general):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_the_target_changed_in_place_after_the_loss_is_an_error() -> None:
    def loss(w: Any, b: Any, x: Any, t: Any) -> Any:
        target = t.unsqueeze(0) * 1.0
        value = F.cross_entropy(F.linear(x.unsqueeze(0), w, b), target)
        target.add_(1.0)
        return value

    arrays = [_t(a) for a in _problem("float64", 0)]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        vmap(grad(loss), in_dims=(None, None, 0, 0))(*arrays)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "batch, rows, columns", [(256, 10, 128), (7, 20, 30), (6, 128, 64), (8, 3, 4)]
)
def test_outer_products_are_exact(
    dtype: str, batch: int, rows: int, columns: int
) -> None:
    left = RNG.standard_normal((batch, rows, 1)).astype(dtype)
    right = RNG.standard_normal((batch, 1, columns)).astype(dtype)
    expected = left * right  # each element its one product
    np.testing.assert_array_equal(bmm(left, right), expected)


def test_outer_products_keep_non_finite_values_to_their_example() -> None:
    # Two examples share a BLAS product only when the right factors are finite
    # (0 * inf would spoil the other example).
    left = RNG.standard_normal((4, 20, 1))
    right = RNG.standard_normal((4, 1, 30))
    right[1, 0, 3], left[2, 4, 0] = np.inf, np.nan
    np.testing.assert_array_equal(bmm(left, right), left * right)


@pytest.mark.filterwarnings("error")
def test_non_finite_logits_give_the_general_path_bits_without_warnings() -> None:
    w, b, x, t = _problem("float64", 1)
    x[1, 0, 0], x[2, 0, 1] = np.inf, np.nan
    arrays = [_t(a) for a in (w, b, x, t)]
    fast = _per_example("mean")(*arrays)
    with general_path():
        general = _per_example("mean")(*arrays)
    for got, expected in zip(fast, general):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_the_general_path_empties_every_slot() -> None:
    """general_path switches off relu's slot as well as linear's and cross_entropy's
    (so the tests of the general path run relu through the dispatcher), and puts
    them back."""
    declared = ("linear", "cross_entropy_loss", "relu")
    before = [getattr(BATCHED, name) for name in declared]
    assert all(slot is not None for slot in before)
    with general_path():
        assert [getattr(BATCHED, name) for name in declared] == [None, None, None]
    assert [getattr(BATCHED, name) for name in declared] == before
