"""The recorded forward op of session 10's second wave ("fwd2"):

- the fast paths build their Backward node without its `__init__` frames
  (`new_object`, then Node's fields and the class's own, as `__init__` sets them);
  anomaly mode, whose nodes record the forward's stack, takes the general path;
- the kernel below Autograd is looked up only where it is called, and the inline
  history reads the result's array and dtype from the inline kernel.

Each node is compared slot by slot with the one the general path (the dispatcher and
the VariableType wrapper) builds for the same call; values against hand math.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.autograd.forward_ad as fwAD
from gradgen import dispatch
from gradgen.generated import functions, operators, variable_type
from node_slots import set_slots
from gradgen.saved_variable import SavedVariable


def _general(handle: dispatch.OperatorHandle, *args: Any) -> gradgen.Tensor:
    """The same call through the dispatcher and the VariableType wrapper."""
    return handle.call(*args)  # type: ignore[no-any-return]


def _leaf(values: object) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=True)


CASES = [
    ("mul", lambda x, y: (operators.mul_Tensor, (x, y))),
    ("add", lambda x, y: (operators.add_Tensor, (x, y, 1))),
    ("sub", lambda x, y: (operators.sub_Tensor, (x, y, 2))),
    ("pow_scalar", lambda x, y: (operators.pow_Tensor_Scalar, (x, 3))),
    ("exp", lambda x, y: (operators.exp, (x,))),
    ("mul_one_leaf", lambda x, y: (operators.mul_Tensor, (x, y.detach()))),
]


@pytest.mark.parametrize("name, make", CASES, ids=[c[0] for c in CASES])
def test_the_fast_paths_node_has_every_slot_of_the_constructed_one(
    name: str, make: Any
) -> None:
    x = _leaf([1.5, -2.0, 0.25])
    y = _leaf([3.0, 0.5, -4.0])
    handle, args = make(x, y)
    assert handle.fast is not handle.call  # the operator has a generated fast path
    fast = handle.fast(*args)
    general = _general(handle, *args)
    fast_slots = set_slots(fast.grad_fn)
    general_slots = set_slots(general.grad_fn)
    assert type(fast.grad_fn) is type(general.grad_fn)
    # Numbered in creation order from the one counter: the later node runs first.
    assert (
        general_slots.pop("_sequence_number") > fast_slots.pop("_sequence_number") >= 0
    )
    assert fast_slots.keys() == general_slots.keys()
    for slot, value in general_slots.items():
        other = fast_slots[slot]
        if isinstance(value, SavedVariable):  # an output saved: each its own
            assert type(other) is SavedVariable, slot
            assert other._output == value._output, slot
            saved, expected = other.unpack(fast.grad_fn), value.unpack(general.grad_fn)
            assert saved.tolist() == expected.tolist(), slot
        elif isinstance(value, gradgen.Tensor):
            assert other is value or other.tolist() == value.tolist(), slot
        else:
            assert other == value, slot
    assert fast.tolist() == general.tolist()


def test_a_saved_variable_slot_the_guard_skips_is_none_as_init_sets_it() -> None:
    # x * c with c not requiring grad: `self_` (used only for c's gradient) is not
    # saved, and reads None as the constructor leaves it.
    x = _leaf([2.0, 3.0])
    c = gradgen.tensor([5.0, 7.0], dtype=gradgen.float64)
    node = (x * c).grad_fn
    assert isinstance(node, functions.MulBackward0)
    assert node.self_ is None and node.other_ is c
    assert node._extras is None and node._num_edges == 2 and node._fn1 is None
    y = x * c
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [5.0, 7.0]


def test_a_new_output_shape_takes_set_history_with_empty_metadata_first() -> None:
    # A shape no op has produced yet misses ONE_OUTPUT_METADATA: set_history enters it.
    x = _leaf(np.arange(1.0, 1.0 + 3 * 7 * 11 * 13).reshape(3, 7, 11, 13))
    y = x * x
    assert y.grad_fn is not None
    assert y.grad_fn._input_metadata == (((3, 7, 11, 13), np.dtype(np.float64)),)
    y.sum().backward()
    assert x.grad is not None
    assert np.array_equal(x.grad.numpy(), 2 * x.detach().numpy())


def test_anomaly_mode_records_the_forward_stack_through_the_general_path() -> None:
    x = _leaf([1.0, 2.0])
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with gradgen.autograd.detect_anomaly():
            y = x * x
            z = x - 0.5
    for result in (y, z):
        assert result.grad_fn is not None
        stack = result.grad_fn.metadata["traceback_"]
        assert any("test_fwd2_s10.py" in line for line in stack)
    # Outside it, no metadata and no extras object.
    w = x * x
    assert w.grad_fn is not None and w.grad_fn._extras is None


def test_no_grad_and_an_untracked_call_still_return_the_kernels_result() -> None:
    x = gradgen.tensor([1.0, -2.0], dtype=gradgen.float64)
    assert variable_type.fast_mul_Tensor(x, x).grad_fn is None
    with gradgen.no_grad():
        y = _leaf([3.0, 4.0])
        out = variable_type.fast_mul_Tensor(y, y)
    assert out.grad_fn is None and out.tolist() == [9.0, 16.0]


def test_zero_d_results_keep_their_bits_and_history() -> None:
    # W1's shape: 0-d float64 leaves; values by hand.
    a = gradgen.tensor(2.0, dtype=gradgen.float64, requires_grad=True)
    b = gradgen.tensor(6.0, dtype=gradgen.float64, requires_grad=True)
    q = 3 * a**3 - b**2
    assert q.item() == 3 * 8.0 - 36.0
    assert q.grad_fn is not None and q.grad_fn._input_metadata[0][0] == ()
    q.backward()
    assert a.grad is not None and b.grad is not None
    assert a.grad.item() == 36.0 and b.grad.item() == -12.0


# -- the fused dunders: `x + y`, `x - y`, `x * y` --------------------------------------


def test_the_binary_operators_are_the_fused_dunders() -> None:
    assert gradgen.Tensor.__mul__ is variable_type.dunder_mul_Tensor
    assert gradgen.Tensor.__rmul__ is variable_type.dunder_mul_Tensor
    assert gradgen.Tensor.__add__ is variable_type.dunder_add_Tensor
    assert gradgen.Tensor.__radd__ is variable_type.dunder_add_Tensor
    assert gradgen.Tensor.__sub__ is variable_type.dunder_sub_Tensor


@pytest.mark.parametrize(
    "other", [2.5, 3, True, gradgen.tensor([0.5, -1.0], dtype=gradgen.float64)]
)
def test_the_fused_dunders_match_the_methods(other: Any) -> None:
    x = _leaf([1.5, -2.0])
    pairs = [
        (x * other, x.mul(other)),
        (other * x, x.mul(other)),
        (x + other, x.add(other)),
        (other + x, x.add(other)),
    ]
    if other is True:  # PyTorch's sub refuses a bool operand, either way
        for sub in (lambda: x - other, lambda: x.sub(other)):
            with pytest.raises(RuntimeError, match="^Subtraction, the `-` operator"):
                sub()
    else:
        pairs.append((x - other, x.sub(other)))
    for fused, method in pairs:
        assert fused.dtype is method.dtype
        assert np.array_equal(fused.detach().numpy(), method.detach().numpy())
        assert type(fused.grad_fn) is type(method.grad_fn)


def test_the_fused_dunders_keep_the_bindings_errors_and_modes() -> None:
    x = _leaf([1.0, 2.0])
    with pytest.raises(TypeError, match=r"argument 'other' \(position 1\) must be"):
        x * "a"
    with pytest.raises(TypeError, match=r"argument 'other' \(position 1\) must be"):
        x - [1.0]
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match"):
        x + gradgen.ones(3)
    # A bool tensor minus a bool tensor: the kernel's (PyTorch's) error.
    flags = gradgen.tensor([True, False])
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator"):
        flags - flags
    # The profiler sees the call (the dispatcher's detour), under no_grad nothing records.
    with gradgen.profiler.profile() as prof:
        x * x
    assert any(event.name == "aten::mul" for event in prof.events())
    with gradgen.no_grad():
        assert (x + 1).grad_fn is None
    # Forward AD: the tangent of x * x is 2 * x * t.
    with fwAD.dual_level():
        dual = fwAD.make_dual(
            gradgen.tensor([3.0]), gradgen.tensor([1.0], dtype=gradgen.float32)
        )
        tangent = fwAD.unpack_dual(dual * dual).tangent
    assert tangent is not None and tangent.tolist() == [6.0]


# -- overloaded bindings and the leaf's accumulator ------------------------------------


def test_an_overloaded_binding_calls_the_fast_path() -> None:
    # x.sum() and x.mean() resolve an overload, then call the operator's fast path
    # (which hands every mode to the dispatcher): the result records SumBackward0.
    x = _leaf([1.0, 2.0, 4.0])
    total = x.sum()
    assert type(total.grad_fn).__name__ == "SumBackward0" and total.item() == 7.0
    assert x.mean().item() == 7.0 / 3
    assert gradgen.sum(x, 0).item() == 7.0
    with gradgen.profiler.profile() as prof:
        x.sum()
    assert any(event.name == "aten::sum" for event in prof.events())


def test_a_leaf_gets_one_accumulator_per_graph_and_the_same_one_within() -> None:
    x = _leaf([1.0, 2.0])
    first = x * 2.0
    second = x * 3.0
    assert first.grad_fn is not None and second.grad_fn is not None
    node = first.grad_fn._fn0
    assert node is second.grad_fn._fn0 and node is x._get_grad_accumulator()
    assert type(node).__name__ == "AccumulateGrad" and node.variable is x
    (first + second).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [5.0, 5.0]
    del first, second, node
    # Held weakly, as PyTorch's: the next graph gets a new one.
    assert x._grad_accumulator is not None and x._grad_accumulator() is None
    assert gradgen.tensor([1.0])._get_grad_accumulator() is None


def _tensor_slots(tensor: gradgen.Tensor) -> dict[str, Any]:
    return {
        name: getattr(tensor, name, None)  # a leaf's `_accumulator_mutex`: unset
        for name in gradgen.Tensor.__slots__
        if name not in ("__weakref__", "_data", "_grad_fn")
    }


@pytest.mark.parametrize("shape", [(), (3,)])
def test_the_inline_result_tensor_has_the_fields_init_gives(shape: tuple[int]) -> None:
    x = gradgen.tensor(np.full(shape, 1.5), requires_grad=True)
    reference = _tensor_slots(gradgen.Tensor(np.zeros(shape)))
    for result in (x * x, x + 0.5, x - x, x**3, x * 2):
        assert type(result._data) is np.ndarray and result._data.shape == shape
        assert _tensor_slots(result) == reference
