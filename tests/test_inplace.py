"""In-place operators: version counters, PyTorch's errors, rebased history."""

from __future__ import annotations


import numpy as np
import pytest

import gradgen
from torch_oracle import oracle
from gradgen.autograd import gradcheck, gradgradcheck


def leaf(values):
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=True)


def test_in_place_bumps_the_version_and_keeps_the_object() -> None:
    t = gradgen.tensor([1.0, 2.0])
    same = t.add_(1.0)
    assert same is t and t._version == 1
    t.mul_(2.0)
    t.sub_(gradgen.tensor([1.0, 1.0]), alpha=0.5)
    assert t.tolist() == [3.5, 5.5] and t._version == 3


def test_python_in_place_operators_modify_the_same_tensor() -> None:
    t = gradgen.tensor([1.0, 2.0])
    alias = t
    t += 1
    t *= 3
    t -= 2
    assert alias is t and t.tolist() == [4.0, 7.0] and t._version == 3


def test_views_share_the_version_counter() -> None:
    base = gradgen.tensor([[1.0, 2.0], [3.0, 4.0]])
    view = base.permute(1, 0)
    view.add_(10.0)
    assert base._version == 1 and view._version == 1
    assert base.tolist() == [[11.0, 12.0], [13.0, 14.0]]  # same memory


def test_leaf_that_requires_grad_cannot_be_modified_in_place() -> None:
    x = leaf([1.0])
    with pytest.raises(RuntimeError) as raised:
        x.add_(1.0)
    assert str(raised.value) == (
        "a leaf Variable that requires grad is being used in an in-place operation."
    )
    with pytest.raises(RuntimeError) as raised:
        x.permute(0).mul_(2.0)
    assert str(raised.value) == (
        "a view of a leaf Variable that requires grad is being used in an in-place "
        "operation."
    )


def test_sgd_step_under_no_grad() -> None:
    p = leaf([1.0, 2.0])
    (p * p).backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    grad = p.grad
    with gradgen.no_grad():
        p -= 0.1 * p.grad
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6])
    grad.mul_(0.0)  # zeroing .grad in place, as optimizers do
    assert p.grad.tolist() == [0.0, 0.0]
    p.grad = None
    assert p.grad is None


def test_in_place_on_a_non_leaf_rebases_its_history() -> None:
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    first = y.grad_fn
    y.add_(1.0)  # y = 2x + 1
    assert y.grad_fn.name() == "AddBackward0"
    assert y.grad_fn.next_functions[0] == (first, 0)
    y.mul_(y.detach().clone())  # y = (2x + 1) * c with c held constant
    y.backward(gradient=gradgen.ones(3, dtype=gradgen.float64))
    np.testing.assert_array_equal(
        x.grad.numpy(), 2.0 * (2.0 * np.array([1.0, 2.0, 3.0]) + 1.0)
    )


def test_in_place_multiply_saves_the_original_self() -> None:
    x, w = leaf([1.0, 2.0]), leaf([3.0, 5.0])
    y = x * 1.0
    y.mul_(w)  # d/dw = original y = x
    y.backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    assert w.grad.tolist() == [1.0, 2.0]
    assert x.grad.tolist() == [3.0, 5.0]


def test_modifying_a_saved_tensor_is_reported_at_backward() -> None:
    a = leaf([1.0, 2.0])
    b = a * 2
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError) as raised:
        c.backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    assert str(raised.value) == (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [gradgen.DoubleTensor [2]], which is output 0 of Add, is at "
        "version 1; expected version 0 instead. Hint: enable anomaly detection to find "
        "the operation that failed to compute its gradient, with "
        "gradgen.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def test_modifying_a_saved_leaf_under_no_grad_is_still_reported() -> None:
    x = leaf([1.0, 2.0])
    w = gradgen.tensor([3.0, 4.0], dtype=gradgen.float64)
    y = x * w  # saves w
    with gradgen.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError) as raised:
        y.backward(gradient=gradgen.ones(2, dtype=gradgen.float64))
    assert str(raised.value).startswith(
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [gradgen.DoubleTensor [2]] is at version 1; expected "
        "version 0 instead."
    )


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: gradgen.tensor([1, 2]).add_(0.5),
            "result type Float can't be cast to the desired output type Long",
        ),
        (
            lambda: gradgen.tensor([1.0, 2.0]).add_(gradgen.ones(3, 2)),
            "output with shape [2] doesn't match the broadcast shape [3, 2]",
        ),
        (
            lambda: gradgen.tensor([1.0]).expand(3).add_(1.0),
            "unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location. Please clone() the tensor before "
            "performing the operation.",
        ),
    ],
)
def test_in_place_kernel_errors(make, message) -> None:
    with pytest.raises(RuntimeError) as raised:
        make()
    assert str(raised.value) == message


# In-place changes through views (PyTorch's CopySlices): the same program in gradgen
# and torch, gradients and grad_fn names compared.
THROUGH_VIEWS = {
    "column +=": lambda L, y, w: y[:, 0].__iadd__(1.0),
    "row mul_ by a tensor": lambda L, y, w: y[1].mul_(w[:3]),
    "permuted view": lambda L, y, w: y.permute(1, 0)[0].mul_(w[:2]),
    "view of a view": lambda L, y, w: y.view(-1)[2:5].add_(w[:3], alpha=2.0),
    "setitem on a view": lambda L, y, w: y[1].__setitem__(L.tensor([0, 2]), w[:2] * 3),
    "two views in turn": lambda L, y, w: (y[0, 1:].mul_(w[:2]), y[:, 2].sub_(w[2:4])),
}


@pytest.mark.parametrize("name", sorted(THROUGH_VIEWS))
def test_in_place_through_a_view_matches_pytorch(name) -> None:
    def run(L):
        x = L.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
        w = L.tensor([2.0, -1.0, 0.5, 3.0], dtype=L.float64, requires_grad=True)
        y = x * 1.0
        before = y.view(-1)  # a view made before the change: it must see it
        THROUGH_VIEWS[name](L, y, w)
        loss = (y * y).sum() + (before * L.arange(6.0, dtype=L.float64)).sum()
        loss.backward()
        names = (type(y.grad_fn).__name__, type(before.grad_fn).__name__)
        w_grad = None if w.grad is None else w.grad.tolist()
        return x.grad.tolist(), w_grad, y.tolist(), names

    assert run(gradgen) == oracle("grads, values, names", run)


def test_in_place_through_a_view_is_differentiable_twice() -> None:
    def function(x, w):
        y = x * x
        y[:, 1].mul_(w)
        y.view(-1)[3:].add_(w.sum() ** 2)
        return y

    x = leaf(np.linspace(-1.0, 1.0, 6).reshape(3, 2))
    w = leaf([0.5, -2.0, 1.5])
    assert gradcheck(function, (x, w))
    assert gradgradcheck(function, (x, w))


def test_a_base_without_grad_joins_the_graph_through_a_view() -> None:
    w = leaf([2.0, 3.0])
    y = gradgen.zeros(3, dtype=gradgen.float64)
    y[1:].mul_(0.0).add_(w)
    assert type(y.grad_fn).__name__ == "CopySlices" and y.requires_grad
    (y * gradgen.tensor([1.0, 10.0, 100.0], dtype=gradgen.float64)).sum().backward()
    assert w.grad.tolist() == [10.0, 100.0]


def test_views_made_under_no_grad_do_not_follow_their_base() -> None:
    y = leaf([1.0, 2.0]) * 1.0
    with gradgen.no_grad():
        view = y[0:1]
    y.mul_(2.0)
    assert view.grad_fn is None and not view.requires_grad
    assert y.detach().grad_fn is None


def test_in_place_chain_matches_pytorch() -> None:
    data = np.array([0.5, -1.5, 2.0])
    weight = np.array([2.0, 3.0, -1.0])

    def run(module):
        x = module.tensor(data, requires_grad=True)
        w = module.tensor(weight, requires_grad=True)
        y = x * 1.0
        y.mul_(w)
        y.add_(x, alpha=2.5)
        y.sub_(w * w)
        y *= 3.0
        y.backward(module.tensor([1.0, 2.0, 3.0], dtype=module.float64))
        return y.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy()

    for ours, theirs in zip(run(gradgen), oracle("value and grads", run), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_a_base_in_any_memory_layout_is_found() -> None:
    def run(L):
        x = L.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
        w = L.tensor([2.0, -1.0], dtype=L.float64, requires_grad=True)
        y = x.t() * 1.0  # numpy keeps the transposed (column-major) layout
        y[1].mul_(w)
        (y * y).sum().backward()
        return x.grad.tolist(), w.grad.tolist()

    assert not (
        gradgen.ones(2, 3, dtype=gradgen.float64).t() * 1.0
    )._data.flags.c_contiguous
    assert run(gradgen) == oracle("grads", run)


@pytest.mark.parametrize(
    "layout",
    [
        lambda a: a,
        lambda a: np.asfortranarray(a),
        lambda a: a[::-1, ::-1],
        lambda a: a.T,
    ],
    ids=["C", "Fortran", "reversed", "transposed"],
)
def test_view_positions_index_the_base_in_c_order(layout) -> None:
    from gradgen.view_history import view_positions

    base = layout(np.arange(24.0).reshape(4, 6))
    views = [
        base[1],
        base[:, 2],
        base[1:3, ::2],
        base.T[2:4],
        base[::-1][0],
        base[1:, 1:][::2],
    ]
    for view in views:
        positions = view_positions(base, view)
        assert positions is not None and positions.shape == view.shape
        np.testing.assert_array_equal(base.reshape(-1)[positions], view)
    assert view_positions(np.broadcast_to(np.ones(3), (2, 3)), np.ones(3)) is None
