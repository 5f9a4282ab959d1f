"""gradgen.autograd.graph against torch.autograd.graph: saved-tensor hooks (what is
packed, when, in which grad mode; what unpack gives backward), disabling them, the
gradient edge of a tensor, version bumps, and hooks on several tensors at once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd.graph import (
    GradientEdge,
    Node,
    disable_saved_tensors_hooks,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
)
from torch_oracle import oracle

X = [0.5, -1.25, 2.0]


def _packing_log(lib: Any) -> list[Any]:
    """What pack and unpack see for pow (saves its input) and exp (saves its output)."""
    log: list[Any] = []

    def pack(t: Any) -> Any:
        log.append(
            ["pack", list(t.shape), t.requires_grad, t.grad_fn is not None]
            + [lib.is_grad_enabled()]
        )
        return t.detach().clone() * 1

    def unpack(packed: Any) -> Any:
        log.append(["unpack", list(packed.shape)])
        return packed

    x = lib.tensor(X, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        total = x.pow(2).exp().sum()
    log.append("backward")
    total.backward()
    return [log, x.grad.numpy()]


def test_pack_and_unpack_run_as_in_pytorch() -> None:
    got = _packing_log(gradgen)
    want = oracle("log and gradient", _packing_log)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_hooks_hold_the_value_and_skip_the_version_check() -> None:
    """The hooks own the saved value: an in-place change after saving is not an error
    (PyTorch checks versions only without hooks), and the packed copy is what
    backward uses."""

    def run(lib: Any) -> Any:
        x = lib.tensor(X, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(
            lambda t: t.detach().clone(), lambda p: p
        ):
            a = x * 1
            b = a * a
        with lib.no_grad():
            a.add_(1.0)
        b.sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(gradgen), oracle("grad", run), rtol=1e-6)
    np.testing.assert_allclose(run(gradgen), 2 * np.array(X, dtype=np.float32))


def test_double_backward_through_packed_copies() -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(
            lambda t: t.detach().clone(), lambda p: p
        ):
            y = (x * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return [g.detach().numpy(), gg.numpy()]

    got, want = run(gradgen), oracle("first and second", run)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    np.testing.assert_allclose(got[1], 6 * np.array(X))


def test_unpack_must_return_a_tensor() -> None:
    x = gradgen.tensor(X, requires_grad=True)
    with saved_tensors_hooks(lambda t: 1, lambda p: "no"):
        y = (x * x).sum()
    with pytest.raises(TypeError) as error:
        y.backward()
    assert str(error.value) == oracle("message", lambda torch: _unpack_error(torch))


def _unpack_error(torch: Any) -> str:
    x = torch.tensor(X, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: "no"):
        y = (x * x).sum()
    try:
        y.backward()
    except TypeError as error:
        return str(error)
    raise AssertionError("no error")


def test_innermost_hooks_apply_and_disable_refuses_new_ones() -> None:
    seen: list[str] = []
    x = gradgen.tensor(X, requires_grad=True)
    with saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda p: p):
        with saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda p: p):
            y = x * x
        z = y.sin()
    assert seen == ["inner", "inner", "outer"]
    (y.sum() + z.sum()).backward()
    with disable_saved_tensors_hooks("checkpointing manages saved tensors here"):
        with pytest.raises(RuntimeError, match="^checkpointing manages saved tensors"):
            with saved_tensors_hooks(lambda t: t, lambda p: p):
                pass
    with saved_tensors_hooks(lambda t: t, lambda p: p):  # allowed again
        pass


def test_save_on_cpu_gives_the_same_gradients() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (x.sin() * x.exp()).sum()
        y.backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(gradgen), oracle("grad", run), rtol=1e-12)
    assert issubclass(save_on_cpu, saved_tensors_hooks)


def test_gradient_edge_and_node() -> None:
    a = gradgen.tensor(X, requires_grad=True)
    y = a * 2
    edge = get_gradient_edge(y)
    assert edge == GradientEdge(y.grad_fn, 0, None)
    assert isinstance(edge.node, Node)
    leaf = get_gradient_edge(a)
    assert leaf.node.name() == "AccumulateGrad" and leaf.output_nr == 0
    assert y.grad_fn.next_functions[0][0] is leaf.node
    with pytest.raises(RuntimeError) as error:
        get_gradient_edge(gradgen.tensor(X))
    assert str(error.value) == oracle(
        "message",
        lambda torch: _error_text(torch, torch.autograd.graph.get_gradient_edge),
    )


def _error_text(torch: Any, function: Any) -> str:
    try:
        function(torch.tensor(X))
    except RuntimeError as error:
        return str(error)
    raise AssertionError("no error")


def test_increment_version_makes_saved_values_stale() -> None:
    x = gradgen.tensor(X, requires_grad=True)
    y = x * x
    before = x._version
    increment_version(x)
    assert x._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def _multi_hook_calls(lib: Any, mode: str) -> list[Any]:
    # Non-leaves: PyTorch's "all" mode refuses leaves under autograd.grad.
    a = lib.tensor([1.0, 2.0], requires_grad=True) * 1
    b = lib.tensor([3.0, 4.0], requires_grad=True) * 1
    calls: list[Any] = []

    def record(grads: Any) -> None:
        if mode == "any":
            calls.append(grads.numpy().tolist())
        else:
            calls.append([None if g is None else g.numpy().tolist() for g in grads])

    handle = lib.autograd.graph.register_multi_grad_hook((a, b), record, mode=mode)
    (a * 2).sum().backward(retain_graph=True)
    (a * b).sum().backward(retain_graph=True)
    lib.autograd.grad((a * b * 5).sum(), [b], retain_graph=True)
    handle.remove()
    (a * b).sum().backward()
    return calls


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook(mode: str) -> None:
    got = _multi_hook_calls(gradgen, mode)
    assert got == oracle("calls", lambda torch: _multi_hook_calls(torch, mode))
    assert len(got) == 3


def test_multi_grad_hook_mode_is_checked() -> None:
    a = gradgen.tensor(X, requires_grad=True)
    with pytest.raises(
        ValueError, match=r"^Expects mode to be one of \('all', 'any'\) but got some$"
    ):
        register_multi_grad_hook((a,), print, mode="some")
