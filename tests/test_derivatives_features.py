"""derivatives.yaml features, through a package generated from tests/fixtures/features.

Each operator there exists to exercise one feature; the expected gradients are worked
out by hand in each test.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import gradgen
from gradgen import autograd
from gradgen.codegen import generate

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "features"


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("features")
    generate(
        FIXTURES / "native_functions.yaml",
        FIXTURES / "derivatives.yaml",
        root / "features",
    )
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("features")
    finally:
        sys.path.remove(str(root))
        for name in [
            n for n in sys.modules if n == "features" or n.startswith("features.")
        ]:
            del sys.modules[name]


def leaf(values):
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=True)


def ones(n: int) -> gradgen.Tensor:
    return gradgen.ones(n, dtype=gradgen.float64)


def test_named_outputs_and_named_cotangents(ops) -> None:
    x, y = leaf([1.0, 2.0]), leaf([5.0, 7.0])
    total, difference = ops.sum_and_difference(x, y)
    assert total.grad_fn is difference.grad_fn
    assert (total.output_nr, difference.output_nr) == (0, 1)
    gx, gy = autograd.grad((total, difference), (x, y), (ones(2), ones(2) * 10.0))
    np.testing.assert_array_equal(gx.numpy(), [11.0, 11.0])  # 1 + 10
    np.testing.assert_array_equal(gy.numpy(), [-9.0, -9.0])  # 1 - 10


def test_an_unused_output_reaches_the_formula_as_none(ops) -> None:
    x, y = leaf([1.0, 2.0]), leaf([5.0, 7.0])
    _, difference = ops.sum_and_difference(x, y)
    gx, gy = autograd.grad(difference, (x, y), ones(2))
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(gy.numpy(), [-1.0, -1.0])


def test_grads_by_index(ops) -> None:
    x = leaf([2.0])
    low, high = ops.halves(x)
    (gx,) = autograd.grad((low, high), x, (ones(1) * 2.0, ones(1) * 4.0))
    assert gx.item() == 2.0 * 0.5 + 4.0 * 1.5
    (gx,) = autograd.grad(ops.halves(x)[1], x, ones(1))
    assert gx.item() == 1.5


def test_non_differentiable_input_is_ignored_and_uncovered_input_is_refused(
    ops,
) -> None:
    x, weight = leaf([2.0]), leaf([3.0])
    other = gradgen.tensor([5.0], dtype=gradgen.float64)
    out = ops.weighted(x, other, weight)  # weight requires grad: silently ignored
    assert len(out.grad_fn.next_functions) == 1  # only `self` has an edge
    (gx,) = autograd.grad(out, x, ones(1))
    assert gx.item() == 15.0
    with pytest.raises(RuntimeError) as raised:
        ops.weighted(x, leaf([5.0]), weight)
    assert str(raised.value) == (
        "The function 'weighted' is not differentiable with respect to argument 'other'. "
        "This input cannot have requires_grad True."
    )


def test_multi_input_formula_with_grad_input_mask(ops) -> None:
    x, y = leaf([2.0]), leaf([3.0])
    gx, gy = autograd.grad(ops.product(x, y), (x, y), ones(1))
    assert (gx.item(), gy.item()) == (3.0, 2.0)
    constant = gradgen.tensor([3.0], dtype=gradgen.float64)
    (gx,) = autograd.grad(ops.product(x, constant), x, ones(1))
    assert gx.item() == 3.0


def test_not_implemented_raises_at_backward(ops) -> None:
    out = ops.zeta_like(leaf([1.0]))  # the forward works
    assert out.item() == 2.0
    with pytest.raises(NotImplementedError) as raised:
        out.backward(gradient=ones(1))
    assert str(raised.value) == "the derivative for 'zeta_like' is not implemented."


def test_zeros_like_saves_shape_and_dtype_not_the_tensor(ops) -> None:
    x, y = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
    out = ops.plus_other_shape(x, y)
    assert not hasattr(out.grad_fn, "self_")
    assert out.grad_fn.self_info.shape == (3,)
    gx, gy = autograd.grad(out, (x, y), ones(3))
    np.testing.assert_array_equal(gx.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(gy.numpy(), [1.0, 1.0, 1.0])


def test_output_differentiability(ops) -> None:
    values, indices = ops.value_and_index(leaf([1.0, 2.0]))
    assert values.requires_grad and values.grad_fn.name() == "ValueAndIndexBackward0"
    assert not indices.requires_grad and indices.grad_fn is None
    assert indices.dtype == gradgen.int64


def test_retain_variables_tells_whether_the_graph_is_kept(ops) -> None:
    x = leaf([1.0])
    out = ops.retaining(x)
    out.backward(gradient=ones(1), retain_graph=True)
    assert x.grad.item() == 1.0
    out.backward(gradient=ones(1))  # the graph is released after this one
    assert x.grad.item() == 1.0 + 2.0


def test_operator_without_entry_records_a_node_that_refuses_backward(ops) -> None:
    out = ops.no_formula(leaf([1.0]))
    assert out.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError) as raised:
        out.backward(gradient=ones(1))
    assert str(raised.value) == "derivative for aten::no_formula is not implemented"


def test_non_tensor_return(ops) -> None:
    assert ops.count_positive(leaf([1.0, -2.0, 3.0])) == 2


def test_overloads_are_chosen_by_argument_types(ops) -> None:
    x = gradgen.tensor([1.0, 2.0], dtype=gradgen.float64)
    y = gradgen.tensor([3.0, 4.0], dtype=gradgen.float64)
    assert ops.scale(x, y).tolist() == [3.0, 8.0]  # scale.Tensor
    assert ops.scale(x, 2).tolist() == [20.0, 40.0]  # scale.Scalar
    assert ops.scale(x, other=2).tolist() == [20.0, 40.0]
    m = gradgen.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=gradgen.float64)
    assert ops.scale(m, [0]).tolist() == [4.0, 6.0]  # scale.dim
    assert ops.scale(m, 1, True).tolist() == [[3.0], [7.0]]
    assert ops.scale(m, dim=(0, 1), dtype=gradgen.float32).dtype == gradgen.float32


def test_overloaded_methods_bind_self(ops) -> None:
    from gradgen.tensor import install_methods

    class Probe(gradgen.Tensor):
        pass

    install_methods(Probe, ops.METHODS)
    x = Probe(np.array([1.0, 2.0]))
    assert x.scale(3).tolist() == [30.0, 60.0]
    assert x.scale(x).tolist() == [1.0, 4.0]
    assert x.scale(0).tolist() == [0.0, 0.0]


def test_no_matching_overload_lists_the_signatures(ops) -> None:
    x = gradgen.tensor([1.0])
    with pytest.raises(TypeError) as raised:
        ops.scale(x, "two")
    assert str(raised.value) == (
        "scale() received an invalid combination of arguments - got (Tensor, str), but "
        "expected one of:\n"
        " * (Tensor input, Tensor other)\n"
        " * (Tensor input, Number other)\n"
        " * (Tensor input, int[] dim, bool keepdim=False, *, ScalarType? dtype=None)"
    )
