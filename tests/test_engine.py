"""The backward engine: graph shapes, retain_graph, freeing, hooks, grad(), errors."""

from __future__ import annotations

import gc
import threading
import time
import weakref

import numpy as np
import pytest

import gradgen
from gradgen import autograd
from gradgen.graph import Node
from gradgen.variable_type_utils import collect_next_edges, set_history


def leaf(values, dtype=gradgen.float64):
    return gradgen.tensor(values, dtype=dtype, requires_grad=True)


def test_diamond_adds_both_paths() -> None:
    x = leaf(3.0)
    y = x * 2.0
    z = (y * 3.0) + (y * 4.0)  # dz/dx = 2 * (3 + 4)
    z.backward()
    assert x.grad.item() == 14.0


def test_leaf_used_twice() -> None:
    x = leaf([1.0, -2.0, 3.0])
    (x * x).backward(gradient=gradgen.ones(3, dtype=gradgen.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0, 6.0])
    x.grad = None
    (x + x).backward(gradient=gradgen.ones(3, dtype=gradgen.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_retain_graph_allows_a_second_backward_and_grads_accumulate() -> None:
    x = leaf(2.0)
    y = x**3
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 2 * 12.0
    with pytest.raises(
        RuntimeError, match="^Trying to backward through the graph a second time"
    ):
        y.backward()


def test_graph_that_saves_nothing_can_be_run_twice() -> None:
    # As PyTorch: AddBackward0 keeps only scalars and dtypes, which survive release.
    x = leaf(1.0)
    y = x + 1.0
    y.backward()
    y.backward()
    assert x.grad.item() == 2.0


def test_grad_accumulates_in_place_into_the_same_tensor() -> None:
    x = leaf([1.0, 2.0])
    (x * 2.0).backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    first = x.grad
    (x * 3.0).backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    assert x.grad is first
    np.testing.assert_array_equal(first.numpy(), [5.0, 5.0])


def test_grad_does_not_alias_the_users_gradient() -> None:
    x = leaf([1.0, 2.0])
    g = gradgen.tensor([1.0, 1.0], dtype=gradgen.float64)
    (x + 0.0).backward(gradient=g)
    (x + 0.0).backward(gradient=g)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_later_created_nodes_run_first() -> None:
    x = leaf(1.0)
    order: list[str] = []
    branches = []
    for name in ("first", "second", "third"):
        branch = x * 1.0
        branch.grad_fn.register_prehook(lambda grads, name=name: order.append(name))
        branches.append(branch)
    (branches[0] + branches[1] + branches[2]).backward()
    assert order == ["third", "second", "first"]


def test_broadcast_gradients_are_reduced_to_the_input_shape() -> None:
    a = leaf(np.arange(3.0).reshape(3, 1))
    b = leaf(np.arange(4.0).reshape(1, 4))
    (a * b).backward(gradient=gradgen.ones(3, 4, dtype=gradgen.float64))
    np.testing.assert_array_equal(a.grad.numpy(), np.full((3, 1), 6.0))  # sum of b
    np.testing.assert_array_equal(b.grad.numpy(), np.full((1, 4), 3.0))  # sum of a
    assert a.grad.shape == (3, 1) and b.grad.shape == (1, 4)


def test_a_float64_gradient_into_a_float32_graph_is_cast() -> None:
    x = leaf([1.0, 2.0], dtype=gradgen.float32)
    y = x * 2.0
    y.backward(gradient=gradgen.tensor([1.0, 1.0], dtype=gradgen.float64))
    assert x.grad.dtype == gradgen.float32


def test_calling_a_node_directly_returns_one_gradient_per_edge() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    grad_x, grad_other = y.grad_fn(gradgen.ones(3, dtype=gradgen.float64))
    np.testing.assert_array_equal(grad_x.numpy(), [2.0, 2.0, 2.0])
    assert grad_other is None


# -- freeing ------------------------------------------------------------------------------


def test_saved_tensors_are_released_after_backward() -> None:
    x = leaf([1.0, 2.0])
    h = x * 2.0
    y = h * h  # MulBackward0 saves h twice (self and other)
    alive = weakref.ref(h)
    del h
    assert alive() is not None  # kept by the saved variables
    y.backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    assert alive() is None, "backward must release what the graph saved"
    with pytest.raises(
        RuntimeError, match="Trying to backward through the graph a second time"
    ):
        y.grad_fn._saved_self


def test_graph_is_freed_by_reference_counting_when_its_output_is_dropped() -> None:
    x = leaf([1.0, 2.0])
    gc.collect()
    gc.disable()
    try:
        y = (x * 3.0) ** 2
        nodes = [weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.next_functions[0][0])]
        del y
        assert [n() for n in nodes] == [None, None]
    finally:
        gc.enable()


def test_leaf_does_not_keep_its_accumulator_alive() -> None:
    x = leaf(1.0)
    y = x * 2.0
    accumulator = weakref.ref(y.grad_fn.next_functions[0][0])
    del y
    assert accumulator() is None


# -- hooks --------------------------------------------------------------------------------


def test_tensor_hook_can_replace_the_gradient_and_be_removed() -> None:
    x = leaf(1.0)
    y = x * 2.0
    seen = []
    handle = y.register_hook(lambda g: seen.append(g.item()) or g * 10.0)
    y.backward(retain_graph=True)
    assert seen == [1.0] and x.grad.item() == 20.0
    handle.remove()
    y.backward()
    assert x.grad.item() == 22.0


def test_leaf_hook_runs_before_accumulation() -> None:
    x = leaf(1.0)
    x.register_hook(lambda g: g * 0.5)
    (x * 4.0).backward()
    assert x.grad.item() == 2.0


def test_node_pre_and_post_hooks() -> None:
    x = leaf(3.0)
    y = x * 2.0
    calls = []
    y.grad_fn.register_prehook(
        lambda grad_outputs: calls.append(("pre", grad_outputs[0].item()))
    )
    y.grad_fn.register_hook(
        lambda grad_inputs, grad_outputs: calls.append(("post", grad_inputs[0].item()))
    )
    y.backward()
    assert calls == [("pre", 1.0), ("post", 2.0)]


def test_hook_that_changes_the_size_is_an_error() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.register_hook(lambda g: gradgen.ones(3, dtype=gradgen.float64))
    with pytest.raises(
        RuntimeError, match="^hook '<lambda>' has changed the size of value$"
    ):
        y.backward(gradient=gradgen.ones(2, dtype=gradgen.float64))


def test_retain_grad_keeps_a_non_leaf_gradient() -> None:
    x = leaf(2.0)
    h = x * 3.0
    h.retain_grad()
    (h * h).backward()
    assert h.grad.item() == 12.0  # 2h
    assert h.retains_grad and not x.retains_grad


def test_non_leaf_grad_warns() -> None:
    h = leaf(1.0) * 2.0
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert h.grad is None


# -- grad() -------------------------------------------------------------------------------


def test_grad_returns_gradients_and_leaves_dot_grad_alone() -> None:
    x, w = leaf(2.0), leaf(5.0)
    gx, gw = autograd.grad(x * w, (x, w))
    assert (gx.item(), gw.item()) == (5.0, 2.0)
    assert x.grad is None and w.grad is None


def test_grad_runs_only_the_needed_part_of_the_graph() -> None:
    x, w = leaf(2.0), leaf(5.0)
    ran = []
    unneeded = w * 3.0
    unneeded.grad_fn.register_prehook(lambda g: ran.append("w-branch"))
    (gx,) = autograd.grad(x * 2.0 + unneeded, x)
    assert gx.item() == 2.0 and ran == []


def test_grad_with_an_unused_input() -> None:
    x, unused = leaf(2.0), leaf(1.0)
    with pytest.raises(RuntimeError) as raised:
        autograd.grad(x * 2.0, (x, unused))
    assert str(raised.value) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )
    assert autograd.grad(x * 2.0, (x, unused), allow_unused=True)[1] is None
    zeros = autograd.grad(x * 2.0, (x, unused), materialize_grads=True)[1]
    assert zeros.item() == 0.0


def test_second_order_with_create_graph() -> None:
    x = leaf(2.0)
    (dx,) = autograd.grad(x**3, x, create_graph=True)
    (ddx,) = autograd.grad(dx, x, create_graph=True)
    (dddx,) = autograd.grad(ddx, x)
    assert (dx.item(), ddx.item(), dddx.item()) == (12.0, 12.0, 6.0)


def test_backward_with_inputs_accumulates_only_there() -> None:
    x, w = leaf(2.0), leaf(5.0)
    (x * w).backward(inputs=[w])
    assert w.grad.item() == 2.0 and x.grad is None


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: (leaf([1.0, 2.0]) * 2.0).backward(),
            RuntimeError,
            "grad can be implicitly created only for scalar outputs",
        ),
        (
            lambda: gradgen.tensor(1.0).backward(),
            RuntimeError,
            "element 0 of tensors does not require grad and does not have a grad_fn",
        ),
        (
            lambda: (leaf([1.0, 2.0, 3.0]) * 2.0).backward(gradient=gradgen.ones(4)),
            RuntimeError,
            "Mismatch in shape: grad_output[0] has a shape of gradgen.Size([4]) and "
            "output[0] has a shape of gradgen.Size([3]).",
        ),
        (
            lambda: (leaf(1.0) * 2.0).backward(gradient=1),
            TypeError,
            "gradients can be either Tensors or None, but got int",
        ),
        (
            lambda: autograd.grad(leaf(1.0) * 2.0, []),
            RuntimeError,
            "`inputs` argument to `grad()` cannot be empty.",
        ),
        (
            lambda: autograd.grad(leaf(1.0) * 2.0, gradgen.tensor(1.0)),
            RuntimeError,
            "One of the differentiated Tensors does not require grad",
        ),
        (
            lambda: autograd.grad(
                [leaf(1.0) * 2.0], [leaf(1.0)], grad_outputs=[None, None]
            ),
            RuntimeError,
            "got 1 tensors and 2 gradients",
        ),
        (
            lambda: gradgen.tensor([1, 2], requires_grad=True),
            RuntimeError,
            "Only Tensors of floating point and complex dtype can require gradients",
        ),
        (
            lambda: (leaf(1.0) * 2.0).numpy(),
            RuntimeError,
            "Can't call numpy() on Tensor that requires grad. Use "
            "tensor.detach().numpy() instead.",
        ),
    ],
)
def test_error_messages(call, error, message) -> None:
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value) == message


class WrongShapeBackward(Node):
    """A node whose gradient cannot be reduced to its input's shape."""

    def apply(self, grads):
        return [gradgen.ones(4, dtype=gradgen.float64)]


def test_node_returning_a_shape_that_cannot_be_reduced() -> None:
    x = leaf([1.0, 2.0, 3.0])
    node = WrongShapeBackward()
    node.set_next_edges(collect_next_edges(x))
    y = gradgen.Tensor(np.ones(3))
    set_history(y, node)
    with pytest.raises(RuntimeError) as raised:
        y.backward(gradient=gradgen.ones(3, dtype=gradgen.float64))
    assert str(raised.value) == (
        "Function WrongShapeBackward returned an invalid gradient at index 0 - got [4] "
        "but expected shape compatible with [3]"
    )


def test_node_returning_the_wrong_number_of_gradients() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    y.grad_fn.register_prehook(lambda grads: None)
    bad = WrongShapeBackward()
    bad.set_next_edges(collect_next_edges(x, x))
    z = gradgen.Tensor(np.ones(3))
    set_history(z, bad)
    with pytest.raises(RuntimeError) as raised:
        z.backward(gradient=gradgen.ones(3, dtype=gradgen.float64))
    assert str(raised.value) == (
        "Function WrongShapeBackward returned an invalid number of gradients - expected "
        "2, but got 1"
    )


# -- grad mode ----------------------------------------------------------------------------


def test_no_grad_records_nothing_and_is_a_decorator() -> None:
    x = leaf(1.0)
    with gradgen.no_grad():
        assert (x * 2.0).grad_fn is None
        with gradgen.enable_grad():
            assert (x * 2.0).grad_fn is not None

    @gradgen.no_grad()
    def double(t: gradgen.Tensor) -> gradgen.Tensor:
        return t * 2.0

    assert double(x).grad_fn is None and gradgen.is_grad_enabled()


def test_grad_mode_is_per_thread() -> None:
    seen = []
    inside = threading.Event()
    release = threading.Event()

    def other_thread() -> None:
        inside.wait()
        seen.append(gradgen.is_grad_enabled())
        release.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with gradgen.no_grad():
        inside.set()
        release.wait()
    thread.join()
    assert seen == [True]


def test_backward_inside_no_grad_works() -> None:
    x = leaf(2.0)
    y = x**2
    with gradgen.no_grad():
        y.backward()
    assert x.grad.item() == 4.0


# -- depth --------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_million_node_chain_backwards_without_recursion() -> None:
    x = leaf(1.0)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0
    started = time.perf_counter()
    y.backward()
    elapsed = time.perf_counter() - started
    assert x.grad.item() == 1.0
    print(f"1,000,000-node backward: {elapsed:.1f} s")
    root = weakref.ref(y.grad_fn)
    del y  # the whole chain is freed without a C-stack overflow
    assert root() is None


def test_post_accumulate_grad_hook_sees_the_updated_grad() -> None:
    x = leaf(2.0)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.item()))
    (x * 3.0).backward()
    (x * 3.0).backward()
    handle.remove()
    (x * 3.0).backward()
    assert seen == [3.0, 6.0]
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (x * 1.0).register_post_accumulate_grad_hook(lambda t: None)


def test_hook_order_matches_pytorch() -> None:
    # PyTorch: node prehook, node posthook of y's consumer; y's tensor hooks, then
    # retain_grad, then y's node pre/post hooks; finally x's tensor hook and x's
    # post-accumulate hook.
    x = leaf(1.0)
    order: list[str] = []
    y = x * 2.0
    z = y * 3.0
    z.grad_fn.register_prehook(lambda g: order.append("z prehook"))
    z.grad_fn.register_hook(lambda gi, go: order.append("z posthook"))
    y.retain_grad()
    y.register_hook(lambda g: order.append("y tensor hook"))
    y.grad_fn.register_prehook(lambda g: order.append("y prehook"))
    y.grad_fn.register_hook(lambda gi, go: order.append("y posthook"))
    x.register_hook(lambda g: order.append("x tensor hook"))
    x.register_post_accumulate_grad_hook(lambda t: order.append("x post accumulate"))
    z.backward()
    assert order == [
        "z prehook",
        "z posthook",
        "y tensor hook",
        "y prehook",
        "y posthook",
        "x tensor hook",
        "x post accumulate",
    ]
    assert y.grad.item() == 3.0


def test_grad_with_respect_to_an_interior_tensor_prunes_below_it() -> None:
    x = leaf(2.0)
    ran = []
    h = x * 3.0
    h.grad_fn.register_prehook(lambda g: ran.append("below h"))
    out = (h * h) * 1.0
    (gh,) = autograd.grad(out, h)
    assert gh.item() == 12.0 and ran == []


def test_independent_graphs_from_eight_threads_match_serial_results() -> None:
    def work(seed: int) -> float:
        x = leaf(float(seed))
        y = x
        for _ in range(200):
            y = y * 1.01 + 0.5
        (g,) = autograd.grad(y, x)
        return g.item()

    expected = [work(s) for s in range(8)]
    results: list[float] = [0.0] * 8

    def run(index: int) -> None:
        results[index] = work(index)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == expected


def test_tensor_hooks_see_undefined_gradients_and_may_not_fill_them() -> None:
    from gradgen.autograd._gradcheck_checks import _undefined_grad

    x = leaf([1.5, 2.0])
    h = x * x
    seen = []
    h.register_hook(seen.append)
    autograd.grad(
        _undefined_grad(h),
        [x],
        gradgen.zeros(2, dtype=gradgen.float64),
        allow_unused=True,
    )
    assert seen == [None]
    h = x * x
    h.grad_fn.register_prehook(lambda grads: (gradgen.ones(2, dtype=gradgen.float64),))
    with pytest.raises(
        RuntimeError, match="^can't replace a None gradient with a non-None value$"
    ):
        autograd.grad(
            _undefined_grad(h),
            [x],
            gradgen.zeros(2, dtype=gradgen.float64),
            allow_unused=True,
        )


def test_real_property() -> None:
    z = gradgen.tensor([1 + 2j, 3 - 1j], dtype=gradgen.complex128, requires_grad=True)
    z.real.backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    assert z.grad.tolist() == [1 + 0j, 1 + 0j]
    r = gradgen.tensor([1.0])
    assert r.real is r


def test_backward_create_graph_warns_about_the_reference_cycle() -> None:
    x = leaf(2.0)
    with pytest.warns(
        UserWarning,
        match="^Using backward\\(\\) with create_graph=True will create a reference cycle",
    ):
        (x**3).backward(create_graph=True)
    assert x.grad.item() == 12.0 and x.grad.grad_fn is not None  # differentiable grad
    (x.grad * 1.0).backward()
    assert x.grad.item() == 12.0 + 12.0  # plus d(3x^2)/dx = 6x = 12


def test_backward_inputs_retains_a_non_leaf_gradient() -> None:
    x = leaf(3.0)
    h = x * 2.0
    (h * h).backward(inputs=[h])
    assert h.grad.item() == 12.0 and x.grad is None


def test_leaf_gradients_are_not_copied_when_nobody_else_holds_them(monkeypatch) -> None:
    # PyTorch steals the engine's gradient for .grad when it is not shared; copying
    # it would double the memory traffic of every training step.
    copies = []
    original = gradgen.Tensor.clone

    def counting_clone(self, *args, **kwargs):
        copies.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(gradgen.Tensor, "clone", counting_clone)
    x = leaf(np.ones(4))
    ((x * 2.0) * 3.0).sum().backward()
    assert copies == [] and x.grad.tolist() == [6.0] * 4
    g = gradgen.ones(4, dtype=gradgen.float64)
    y = leaf(np.ones(4))
    y.backward(g)  # the user still holds g: .grad must be a copy (clone, or np.copy
    # of its array where arrays flow between the nodes)
    assert len(copies) <= 1 and not np.shares_memory(y.grad.numpy(), g.numpy())
    assert y.grad is not g and y.grad.tolist() == g.tolist()
