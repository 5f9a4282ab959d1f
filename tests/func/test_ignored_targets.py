"""cross_entropy whose targets are all ignore_index, per example under vmap(grad) (the
one-node path and the general path) and in plain backward: PyTorch's nan loss and
zero gradients, without a numpy warning (the array forms of the backward formulas
divide by 0 as silently as the kernels). Answers are torch.func's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.func import grad, vmap
from torch_oracle import oracle, outcome

from .common import assert_same, general_path

W = np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]])
X = np.array([[[1.0, 2.0]], [[0.5, -1.0]]])  # two examples of one row
T = np.array([[-100], [1]])  # the first example's only target is ignored
CLASS_WEIGHT = [1.0, 2.0, 3.0]
OPTIONS = {
    "plain": {},
    "weight": {"weight": CLASS_WEIGHT},
    "smoothing": {"label_smoothing": 0.1},
    "smoothing and weight": {"label_smoothing": 0.1, "weight": CLASS_WEIGHT},
}


def _per_example(lib: Any, func: Any, option: str, rows: bool) -> Any:
    kwargs = dict(OPTIONS[option])
    if "weight" in kwargs:
        kwargs["weight"] = lib.tensor(kwargs["weight"], dtype=lib.float64)

    def loss(w: Any, x: Any, t: Any) -> Any:
        return lib.nn.functional.cross_entropy(x @ w, t, **kwargs)

    x, t = (X, T) if rows else (X[:, 0], T[:, 0])
    arguments = (lib.tensor(W), lib.tensor(x), lib.tensor(t))
    grads = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(*arguments)
    losses = func.vmap(loss, in_dims=(None, 0, 0))(*arguments)
    return grads.detach().numpy(), losses.detach().numpy()


class _Func:
    vmap = staticmethod(vmap)
    grad = staticmethod(grad)


def _ours(option: str, rows: bool, general: bool) -> Any:
    with warnings.catch_warnings(record=True) as caught:  # the filters as they are
        if general:
            with general_path():
                got = _per_example(gradgen, _Func, option, rows)
        else:
            got = _per_example(gradgen, _Func, option, rows)
    assert not [
        (str(w.message), w.filename, w.lineno)
        for w in caught
        if issubclass(w.category, RuntimeWarning)
    ]
    return got


# Not "smoothing and weight": torch.func refuses it (see below), as gradgen does.
@pytest.mark.parametrize("option", ["plain", "weight", "smoothing"])
@pytest.mark.parametrize("rows", [False, True])
@pytest.mark.parametrize("general", [False, True])
def test_all_ignored_targets_per_example(
    option: str, rows: bool, general: bool
) -> None:
    def by_torch(torch: Any) -> Any:
        import torch.func

        return _per_example(torch, torch.func, option, rows)

    expected = oracle(f"{option} {rows}", by_torch)
    got = _ours(option, rows, general)
    assert np.isnan(expected[1][0])  # a mean over no target
    assert not np.any(expected[0][0])  # ... with zero gradients
    for ours, theirs in zip(got, expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


@pytest.mark.parametrize("option", ["smoothing", "smoothing and weight"])
def test_label_smoothing_over_no_target_has_zero_gradient(option: str) -> None:
    """The plain backward too: the smoothing term's 0 / 0 passes no nan back."""

    def backward(lib: Any) -> Any:
        kwargs = dict(OPTIONS[option])
        kwargs["weight"] = lib.tensor(kwargs.get("weight", [1.0] * 3))
        x = lib.tensor([[1.0, 2.0, 0.5]], requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor([-100]), **kwargs)
        loss.backward()
        return loss.detach().numpy(), x.grad.numpy()

    expected = oracle(option, backward)
    got = backward(gradgen)
    for ours, theirs in zip(got, expected):
        np.testing.assert_array_equal(ours, theirs)


def test_smoothing_and_weight_refused_as_by_torch_func() -> None:
    """torch.func refuses it (its label smoothing counts the weights with
    masked_select, which vmap cannot batch over the targets): the same error."""

    def refused(lib: Any, func: Any) -> Any:
        return outcome(lambda: _per_example(lib, func, "smoothing and weight", True))

    def by_torch(torch: Any) -> Any:
        import torch.func

        return refused(torch, torch.func)

    assert_same(refused(gradgen, _Func), oracle("refused", by_torch))
