"""The lean backward (issue 14): inputs saved plain (no SavedVariable object unless
saved-tensor hooks are open), released slots, the engine's buffers of bare arrays and
numpy scalars, and what must not change: PyTorch's in-place error, hooks seeing every
save, retain_graph, double backward, memory freed after backward."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import engine
from gradgen.autograd.graph import saved_tensors_hooks
from gradgen.graph import ERR_BACKWARD_TWICE, RELEASED, Node, SavedVariable
from gradgen.helpers.arrays import tensor_forms_only
from gradgen.tensor import Tensor
from torch_oracle import oracle


def leaf(values: Any, dtype: Any = None) -> Tensor:
    return gradgen.tensor(values, dtype=dtype or gradgen.float64, requires_grad=True)


def _message(lib: Any, build: Any) -> str:
    """The error `build(lib)` raises, up to PyTorch's hint (which names the library)."""
    try:
        build(lib)
    except RuntimeError as error:
        text = str(error).split(" Hint:")[0]
        return text.replace("torch.", "LIB.").replace("gradgen.", "LIB.")
    raise AssertionError("no error")


# -- what a node keeps ----------------------------------------------------------------


def test_an_input_at_version_0_is_kept_as_itself() -> None:
    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    node: Any = (x * c).grad_fn
    assert node.other_ is c  # no SavedVariable object in between


def test_an_input_changed_before_the_save_is_kept_with_its_version() -> None:
    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    c.add_(1.0)
    c.mul_(2.0)
    node: Any = (x * c).grad_fn
    assert node.other_ == (c, 2)
    (x * c).sum().backward()  # unchanged since: no error
    assert x.grad.tolist() == [8.0, 10.0]


def test_outputs_stay_saved_variables() -> None:
    # exp saves its result: a SavedVariable without the grad_fn (no cycle).
    x = leaf([0.0, 1.0])
    node: Any = x.exp().grad_fn
    assert type(node.result_) is SavedVariable


def test_released_slots_hold_released_and_raise_pytorchs_error() -> None:
    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    y = (x * c).sum()
    node: Any = y.grad_fn._next_edges[0][0]
    y.backward()
    assert node.other_ is RELEASED and node.self_ is None
    with pytest.raises(RuntimeError) as error:
        node._saved_other
    assert str(error.value) == ERR_BACKWARD_TWICE


# -- PyTorch's in-place error ---------------------------------------------------------


def _modified_after_save(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    c = lib.tensor([3.0, 4.0], dtype=lib.float64)
    y = x * c
    c.add_(1.0)
    y.sum().backward()


def _modified_twice(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    c = lib.tensor([3.0, 4.0], dtype=lib.float64)
    c.add_(1.0)  # saved at version 1: kept as (c, 1)
    y = x * c
    c.mul_(2.0)
    y.sum().backward()


def _non_leaf_modified(lib: Any) -> None:
    x = lib.tensor(3.0, dtype=lib.float32, requires_grad=True)
    h = x * 2.0
    y = h**2
    h.add_(1.0)
    y.backward()


def _leaf_modified(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    y = (x * w).sum()
    with lib.no_grad():
        w.add_(1.0)
    y.backward()


@pytest.mark.parametrize(
    "build",
    [_modified_after_save, _modified_twice, _non_leaf_modified, _leaf_modified],
    ids=["after-save", "twice", "non-leaf", "leaf"],
)
def test_in_place_change_of_a_plain_saved_input_raises_pytorchs_error(
    build: Any,
) -> None:
    ours = _message(gradgen, build)
    assert ours == oracle("message", lambda torch: _message(torch, build))
    assert "modified by an inplace operation" in ours


def test_the_error_is_raised_by_the_tensor_form_too() -> None:
    with tensor_forms_only():
        ours = _message(gradgen, _modified_twice)
    assert "is at version 2; expected version 1 instead." in ours


# -- saved-tensor hooks ---------------------------------------------------------------


def _packed_count(lib: Any) -> list[Any]:
    packed: list[tuple[int, ...]] = []

    def pack(tensor: Any) -> Any:
        packed.append(tuple(tensor.shape))
        return tensor

    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    c = lib.tensor([3.0, 4.0], dtype=lib.float64)
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = (x * c) ** 2 + x.exp() * x
        z = c * x
    (y.sum() + z.sum()).backward()
    return [len(packed), x.grad]


def test_saved_tensor_hooks_see_every_save() -> None:
    ours = _packed_count(gradgen)
    theirs = oracle("count and grad", _packed_count)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1])


def test_under_hooks_the_node_keeps_saved_variables_and_unpacks_through_them() -> None:
    unpacked: list[int] = []

    def unpack(tensor: Tensor) -> Tensor:
        unpacked.append(1)
        return tensor

    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    with saved_tensors_hooks(lambda t: t, unpack):
        y = x * c
    assert type(y.grad_fn.other_) is SavedVariable  # type: ignore[union-attr]
    y2 = x * c  # outside: plain again
    assert y2.grad_fn.other_ is c  # type: ignore[union-attr]
    y.sum().backward()
    assert unpacked == [1] and x.grad.tolist() == [3.0, 4.0]


# -- retain_graph, double backward, create_graph --------------------------------------


def test_retain_graph_keeps_plain_saves_and_a_second_backward_needs_it() -> None:
    x, c = leaf([1.0, 2.0]), gradgen.tensor([3.0, 4.0])
    y = (x * c * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [12.0, 32.0]  # twice 2*c*x = [6, 16]
    with pytest.raises(RuntimeError) as error:
        y.backward()
    assert str(error.value) == ERR_BACKWARD_TWICE


def test_double_backward_and_create_graph_are_unchanged() -> None:
    x = leaf(2.0)
    (g,) = gradgen.autograd.grad(x**3, x, create_graph=True)
    assert g.item() == 12.0 and g.requires_grad
    (gg,) = gradgen.autograd.grad(g, x)
    assert gg.item() == 12.0  # 6 * x
    y = leaf([1.0, 2.0])
    with pytest.warns(UserWarning):
        (y * y).sum().backward(create_graph=True)
    assert y.grad.requires_grad and y.grad.tolist() == [2.0, 4.0]


# -- numpy scalars between nodes ------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_d_chains_hand_on_numpy_scalars_with_the_tensor_forms_bits(
    dtype: str,
) -> None:
    def run() -> tuple[Any, Any]:
        a = leaf(2.0, getattr(gradgen, dtype))
        b = leaf(6.0, getattr(gradgen, dtype))
        q = 3 * a**3 - b**2 * 1.1 - a * b
        q.backward()
        return a.grad, b.grad

    ga, gb = run()
    with tensor_forms_only():
        ta, tb = run()
    for ours, reference in ((ga, ta), (gb, tb)):
        assert type(ours._data) is np.ndarray and ours._data.dtype == dtype
        assert ours._data.tobytes() == reference._data.tobytes()
    assert ga.item() == pytest.approx(36 - 6) and gb.item() == pytest.approx(-13.2 - 2)


def test_scalar_gradients_meet_array_gradients_at_one_node() -> None:
    x = leaf(3.0)
    v = leaf([1.0, 2.0])
    y = (x * 2.0) * 1.5  # 0-d chain: numpy scalars
    z = (v * y).sum() + y * 4.0  # the two meet at y's node
    z.backward()
    assert x.grad.item() == 3.0 * (3.0 + 4.0) and v.grad.tolist() == [9.0, 9.0]


def test_hooks_and_retain_grad_see_tensors_of_scalar_gradients() -> None:
    x = leaf(2.0)
    h = x * 3.0
    h.retain_grad()
    seen: list[Any] = []
    h.register_hook(lambda g: seen.append(type(g)))
    (h * h).backward()
    assert seen == [Tensor] and h.grad.item() == 12.0 and x.grad.item() == 36.0


# -- memory and the engine ------------------------------------------------------------


def test_saved_tensors_are_freed_by_backward() -> None:
    x = leaf([1.0, 2.0])
    h = x * 2.0
    alive = weakref.ref(h)
    y = (h * h).sum()  # saves h (twice), plainly
    del h
    assert alive() is not None
    y.backward()
    assert alive() is None  # no reference left once the node released it
    del y
    gc.collect()


def test_graph_task_knows_every_node_reached() -> None:
    x = leaf([1.0, 2.0])
    y = (x * 2.0).sum()
    task = engine.GraphTask(False)
    engine.compute_dependencies(y.grad_fn, task)  # type: ignore[arg-type]
    mul = y.grad_fn._next_edges[0][0]  # type: ignore[union-attr]
    assert task.in_graph(y.grad_fn) and task.in_graph(mul)  # type: ignore[arg-type]
    assert not task.in_graph((x * 3.0).grad_fn)  # type: ignore[arg-type]


def test_only_overridden_release_methods_are_called() -> None:
    calls: list[str] = []

    class Releasing(Node):
        __slots__ = ()

        def apply(self, grads: Any) -> list[Any]:
            return [grads[0]]

        def release_variables(self) -> None:
            calls.append("release")

    class Plain(Node):
        __slots__ = ()

    assert Releasing._releases and not Releasing._will_release
    assert not Plain._releases and not Plain._will_release
    x = leaf(1.0)
    node = Releasing()
    node.set_next_edges(((x._get_grad_accumulator(), 0),))
    node._input_metadata = ((x._data.shape, x._data.dtype),)
    engine.execute(
        [engine.Edge(node, 0)],
        [gradgen.tensor(2.0, dtype=gradgen.float64)],
        False,
        False,
    )
    assert calls == ["release"] and x.grad.item() == 2.0
