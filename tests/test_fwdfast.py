"""The lean recorded forward (issue 14): the binary kernels' type promotion and result
wrapping, the three-slot SavedVariable, shared input metadata, the bindings' inline
Tensor check and the dunders that are the Tensor methods. Values are hand-computed;
the promotion fast path is checked against the general algorithm (dtypes.result_type).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import dtypes
from gradgen.autograd import forward_ad
from gradgen.autograd.graph import saved_tensors_hooks
from gradgen.tensor import Tensor, wrap_number
from gradgen.variable_type_utils import SCALAR_TYPES, result_type_2

_DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64", "complex128"]
_NUMBERS: list[Any] = [True, 2, 2.5, 1j, np.float32(2.0), np.int64(3)]


@pytest.fixture
def float32_default() -> Iterator[None]:
    previous = gradgen.get_default_dtype()
    gradgen.set_default_dtype(gradgen.float32)
    try:
        yield
    finally:
        gradgen.set_default_dtype(previous)


def _operands() -> list[Any]:
    tensors = [
        gradgen.tensor(np.array(value, dtype=name))
        for name in _DTYPES
        for value in (1, [1, 0])
    ]
    return tensors + [wrap_number(n) for n in _NUMBERS] + _NUMBERS


def _check_promotions() -> None:
    operands = _operands()
    for first in operands:
        if not isinstance(first, Tensor):
            continue
        for second in operands:
            expected = dtypes.result_type(first, second)
            assert result_type_2(first, second) is expected, (first, second)


def test_result_type_2_agrees_with_the_general_algorithm() -> None:
    _check_promotions()


def test_result_type_2_agrees_under_a_float32_default(float32_default: None) -> None:
    _check_promotions()


def test_binary_kernels_keep_promotion_and_zero_dim_results() -> None:
    x32 = gradgen.tensor(np.array([1.0, 2.0], dtype=np.float32))
    assert (x32 * 2.5).dtype is gradgen.float32
    assert (x32 * 2.5).tolist() == [2.5, 5.0]
    ints = gradgen.tensor(np.array([1, 2]))
    assert (ints * 2.5).dtype is gradgen.get_default_dtype()
    assert (ints * 2.5).tolist() == [2.5, 5.0]
    assert (ints * 3).dtype is gradgen.int64
    a = gradgen.tensor(2.0, dtype=gradgen.float64, requires_grad=True)
    q = 3 * a**3 - a**2  # 24 - 4
    assert type(q._data) is np.ndarray and q._data.shape == ()
    assert q.item() == 20.0 and q.dtype is gradgen.float64
    q.backward()
    assert a.grad is not None and a.grad.item() == 9 * 4.0 - 2 * 2.0


def test_binary_kernels_keep_the_broadcast_error() -> None:
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match"):
        gradgen.ones(2) * gradgen.ones(3)


def test_dunders_are_the_tensor_methods() -> None:
    # `+`, `-` and `*` are the fused binding and fast path (tests/test_fwd2_s10.py);
    # the other operators are the Tensor methods themselves.
    assert Tensor.__truediv__ is Tensor.div
    assert Tensor.__add__ is Tensor.__radd__ and Tensor.__mul__ is Tensor.__rmul__
    with pytest.raises(TypeError, match=r"argument 'other' \(position 1\) must be"):
        gradgen.ones(2) * "a"


def test_bindings_take_tensor_subclasses_and_numbers() -> None:
    weight = gradgen.nn.Parameter(gradgen.tensor([1.0, 2.0]))
    y = gradgen.tensor([3.0, 4.0]).mul(weight)
    assert y.tolist() == [3.0, 8.0] and y.grad_fn is not None
    assert gradgen.mul(weight, 2).tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match=r"argument 'other' \(position 1\) must be"):
        gradgen.tensor([1.0]).mul("a")  # type: ignore[arg-type]


def test_saved_scalar_types_are_the_input_dtypes() -> None:
    x = gradgen.tensor([1.0, 2.0], dtype=gradgen.float32, requires_grad=True)
    y = gradgen.tensor([3.0, 4.0], dtype=gradgen.float64, requires_grad=True)
    node: Any = (x * y).grad_fn
    assert node.self_scalar_type is gradgen.float32
    assert node.other_scalar_type is gradgen.float64
    assert SCALAR_TYPES[np.dtype("float64")] is gradgen.float64


def test_one_output_nodes_share_their_input_metadata() -> None:
    x = gradgen.tensor([1.0, 2.0], dtype=gradgen.float64, requires_grad=True)
    first, second = x * 2, x * 3
    assert first.grad_fn is not None and second.grad_fn is not None
    assert first.grad_fn._input_metadata is second.grad_fn._input_metadata
    assert first.grad_fn._input_metadata == (((2,), np.dtype("float64")),)
    matrix = gradgen.tensor([[1.0, 5.0]], requires_grad=True)
    values, indices = matrix.max(dim=1)
    assert values.grad_fn is not None and values.output_nr == 0
    assert indices.grad_fn is None  # integral: no history
    vector = gradgen.tensor([1.0, 2.0, 3.0], dtype=gradgen.float64, requires_grad=True)
    parts = vector.split(2)
    assert [p.output_nr for p in parts] == [0, 1]
    assert parts[0].grad_fn is parts[1].grad_fn
    assert parts[0].grad_fn is not None
    assert parts[0].grad_fn._input_metadata == (
        ((2,), np.dtype("float64")),
        ((1,), np.dtype("float64")),
    )


def test_a_recorded_chain_keeps_few_tracked_objects_per_op() -> None:
    s = gradgen.tensor(1.0, dtype=gradgen.float64, requires_grad=True)
    y = s * 1.5
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(1000):
        y = y * 1.5
    gc.collect()
    per_op = (len(gc.get_objects()) - before) / 1000
    # The node, its SavedVariable and its edges (a tuple of one (node, nr) pair).
    assert per_op <= 4.05
    y.backward()
    assert s.grad is not None and s.grad.item() == pytest.approx(1.5**1001)


def test_saved_input_modified_in_place_is_refused() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    c = gradgen.tensor([3.0, 4.0])
    y = x * c
    c.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: "):
        y.sum().backward()
    with pytest.raises(RuntimeError, match=r"is at version 1; expected version 0"):
        y.sum().backward()


def test_saved_output_modified_in_place_names_its_node() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    with gradgen.no_grad():
        y.mul_(2.0)
    with pytest.raises(
        RuntimeError, match=r"which is output 0 of Exp, is at version 1"
    ):
        y.sum().backward()


def test_saved_output_comes_back_with_its_history() -> None:
    x = gradgen.tensor([0.0, 1.0], requires_grad=True)
    y = x.exp()
    node: Any = y.grad_fn
    saved = node.result_.unpack(node)
    assert saved.grad_fn is node and saved.tolist() == pytest.approx([1.0, np.e])
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == pytest.approx([1.0, np.e])
    with pytest.raises(RuntimeError, match=r"backward through the graph a second"):
        y.sum().backward()


def test_saved_tensor_hooks_see_inputs_and_outputs() -> None:
    packed: list[list[float]] = []

    def pack(tensor: Tensor) -> Any:
        packed.append(tensor.tolist())
        return tensor

    x = gradgen.tensor([0.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(pack, lambda t: t):
        y = x.exp() * x  # exp saves its output, mul its two inputs
    assert len(packed) == 3
    y.sum().backward()
    # d/dx x e^x = (1 + x) e^x
    assert x.grad is not None
    assert x.grad.tolist() == pytest.approx([1.0, 3.0 * np.exp(2.0)])


def test_saved_output_keeps_its_tangent_under_forward_ad() -> None:
    x = gradgen.tensor([0.0, 1.0], requires_grad=True)
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(x, gradgen.tensor([1.0, 1.0]))
        y = dual.exp()
        node: Any = y.grad_fn
        saved = node.result_.unpack(node)
        tangent = forward_ad.unpack_dual(saved).tangent
        assert tangent is not None
        assert tangent.tolist() == pytest.approx([1.0, np.e])
