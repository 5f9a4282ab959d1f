"""The fast paths behind vmap(grad)'s per-example gradients (issue 15's benchmark),
each against an independent answer: the per-example loop, numpy, or torch.func
(recorded in tests/golden/func/).

- bmm's outer products by BLAS over a contraction padded to 2 (exactly the products);
- the unsqueeze kernel (np.expand_dims's strides, as PyTorch's);
- addmm's rule on the values (nn.Linear under vmap), and the rules' direct calls below
  the Batched key (the profiler still sees them);
- one vmap level's backward run without the Batched key (nested levels keep it);
- grad's value cut from the graph, its gradients left as they come;
- functional_call's one walk of the module (tied, shared, plain attributes);
- pytree's structures (equality, leaves, prefixes read from a structure);
- randomness read from the bit generator's state.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import dispatch
from gradgen.func import functional_call, grad, grad_and_value, vmap
from gradgen.func.pytree import (
    broadcast_prefix,
    broadcast_prefix_of_spec,
    tree_flatten,
    tree_leaves,
)
from gradgen.numpy_kernels import bmm
from gradgen.numpy_kernels.shape import unsqueeze
from gradgen.tensor import Tensor
from torch_oracle import oracle

SIZES = (40, 36, 33)  # wide enough for bmm's BLAS outer products (both sides >= 32)
BATCH = 3


def _data(dtype: Any) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(dtype)
    target = np.eye(SIZES[-1], dtype=dtype)[rng.integers(0, SIZES[-1], BATCH)]
    weights = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        weights.append(rng.standard_normal((fan_out, fan_in)).astype(dtype) * 0.2)
        weights.append(rng.standard_normal(fan_out).astype(dtype) * 0.1)
    return x, target, weights


NAMES = ("0.weight", "0.bias", "2.weight", "2.bias")


def _loss(lib: Any, model: Any, call: Any) -> Any:
    def loss(params: Any, x: Any, target: Any) -> Any:
        logits = call(model, params, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(logits, target.unsqueeze(0))

    return loss


def _gradgen_per_example(dtype: Any) -> dict[str, Tensor]:
    x, target, weights = _data(dtype)
    nn = gradgen.nn
    model = nn.Sequential(nn.Linear(*SIZES[:2]), nn.ReLU(), nn.Linear(*SIZES[1:]))
    params = {name: gradgen.tensor(w) for name, w in zip(NAMES, weights)}
    per_example = vmap(
        grad(_loss(gradgen, model, functional_call)), in_dims=(None, 0, 0)
    )
    result: dict[str, Tensor] = per_example(
        params, gradgen.tensor(x), gradgen.tensor(target)
    )
    return result


def _torch_per_example(torch: Any, dtype: Any) -> dict[str, Any]:
    x, target, weights = _data(dtype)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(*SIZES[:2]), nn.ReLU(), nn.Linear(*SIZES[1:]))
    params = {name: torch.tensor(w) for name, w in zip(NAMES, weights)}
    loss = _loss(torch, model, torch.func.functional_call)
    per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    found = per_example(params, torch.tensor(x), torch.tensor(target))
    return {name: value.numpy() for name, value in found.items()}


def test_per_example_gradients_of_a_wide_mlp_match_torch_func_and_the_loop() -> None:
    # torch.func's in float64 (one recording; float32 within its precision)
    theirs = oracle("per-example", lambda t: _torch_per_example(t, "float64"))
    for dtype, tolerance in (("float32", 1e-5), ("float64", 1e-12)):
        _check_per_example(dtype, tolerance, theirs)


def _check_per_example(dtype: str, tolerance: float, theirs: dict[str, Any]) -> None:
    batched = _gradgen_per_example(np.dtype(dtype))
    for name in NAMES:
        value = batched[name]
        assert value.dtype == getattr(gradgen, dtype), name  # no float64 round trip
        assert value.is_contiguous(), name
        np.testing.assert_allclose(value.numpy(), theirs[name], atol=tolerance)
    # Each example alone (no batch at all): the same gradients.
    x, target, weights = _data(np.dtype(dtype))
    nn = gradgen.nn
    model = nn.Sequential(nn.Linear(*SIZES[:2]), nn.ReLU(), nn.Linear(*SIZES[1:]))
    params = {name: gradgen.tensor(w) for name, w in zip(NAMES, weights)}
    single = grad(_loss(gradgen, model, functional_call))
    for index in range(BATCH):
        one = single(params, gradgen.tensor(x[index]), gradgen.tensor(target[index]))
        for name in NAMES:
            np.testing.assert_allclose(
                batched[name].numpy()[index], one[name].numpy(), atol=tolerance
            )


# -- bmm's outer products ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows, columns", [(40, 33), (64, 128), (33, 8), (4, 100)])
def test_bmm_outer_products_are_exactly_the_products(
    dtype: Any, rows: int, columns: int
) -> None:
    rng = np.random.default_rng(1)
    left = (rng.standard_normal((3, rows, 1)) * 3).astype(dtype)
    right = (rng.standard_normal((3, 1, columns)) * 3).astype(dtype)
    left[0, :3, 0] = [np.inf, -np.inf, np.nan]
    right[1, 0, :2] = [0.0, -0.0]
    product = bmm(left, right)
    assert product.dtype == dtype and product.shape == (3, rows, columns)
    np.testing.assert_array_equal(product, left * right)  # NaN where the product is
    # Written as (3, columns, rows): the weight gradient's transpose is contiguous.
    assert product.transpose(0, 2, 1).flags.c_contiguous


def test_bmm_outer_products_of_strided_views() -> None:
    """The outer products read their inputs through views (vmap's transposes)."""
    rng = np.random.default_rng(2)
    base = rng.standard_normal((4, 1, 80)).astype(np.float32)
    left = base.transpose(0, 2, 1)[:, ::2, :]  # (4, 40, 1), strided
    right = rng.standard_normal((4, 3, 50)).astype(np.float32)[:, 1:2, :]
    np.testing.assert_array_equal(bmm(left, right), left * right)


# -- unsqueeze ---------------------------------------------------------------------------


def test_unsqueeze_keeps_expand_dims_strides_and_pytorchs() -> None:
    arrays = [
        np.arange(24.0).reshape(2, 3, 4),
        np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1),
        np.arange(10.0)[::3],
        np.array(5.0),
    ]
    for array in arrays:
        for dim in range(-array.ndim - 1, array.ndim + 1):
            ours = unsqueeze(array, dim)
            want = np.expand_dims(array, dim)
            assert ours.shape == want.shape and ours.strides == want.strides
            assert np.shares_memory(ours, array) or array.size == 1
    with pytest.raises(IndexError, match="Dimension out of range"):
        unsqueeze(np.zeros((2, 3)), 3)

    def strides(lib: Any) -> Any:
        x = lib.arange(24.0).reshape(2, 3, 4)
        return [list(x.unsqueeze(d).stride()) for d in range(-4, 4)]

    assert strides(gradgen) == oracle("unsqueeze strides", strides)


# -- addmm's rule and the direct calls ---------------------------------------------------


def _addmm_cases() -> dict[str, tuple[tuple[Any, ...], Any, dict[str, Any]]]:
    """name -> (arrays, in_dims, keyword arguments) of vmap over addmm."""
    rng = np.random.default_rng(3)

    def r(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape)

    return {
        "all batched": ((r(4, 5), r(4, 2, 3), r(4, 3, 5)), 0, {}),
        "bias unbatched": ((r(5), r(4, 2, 3), r(4, 3, 5)), (None, 0, 0), {}),
        "matrix bias": ((r(4, 2, 5), r(4, 2, 3), r(3, 5)), (0, 0, None), {}),
        "weight unbatched": ((r(4, 5), r(4, 1, 3), r(3, 5)), (0, 0, None), {}),
        "only bias batched": ((r(4, 5), r(2, 3), r(3, 5)), (0, None, None), {}),
        "scaled": ((r(4, 5), r(4, 2, 3), r(4, 3, 5)), 0, {"beta": 0.5, "alpha": 2}),
        "beta 0": ((r(4, 5), r(4, 2, 3), r(4, 3, 5)), 0, {"beta": 0}),
        "contraction 1": ((r(4, 5), r(4, 2, 1), r(4, 1, 5)), 0, {}),
    }


def test_vmap_of_addmm_matches_torch_func() -> None:
    def run(lib: Any, vmap_: Any) -> dict[str, Any]:
        found = {}
        for name, (arrays, in_dims, kwargs) in _addmm_cases().items():
            tensors = [lib.tensor(a) for a in arrays]
            out = vmap_(lambda b, m1, m2: lib.addmm(b, m1, m2, **kwargs), in_dims)(
                *tensors
            )
            found[name] = out.numpy()
        return found

    ours = run(gradgen, vmap)
    theirs = oracle("addmm", lambda torch: run(torch, torch.func.vmap))
    for name, value in theirs.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-12, err_msg=name)


def test_vmap_grad_through_addmm_matches_the_loop() -> None:
    rng = np.random.default_rng(4)
    bias = gradgen.tensor(rng.standard_normal(5))
    weight = gradgen.tensor(rng.standard_normal((5, 3)))
    x = gradgen.tensor(rng.standard_normal((4, 2, 3)))

    def loss(b: Tensor, w: Tensor, xi: Tensor) -> Tensor:
        return gradgen.addmm(b, xi, w.t()).tanh().sum()

    batched = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(bias, weight, x)
    for index in range(4):
        one = grad(loss, argnums=(0, 1))(bias, weight, x[index])
        for got, want in zip(batched, one):
            np.testing.assert_allclose(got.numpy()[index], want.numpy(), rtol=1e-12)


def test_the_profiler_still_sees_the_calls_inside_the_rules() -> None:
    seen: list[str] = []

    def observer(handle: Any, args: tuple[Any, ...]) -> Any:
        seen.append(handle.name)
        return handle.call_unobserved(*args)

    a, b = gradgen.randn(3, 2, 4), gradgen.randn(3, 4, 5)
    dispatch.observe_calls(observer)
    try:
        out = vmap(gradgen.mm)(a, b)
    finally:
        dispatch.observe_calls(None)
    assert seen == ["mm", "bmm"]  # mm's rule called bmm on the batches
    np.testing.assert_allclose(out.numpy(), a.numpy() @ b.numpy(), rtol=1e-6)


# -- the backward of one level -----------------------------------------------------------


def _quadratic(w: Tensor, x: Tensor) -> Tensor:
    return ((w * x).sin() * w).sum()


def test_nested_vmap_grad_matches_the_loop() -> None:
    """Two levels keep the Batched key in the backward; one level runs without it."""
    rng = np.random.default_rng(5)
    w = gradgen.tensor(rng.standard_normal(3))
    x = gradgen.tensor(rng.standard_normal((2, 4, 3)))
    nested = vmap(vmap(grad(_quadratic), in_dims=(None, 0)), in_dims=(None, 0))(w, x)
    single = vmap(grad(_quadratic), in_dims=(None, 0))(w, x[1])
    for i in range(2):
        for j in range(4):
            one = grad(_quadratic)(w, x[i, j])
            np.testing.assert_allclose(nested.numpy()[i, j], one.numpy(), rtol=1e-12)
    np.testing.assert_allclose(single.numpy(), nested.numpy()[1], rtol=1e-12)


def test_vmap_grad_leaves_the_batched_key_as_it_found_it() -> None:
    w, x = gradgen.randn(3), gradgen.randn(4, 3)
    before = dispatch.batched_levels.open
    vmap(grad(_quadratic), in_dims=(None, 0))(w, x)
    assert dispatch.batched_levels.open == before == 0

    def failing(w: Tensor, x: Tensor) -> Tensor:
        y = w * x + 3
        y.acosh_()  # its backward raises (as PyTorch's: not implemented)
        return y.sum()

    with pytest.raises(NotImplementedError, match="inplace version of acosh"):
        vmap(grad(failing), in_dims=(None, 0))(w, x)
    assert dispatch.batched_levels.open == 0


def test_hessian_of_a_batch_by_vmap_of_grad_of_grad() -> None:
    """An outer level differentiates the inner one's gradient (the graph is kept)."""
    x = gradgen.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3))

    def cube(v: Tensor) -> Tensor:
        return (v**3).sum()

    second = vmap(grad(lambda v: grad(cube)(v).sum()))(x)
    np.testing.assert_allclose(second.numpy(), 6 * x.numpy(), rtol=1e-12)


# -- grad's results ----------------------------------------------------------------------


def test_grad_and_value_cut_the_value_and_aux_from_the_graph() -> None:
    w = gradgen.randn(3)

    def f(v: Tensor) -> tuple[Tensor, Tensor]:
        return (v * v).sum(), v * 2

    gradient, (value, aux) = grad_and_value(f, has_aux=True)(w)
    for tensor in (gradient, value, aux):
        assert not tensor.requires_grad and tensor.grad_fn is None
    np.testing.assert_allclose(gradient.numpy(), 2 * w.numpy())
    leaf = gradgen.randn(3, requires_grad=True)  # an outer graph: everything kept
    gradient, value = grad_and_value(lambda v: (v * v).sum())(leaf)
    assert gradient.requires_grad and value.requires_grad


# -- functional_call ---------------------------------------------------------------------


class _Shared(gradgen.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        inner = gradgen.nn.Linear(2, 2, bias=False)
        self.a = inner
        self.b = inner  # one module under two names: its weight has two names
        self.c = gradgen.nn.Linear(2, 2)
        self.c.bias = None  # a None parameter is no tensor to replace
        self.scale = 3.0

    def forward(self, x: Tensor) -> Tensor:
        return self.c(self.a(x) + self.b(x)) * self.scale


def test_functional_call_swaps_shared_none_and_plain_attributes_back() -> None:
    module = _Shared()
    x = gradgen.ones(2)
    weight = gradgen.tensor([[1.0, 0.0], [0.0, 2.0]])
    c_weight = module.c.weight
    found = functional_call(module, {"a.weight": weight, "c.bias": gradgen.ones(2)}, x)
    expected = (c_weight.detach().numpy() @ (2 * weight.numpy() @ x.numpy()) + 1) * 3
    np.testing.assert_allclose(found.detach().numpy(), expected, rtol=1e-6)
    assert module.c.bias is None and module.b.weight is module.a.weight
    assert module.a.weight is not weight
    # A name that is nothing yet: set for the call, then gone again.
    functional_call(module, {"extra": gradgen.tensor(1.0)}, x)
    assert not hasattr(module, "extra")
    with pytest.raises(ValueError, match="tied"):
        functional_call(module, {"a.weight": weight, "b.weight": weight * 2}, x)
    # Untied, both names write the one module's weight: the last one (zeros) wins,
    # as in torch.func.functional_call.
    untied = functional_call(
        module, {"a.weight": weight, "b.weight": weight * 0}, x, tie_weights=False
    )
    np.testing.assert_array_equal(untied.detach().numpy(), [0.0, 0.0])
    assert module.a.weight is module.b.weight is not weight


# -- pytree ------------------------------------------------------------------------------

Pair = namedtuple("Pair", "left right")
TREES = [
    1,
    None,
    (1, [2, 3], {"b": 4, "a": (5,)}),
    Pair(1, [2, {"k": 3}]),
    {"x": [], "y": ()},
    [Pair((), 1)],
]


@pytest.mark.parametrize("index", range(len(TREES)))
def test_tree_leaves_and_structures(index: int) -> None:
    tree = TREES[index]
    leaves, spec = tree_flatten(tree)
    assert tree_leaves(tree) == leaves
    assert spec.num_leaves == len(leaves)
    again = tree_flatten(tree)[1]
    assert again == spec and hash(again) == hash(spec)
    assert spec != tree_flatten([tree, 0])[1]


def test_prefixes_read_from_a_structure() -> None:
    tree = (1, {"b": [2, 3], "a": 4}, Pair(5, 6))
    spec = tree_flatten(tree)[1]
    for prefix in [
        0,
        None,
        (0, 1, None),
        (0, {"a": 1, "b": None}, 2),  # dict keys in another order
        (0, {"b": [1, 2], "a": 3}, (4, 5)),
        (0, 1),  # too short: no prefix
        (0, [1, 2], 3),  # a list for a dict: no prefix
    ]:
        assert broadcast_prefix_of_spec(prefix, spec) == broadcast_prefix(
            prefix, tree
        ), prefix
    assert broadcast_prefix((0, {"a": 1, "b": None}, 2), tree) == [
        0,
        None,
        None,
        1,
        2,
        2,
    ]


# -- randomness --------------------------------------------------------------------------


def test_randomness_modes_read_the_generator_state() -> None:
    gradgen.manual_seed(11)
    x = gradgen.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda v: v + gradgen.rand(3))(x)
    same = vmap(lambda v: v + gradgen.rand(3), randomness="same")(x)
    np.testing.assert_array_equal(same.numpy(), np.tile(same.numpy()[0], (4, 1)))
    gradgen.manual_seed(11)
    first = gradgen.rand(3)
    gradgen.manual_seed(11)
    different = vmap(lambda v: v + gradgen.rand(3), randomness="different")(x)
    np.testing.assert_array_equal(different.numpy()[0], first.numpy())
    assert len({tuple(row) for row in different.numpy().tolist()}) == 4
    # A seed set inside the batch moves the generator too: 'error' sees it.
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda v: v + gradgen.manual_seed(5).initial_seed() * 0)(x)
