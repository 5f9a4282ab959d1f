"""The generated forward fast paths (issue 14): `operators.NAME.fast`, which an
operator's bindings call, does the common case in one frame and hands every other call
to the dispatcher. Each test checks which path ran (by counting calls of the Autograd
kernel in the dispatch table, which only the dispatcher's path enters) and that the
results are the ones the dispatcher's path gives; values are hand-computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import dispatch
from gradgen.autograd import forward_ad
from gradgen.autograd.graph import saved_tensors_hooks
from gradgen.dispatch import ALL_KEYS, OperatorHandle
from gradgen.generated import operators, variable_type
from gradgen.tensor import Tensor


class _Counter:
    """Counts the calls of one operator's Autograd kernel (the dispatcher's path)."""

    def __init__(self, handle: OperatorHandle) -> None:
        self.calls = 0
        kernel = handle._table[ALL_KEYS]
        assert kernel is not None

        def counting(*args: Any) -> Any:
            self.calls += 1
            return kernel(*args)

        self.counting = counting


@pytest.fixture
def mul_calls() -> Iterator[_Counter]:
    table = operators.mul_Tensor._table
    original = table[ALL_KEYS]
    counter = _Counter(operators.mul_Tensor)
    table[ALL_KEYS] = counter.counting
    try:
        yield counter
    finally:
        table[ALL_KEYS] = original


@pytest.fixture
def observed() -> Iterator[list[str]]:
    """A dispatcher observer (the profiler's hook) that records operator names."""
    names: list[str] = []

    def observer(handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        names.append(handle.name)
        return handle.call_unobserved(*args)

    dispatch.observe_calls(observer)
    try:
        yield names
    finally:
        dispatch.observe_calls(None)


def _leaves() -> tuple[Tensor, Tensor]:
    x = gradgen.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = gradgen.tensor([4.0, 5.0, 6.0], requires_grad=True)
    return x, y


# -- which operators have one --------------------------------------------------------


def test_recording_operators_have_a_fast_path() -> None:
    assert operators.mul_Tensor.fast is variable_type.fast_mul_Tensor
    assert operators.add_Tensor.fast is variable_type.fast_add_Tensor
    assert operators.exp.fast is variable_type.fast_exp


def test_views_keep_the_dispatcher() -> None:
    # They need the ADInplaceOrView layer (view bookkeeping).
    for handle in (operators.view, operators.transpose_int):
        assert handle.fast == handle.call
        assert not hasattr(variable_type, "fast_" + handle.name.replace(".", "_"))


def test_inplace_operators_have_a_no_grad_fast_path() -> None:
    # Under no_grad (an optimizer's update) only; recording goes to the dispatcher.
    assert operators.add__Tensor.fast is variable_type.fast_add__Tensor
    assert operators.sub__Tensor.fast is variable_type.fast_sub__Tensor


def test_every_fast_path_is_registered_on_its_own_operator() -> None:
    fast = [name for name in vars(variable_type) if name.startswith("fast_")]
    assert len(fast) > 300
    for name in fast:
        assert getattr(operators, name[len("fast_") :]).fast is getattr(
            variable_type, name
        )


# -- the common case takes it ----------------------------------------------------------


def test_a_recorded_op_takes_the_fast_path(mul_calls: _Counter) -> None:
    x, y = _leaves()
    z = x * y
    w = gradgen.mul(x, z)
    assert mul_calls.calls == 0
    assert type(z.grad_fn).__name__ == "MulBackward0"
    assert [f for f, _ in z.grad_fn.next_functions] == [
        x._get_grad_accumulator(),
        y._get_grad_accumulator(),
    ]
    w.sum().backward()
    # w = x * x * y: dw/dx = 2 x y, dw/dy = x^2
    assert x.grad.tolist() == [8.0, 20.0, 36.0]
    assert y.grad.tolist() == [1.0, 4.0, 9.0]


def test_no_grad_and_inputs_without_grad_take_the_fast_path(
    mul_calls: _Counter,
) -> None:
    x, y = _leaves()
    with gradgen.no_grad():
        z = x * y
    c = gradgen.tensor([1.0, 2.0, 3.0]) * 2.0
    assert mul_calls.calls == 0
    assert z.grad_fn is None and not z.requires_grad
    assert c.grad_fn is None and c.tolist() == [2.0, 4.0, 6.0]


def test_views_as_inputs_record_through_the_fast_path(mul_calls: _Counter) -> None:
    base = gradgen.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    v = base * 1.0
    head = v[:2]
    (head * head).sum().backward()
    assert mul_calls.calls == 0
    assert base.grad.tolist() == [2.0, 4.0, 0.0, 0.0]


# -- modes take the dispatcher's path --------------------------------------------------


def test_forward_ad_takes_the_dispatcher(mul_calls: _Counter) -> None:
    x, y = _leaves()
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(x.detach(), gradgen.tensor([1.0, 0.0, 2.0]))
        z = dual * y
        tangent = forward_ad.unpack_dual(z).tangent
    calls = mul_calls.calls
    assert calls >= 1  # the op, and the JVP's own products
    assert tangent.tolist() == [4.0, 0.0, 12.0]  # tangent * y
    assert type(z.grad_fn).__name__ == "MulBackward0"  # y requires grad
    z2 = x * y  # the level closed: the fast path again
    assert mul_calls.calls == calls and z2.grad_fn is not None


def test_an_observer_takes_the_dispatcher(
    mul_calls: _Counter, observed: list[str]
) -> None:
    x, y = _leaves()
    z = x * y
    assert mul_calls.calls == 1
    assert "mul.Tensor" in observed
    z.sum().backward()
    assert x.grad.tolist() == [4.0, 5.0, 6.0]


def test_the_profiler_sees_fast_path_operators() -> None:
    x, y = _leaves()
    with gradgen.autograd.profiler.profile() as prof:
        x * y
    assert "aten::mul" in [event.name for event in prof.function_events]


def test_vmap_takes_the_dispatcher(mul_calls: _Counter) -> None:
    batch = gradgen.tensor([[1.0, 2.0], [3.0, 4.0]])
    other = gradgen.tensor([10.0, 20.0], requires_grad=True)
    out = gradgen.func.vmap(lambda row: row * other)(batch)
    assert mul_calls.calls >= 1
    assert out.tolist() == [[10.0, 40.0], [30.0, 80.0]]
    out.sum().backward()
    assert other.grad.tolist() == [4.0, 6.0]


def test_anomaly_mode_records_the_forward_trace_on_the_fast_path() -> None:
    x, y = _leaves()
    with gradgen.autograd.detect_anomaly():
        z = x * y
    assert z.grad_fn._metadata is not None and "traceback_" in z.grad_fn._metadata
    with gradgen.autograd.detect_anomaly():
        bad = gradgen.tensor([0.0], requires_grad=True)
        r = bad.sqrt() * 0.0
        with pytest.raises(RuntimeError, match="returned nan values"):
            (r / r).sum().backward()


# -- what was recorded on the fast path works when a mode is turned on later ------------


def test_hooks_registered_after_the_ops_ran() -> None:
    x, y = _leaves()
    z = x * y
    seen: list[list[float]] = []
    z.register_hook(lambda g: seen.append(g.tolist()))
    z.grad_fn.register_hook(lambda inputs, outputs: None)
    (z * 2.0).sum().backward()
    assert seen == [[2.0, 2.0, 2.0]]
    assert x.grad.tolist() == [8.0, 10.0, 12.0]


def test_forward_ad_opened_after_the_ops_ran() -> None:
    x, y = _leaves()
    z = x * y
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(z.detach(), gradgen.tensor([1.0, 1.0, 1.0]))
        w = dual * 3.0
        assert forward_ad.unpack_dual(w).tangent.tolist() == [3.0, 3.0, 3.0]
    z.sum().backward()
    assert y.grad.tolist() == [1.0, 2.0, 3.0]


def test_vmap_after_the_ops_ran() -> None:
    x, y = _leaves()
    z = x * y
    scaled = gradgen.func.vmap(lambda v: v * 2.0)(z.detach())
    assert scaled.tolist() == [8.0, 20.0, 36.0]
    z.sum().backward()
    assert x.grad.tolist() == [4.0, 5.0, 6.0]


def test_saved_tensor_hooks_see_the_fast_path_saves(mul_calls: _Counter) -> None:
    packed: list[list[float]] = []

    def pack(t: Tensor) -> Tensor:
        packed.append(t.tolist())
        return t

    x, y = _leaves()
    with saved_tensors_hooks(pack, lambda t: t):
        z = x * y
    assert mul_calls.calls == 0
    assert sorted(packed) == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    z.sum().backward()
    assert x.grad.tolist() == [4.0, 5.0, 6.0]


def test_anomaly_turned_on_after_the_ops_ran() -> None:
    x = gradgen.tensor([-1.0], requires_grad=True)
    r = x.sqrt() * 1.0  # nan
    with gradgen.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="returned nan values"):
            (r * 0.0).sum().backward(retain_graph=True)


def test_modified_saved_input_is_still_caught() -> None:
    x, y = _leaves()
    a = x * 1.0
    z = a * y
    a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# -- the same results as the dispatcher's path -----------------------------------------


def _cases() -> list[tuple[str, Callable[[Tensor, Tensor], Tensor]]]:
    return [
        ("mul", lambda a, b: a * b),
        ("add alpha", lambda a, b: gradgen.add(a, b, alpha=2.5)),
        ("sub number", lambda a, b: a - 0.5),
        ("rsub number", lambda a, b: 0.5 - a),
        ("div", lambda a, b: a / b),
        ("pow scalar", lambda a, b: a**3),
        ("pow tensor", lambda a, b: a.abs() ** b),
        ("exp", lambda a, b: a.exp()),
        ("sum", lambda a, b: (a * b).sum()),
        ("matmul", lambda a, b: a @ b),
        ("broadcast", lambda a, b: a * b[:1]),
        ("mixed dtypes", lambda a, b: a * b.to(gradgen.float32)),
        ("integer other", lambda a, b: a * gradgen.tensor([1, 2, 3])),
    ]


@pytest.mark.parametrize("name, fn", _cases(), ids=[c[0] for c in _cases()])
def test_fast_and_dispatcher_paths_agree(
    name: str, fn: Callable[[Tensor, Tensor], Tensor], observed: list[str]
) -> None:
    def run() -> tuple[np.ndarray, np.ndarray, np.ndarray, str, str]:
        x = gradgen.tensor([0.5, -1.25, 2.0], requires_grad=True)
        y = gradgen.tensor([3.0, 0.75, -1.5], requires_grad=True)
        out = fn(x, y)
        out.backward(gradgen.ones_like(out))
        grads = [
            np.zeros(3) if t.grad is None else t.grad.numpy().copy() for t in (x, y)
        ]
        return (
            out.detach().numpy().copy(),
            grads[0],
            grads[1],
            type(out.grad_fn).__name__,
            str(out.dtype),
        )

    dispatch.observe_calls(None)  # the fast path
    fast = run()
    dispatch.observe_calls(lambda h, a: h.call_unobserved(*a))
    slow = run()
    for a, b in zip(fast[:3], slow[:3]):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert fast[3:] == slow[3:]


def test_errors_are_the_dispatchers(observed: list[str]) -> None:
    def message() -> str:
        x = gradgen.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            x * gradgen.ones(4)
        return str(info.value)

    slow = message()
    dispatch.observe_calls(None)
    fast = message()
    assert fast == slow
    assert "must match the size of tensor b (4)" in fast


def test_integer_results_get_no_history() -> None:
    x = gradgen.tensor([1, 2, 3])
    z = x * x
    assert z.grad_fn is None and z.tolist() == [1, 4, 9]
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        gradgen.tensor([1, 2]).requires_grad_()
