"""Session 11's trim of vmap(grad) per-example gradients (perex, issue 15).

The changes take shortcuts on the way to the same kernels, so each test checks that
a shortcut gives what the long way gives: the same bits as the per-example loop or
as the general rules (the composites' batched slots off), PyTorch's per-example
gradients (torch.func, through the oracle), and the cases each shortcut must leave
to the long way (subclasses, views, tied weights, hooks, the profiler).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from torch_oracle import oracle

import gradgen
import gradgen.nn.functional as F
from gradgen.composites._common import BATCHED
from gradgen.func import functional_call, grad, vmap
from gradgen.func import batching
from gradgen.func.batching import BatchedTensor
from gradgen.func.batching_linear import _product
from gradgen.func.eager_transforms import _keeps_graph
from gradgen.func.pytree import LEAF, TreeSpec, tree_flatten, tree_unflatten
from gradgen.numpy_kernels.linalg import bmm
from gradgen.tensor import Tensor

SIZES = (5, 7, 6, 3)


def _arrays(dtype: str, batch: int, seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    found = {"x": rng.standard_normal((batch, SIZES[0])).astype(dtype)}
    found["t"] = np.eye(SIZES[-1], dtype=dtype)[rng.integers(0, SIZES[-1], batch)]
    for index, (fan_in, fan_out) in enumerate(zip(SIZES, SIZES[1:])):
        found[f"{2 * index}.weight"] = rng.standard_normal((fan_out, fan_in)) / 2
        found[f"{2 * index}.bias"] = rng.standard_normal(fan_out) / 2
    return {k: v.astype(dtype) for k, v in found.items()}


def _sequential(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(
        nn.Linear(SIZES[0], SIZES[1]),
        nn.ReLU(),
        nn.Linear(SIZES[1], SIZES[2]),
        nn.ReLU(),
        nn.Linear(SIZES[2], SIZES[3]),
    )


def _per_example(lib: Any, arrays: dict[str, np.ndarray], call: Any) -> Any:
    """The benchmark's function (bench/func_per_example.py): each example's
    gradients of an nn.Sequential MLP's cross entropy, by `call`'s vmap(grad)."""
    model = _sequential(lib)
    params = {k: lib.tensor(v) for k, v in arrays.items() if "." in k}

    def loss(params: Any, x: Any, target: Any) -> Any:
        logits = call.functional_call(model, params, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(logits, target.unsqueeze(0))

    per_example = call.vmap(call.grad(loss), in_dims=(None, 0, 0))
    found = per_example(params, lib.tensor(arrays["x"]), lib.tensor(arrays["t"]))
    return {k: v.detach().numpy() for k, v in found.items()}


def _loop(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same gradients one example at a time (grad alone, no vmap)."""
    model = _sequential(gradgen)
    params = {k: gradgen.tensor(v) for k, v in arrays.items() if "." in k}

    def loss(params: Any, x: Any, target: Any) -> Any:
        logits = functional_call(model, params, (x.unsqueeze(0),))
        return F.cross_entropy(logits, target.unsqueeze(0))

    rows = [
        grad(loss)(params, gradgen.tensor(x), gradgen.tensor(t))
        for x, t in zip(arrays["x"], arrays["t"])
    ]
    return {k: np.stack([row[k].numpy() for row in rows]) for k in params}


class _Func:
    functional_call = staticmethod(functional_call)
    vmap = staticmethod(vmap)
    grad = staticmethod(grad)


@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("batch", [1, 4, 7])
def test_per_example_gradients_are_the_loops(
    dtype: str, tolerance: float, batch: int
) -> None:
    arrays = _arrays(dtype, batch)
    found, expected = _per_example(gradgen, arrays, _Func), _loop(arrays)
    assert sorted(found) == sorted(expected)
    for name, want in expected.items():
        got = found[name]
        assert got.shape == want.shape and got.dtype == want.dtype, name
        # (a product of the whole batch rounds as BLAS blocks it, not bit for bit
        # as one example's)
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def test_per_example_gradients_match_torch_func() -> None:
    arrays = _arrays("float64", 6)

    def theirs(torch: Any) -> Any:
        torch.manual_seed(0)
        return _per_example(torch, arrays, torch.func)

    expected = oracle("grads", theirs)
    found = _per_example(gradgen, arrays, _Func)
    for name, want in expected.items():
        np.testing.assert_allclose(found[name], want, rtol=1e-10, atol=1e-12)


def test_the_batched_slots_give_the_general_rules_bits() -> None:
    arrays = _arrays("float32", 5, seed=8)
    fast = _per_example(gradgen, arrays, _Func)
    saved = BATCHED.linear, BATCHED.cross_entropy_loss, BATCHED.relu
    BATCHED.linear = BATCHED.cross_entropy_loss = BATCHED.relu = None
    try:
        general = _per_example(gradgen, arrays, _Func)
    finally:
        BATCHED.linear, BATCHED.cross_entropy_loss, BATCHED.relu = saved
    for name, want in general.items():
        np.testing.assert_array_equal(fast[name], want, err_msg=name)


@pytest.mark.parametrize(
    "left_shape, right_shape, repeated",
    [
        ((6, 4, 1), (6, 1, 5), False),  # outer products
        ((6, 1, 4), (6, 4, 5), True),  # one matrix repeated over the batch
        ((6, 3, 4), (6, 4, 5), False),  # a batch of matrices: the kernel
        ((1, 3, 4), (1, 4, 5), True),  # a batch of one: the kernel
    ],
)
def test_product_gives_the_bmm_kernels_bits(
    left_shape: tuple[int, ...], right_shape: tuple[int, ...], repeated: bool
) -> None:
    rng = np.random.default_rng(4)
    left = rng.standard_normal(left_shape).astype("float32")
    right = rng.standard_normal(right_shape).astype("float32")
    if repeated:
        right = np.broadcast_to(right[:1], right.shape)
    np.testing.assert_array_equal(_product(left, right), bmm(left, right))


def test_relu_slot_gives_the_rules_result_and_steps_aside() -> None:
    values = gradgen.tensor(np.array([[-1.0, 0.0, 2.0], [3.0, -0.5, -0.0]]))
    with batching.vmap_level(2) as level:
        batched = BatchedTensor(values, level)
        fast = F.relu(batched)
        assert fast.__class__ is BatchedTensor and fast._level == level
        general = gradgen.relu(batched)
        nested = BatchedTensor(batched, level + 1)
        # a batch of a batch (no plain value) and a plain tensor take the dispatcher
        assert BATCHED.relu is not None
        assert BATCHED.relu(nested) is NotImplemented
        assert BATCHED.relu(values) is NotImplemented
    np.testing.assert_array_equal(fast._value.numpy(), general._value.numpy())
    assert np.signbit(fast._value.numpy()[1, 2])  # relu keeps -0.0, as the kernel


def _profiled_calls() -> list[str]:
    with gradgen.autograd.profiler.profile() as profile:
        _per_example(gradgen, _arrays("float64", 3), _Func)
    return sorted(event.name for event in profile.function_events)


def test_the_profiler_sees_the_calls_the_general_rules_make() -> None:
    found = _profiled_calls()
    saved = BATCHED.linear, BATCHED.cross_entropy_loss, BATCHED.relu
    BATCHED.linear = BATCHED.cross_entropy_loss = BATCHED.relu = None
    try:
        general = _profiled_calls()
    finally:
        BATCHED.linear, BATCHED.cross_entropy_loss, BATCHED.relu = saved
    assert found == general and "aten::relu" in found


def test_unsqueeze_of_a_plain_batch_is_a_view_of_it() -> None:
    data = gradgen.tensor(np.arange(6.0).reshape(2, 3))

    def first(x: Any) -> Any:
        row = x.unsqueeze(0)
        assert row.shape == (1, 3)
        return row

    rows = vmap(first)(data)
    assert rows.shape == (2, 1, 3)
    assert np.shares_memory(rows.numpy(), data.numpy())
    assert rows._base is data and not rows.requires_grad


def test_unsqueeze_of_a_batch_that_requires_grad_records_its_node() -> None:
    data = gradgen.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    rows = vmap(lambda x: x.unsqueeze(0) * 2.0)(data)
    rows.sum().backward()
    np.testing.assert_array_equal(data.grad.numpy(), np.full((2, 3), 2.0))


def test_keeps_graph_reads_views_and_containers() -> None:
    base = gradgen.tensor(np.ones(3), requires_grad=True)
    view = base[1:]
    plain = gradgen.tensor(np.ones(3))
    assert _keeps_graph(({"a": plain, "b": [1, (2.0, view)]},))
    assert not _keeps_graph(({"a": plain, "b": [1, (2.0, None)]},))
    assert _keeps_graph((plain * 1, base * 2))
    with gradgen.no_grad():
        assert not _keeps_graph((base,))


def test_grad_results_keep_their_graph_only_when_an_input_requires_grad() -> None:
    weight = gradgen.tensor(np.array([1.0, 2.0]), requires_grad=True)
    x = gradgen.tensor(np.array([[1.0, 3.0], [2.0, 5.0]]))

    def loss(w: Any, x: Any) -> Any:
        return (w * w * x).sum()

    detached = vmap(grad(loss), in_dims=(None, 0))(weight.detach(), x)
    kept = vmap(grad(loss), in_dims=(None, 0))(weight * 1.0, x)
    np.testing.assert_array_equal(
        detached.numpy(), 2 * weight.detach().numpy() * x.numpy()
    )
    assert not detached.requires_grad and kept.requires_grad
    # the per-example gradients stay a function of the weight outside
    kept.sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy(), 2 * x.numpy().sum(0))


def test_grad_of_a_view_input_keeps_its_graph() -> None:
    base = gradgen.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    x = gradgen.tensor(np.array([[1.0, 3.0], [2.0, 5.0]]))

    def loss(w: Any, x: Any) -> Any:
        return (w * w * x).sum()

    found = vmap(grad(loss), in_dims=(None, 0))(base[1:], x)
    found.sum().backward()
    np.testing.assert_array_equal(base.grad.numpy(), [0.0, *(2 * x.numpy().sum(0))])


def test_functional_call_still_unties_tied_weights() -> None:
    model = gradgen.nn.Sequential(
        gradgen.nn.Linear(2, 2, bias=False), gradgen.nn.Linear(2, 2, bias=False)
    )
    model[1].weight = model[0].weight
    weight = gradgen.tensor(np.array([[2.0, 0.0], [0.0, 3.0]]))
    ones = gradgen.tensor(np.ones((1, 2)))
    found = functional_call(model, {"0.weight": weight}, (ones,))
    np.testing.assert_array_equal(found.numpy(), [[4.0, 9.0]])
    other = gradgen.tensor(np.eye(2))
    with pytest.raises(ValueError, match="tied"):
        functional_call(model, {"0.weight": weight, "1.weight": other}, (other,))


def test_functional_call_reaches_parameters_below_empty_modules() -> None:
    inner = gradgen.nn.Sequential(gradgen.nn.Identity(), gradgen.nn.Linear(2, 1))
    model = gradgen.nn.Sequential(gradgen.nn.ReLU(), inner)
    params = {
        "1.1.weight": gradgen.tensor(np.array([[1.0, -1.0]])),
        "1.1.bias": gradgen.tensor(np.array([0.5])),
    }
    found = functional_call(model, params, (gradgen.tensor(np.array([[3.0, 1.0]])),))
    np.testing.assert_array_equal(found.numpy(), [[2.5]])
    assert model[1][1].bias is not params["1.1.bias"]  # put back


def test_tree_flatten_counts_the_leaves_it_lists() -> None:
    tree = ({"a": 1, "b": [2, 3, (4,)]}, None, [])
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, None] and spec.num_leaves == 5
    built = TreeSpec("list", None, (LEAF, LEAF))
    assert built.num_leaves == 2 and tree_flatten([0, 0])[1] == built
    assert tree_unflatten(leaves, spec) == tree


def test_cross_entropy_warns_once_for_a_legacy_reduction() -> None:
    logits = gradgen.tensor(np.array([[0.5, -1.0, 2.0]]))
    target = gradgen.tensor(np.array([2]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.cross_entropy(logits, target, reduction="elementwise_mean")
    assert len(caught) == 1


def test_linear_slot_steps_aside_for_a_subclass_input() -> None:
    class Marked(Tensor):
        pass

    x = Marked(np.ones((2, 3)))
    weight = gradgen.tensor(np.ones((4, 3)))
    bias = gradgen.tensor(np.zeros(4))
    found = F.linear(x, weight, bias)
    np.testing.assert_array_equal(found.numpy(), np.full((2, 4), 3.0))
