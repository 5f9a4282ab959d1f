"""The broadcast-reduction fusion: `sum_to_size(a * b, size)` (the gradient of a
broadcast factor: a scalar's, a per-channel scale's) as one einsum, the product never
made. Opt-in (options={"fuse_broadcast_reductions": True}): the sum is reassociated,
so its result is within a reordered sum's rounding bound of eager's, not bitwise."""

from __future__ import annotations

import numpy as np

import gradgen as torch
from gradgen.compile.passes import fuse_broadcast_reductions
from gradgen.compile.trace import Op, Value
from gradgen.generated.kernel_sources import KERNEL_SOURCES


def _op(name: str, args: list[object], output: Value) -> Op:
    return Op(name, KERNEL_SOURCES[name], list(args), (), [output], "")


def _graph(
    shape: tuple[int, ...], size: tuple[int, ...]
) -> tuple[list[Op], list[Value]]:
    rng = np.random.default_rng(0)
    a = Value(0, rng.standard_normal(shape))
    b = Value(1, rng.standard_normal(shape))
    product = Value(2, a.array * b.array)
    reduced = Value(3, np.sum(product.array, axis=0, keepdims=len(size) == 2))
    if size == ():
        reduced = Value(3, np.asarray(product.array.sum()))
    ops = [
        _op("mul.Tensor", [a, b], product),
        _op("sum_to_size", [product, size], reduced),
    ]
    return ops, [a, b, product, reduced]


def test_a_product_reduced_to_a_bias_shape_becomes_one_einsum() -> None:
    ops, (a, b, _, reduced) = _graph((5, 3), (3,))
    (fused,) = fuse_broadcast_reductions(ops, set())
    assert fused.name == "fused_sum_to_size" and fused.outputs == [reduced]
    assert fused.args == ["ab,ab->b", a, b, (3,)]
    # keepdim: (1, 3) keeps the second dimension and reshapes the first back
    ops, _ = _graph((5, 3), (1, 3))
    assert fuse_broadcast_reductions(ops, set())[0].args[0] == "ab,ab->b"
    ops, _ = _graph((5, 3), ())
    assert fuse_broadcast_reductions(ops, set())[0].args[0] == "ab,ab->"


def test_no_fusion_when_the_product_is_used_again_or_kept() -> None:
    ops, (a, _, product, _) = _graph((5, 3), (3,))
    again = Value(4, np.exp(product.array))
    used_twice = ops + [_op("exp", [product], again)]
    assert [op.name for op in fuse_broadcast_reductions(used_twice, set())] == [
        "mul.Tensor",
        "sum_to_size",
        "exp",
    ]
    kept = fuse_broadcast_reductions(ops, {id(product)})
    assert [op.name for op in kept] == ["mul.Tensor", "sum_to_size"]


def test_no_fusion_of_a_broadcasting_product() -> None:
    a = Value(0, np.ones((5, 3)))
    b = Value(1, np.ones(3))
    product = Value(2, a.array * b.array)
    reduced = Value(3, product.array.sum(0))
    ops = [
        _op("mul.Tensor", [a, b], product),
        _op("sum_to_size", [product, (3,)], reduced),
    ]
    assert [op.name for op in fuse_broadcast_reductions(ops, set())] == [
        "mul.Tensor",
        "sum_to_size",
    ]


def _scaled(x: torch.Tensor, s: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    return (x * s * g).tanh().sum()


def _inputs() -> list[torch.Tensor]:
    rng = np.random.default_rng(2)
    return [
        torch.tensor(rng.standard_normal((16, 8)), requires_grad=True),
        torch.tensor(rng.standard_normal(()), requires_grad=True),
        torch.tensor(rng.standard_normal(8), requires_grad=True),
    ]


def test_fused_gradients_are_within_the_reassociation_bound_of_eager() -> None:
    eager = _inputs()
    _scaled(*eager).backward()
    fused = torch.compile(_scaled, options={"fuse_broadcast_reductions": True})
    for _ in range(2):
        got = _inputs()
        fused(*got).backward()
        x, s, g = (t.detach().numpy() for t in eager)
        upstream = (1 - np.tanh(x * s * g) ** 2) * g  # d out / d (x * s)
        terms = np.abs(upstream * x)
        # s's gradient: one sum of 128 terms, reassociated
        bound = 128 * np.finfo(np.float64).eps * terms.sum()
        assert abs(got[1].grad.item() - eager[1].grad.item()) <= bound
        np.testing.assert_array_equal(got[0].grad.numpy(), eager[0].grad.numpy())
        assert np.allclose(got[2].grad.numpy(), eager[2].grad.numpy(), rtol=1e-13)
    (entry,) = fused.cache.values()
    assert entry.program.source.count("np.einsum(") == 2  # s's and g's gradients
    assert "= sum_to_size(" not in entry.program.source


def test_fusion_is_off_by_default_and_bitwise_then() -> None:
    compiled = torch.compile(_scaled)
    compiled(*_inputs())
    (entry,) = compiled.cache.values()
    assert "einsum" not in entry.program.source
    # both reductions are the sum_to_size helper's own (np.add.reduce, rendered)
    assert entry.program.source.count("# sum_to_size <- ") == 2
    assert entry.program.source.count("= np.add.reduce(") == 2
