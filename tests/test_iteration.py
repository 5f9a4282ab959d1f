"""Iterating over a tensor is PyTorch's `unbind(0)`: the rows keep the graph."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

DATA = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def _rows_and_grad(module: Any) -> dict[str, Any]:
    """Iterate, use the rows in a loss, and report what PyTorch's Tensor API shows."""
    x = module.tensor(DATA, requires_grad=True)
    rows = list(x)
    loss = (rows[0] * 2.0 + rows[1] ** 2).sum()
    loss.backward()
    return {
        "count": len(rows),
        "requires_grad": [row.requires_grad for row in rows],
        "grad_fn": [type(row.grad_fn).__name__ for row in rows],
        "values": [row.detach().numpy() for row in rows],
        "grad": x.grad.numpy(),
    }


def test_rows_of_a_tensor_that_requires_grad_keep_the_graph() -> None:
    ours = _rows_and_grad(gradgen)
    theirs = oracle("rows", _rows_and_grad)
    assert ours["count"] == theirs["count"] == 2
    assert ours["requires_grad"] == theirs["requires_grad"] == [True, True]
    assert ours["grad_fn"] == theirs["grad_fn"] == ["UnbindBackward0"] * 2
    for mine, torch_row in zip(ours["values"], theirs["values"]):
        np.testing.assert_array_equal(mine, torch_row)
    # d/dx of 2*x[0] + x[1]**2, by hand: 2 on the first row, 2*x on the second.
    expected = np.array([[2.0, 2.0, 2.0], [8.0, 10.0, 12.0]], dtype=np.float32)
    np.testing.assert_array_equal(ours["grad"], expected)
    np.testing.assert_array_equal(theirs["grad"], expected)


def _unpacked_grad(module: Any) -> Any:
    """`a, b = x` unpacks through __iter__ too; only one row reaches the loss."""
    x = module.tensor([[1.0, -1.0], [3.0, 0.5]], requires_grad=True)
    a, b = x
    (b * b).sum().backward()
    return x.grad.numpy()


def test_unpacking_rows_gives_gradients_and_zeros_for_unused_rows() -> None:
    ours = _unpacked_grad(gradgen).tolist()
    theirs = oracle("grad", _unpacked_grad).tolist()
    assert ours == theirs == [[0.0, 0.0], [6.0, 1.0]]


def _rows_of_3d(module: Any) -> Any:
    x = module.arange(24, dtype=module.float64).reshape(2, 3, 4).requires_grad_()
    total = module.zeros(3, 4, dtype=module.float64)
    for row in x:
        total = total + row * row
    total.sum().backward()
    return {"shapes": [list(row.shape) for row in x], "grad": x.grad.numpy()}


def test_iteration_over_higher_dimensions_gives_rows_along_dim_0() -> None:
    ours = _rows_of_3d(gradgen)
    theirs = oracle("rows", _rows_of_3d)
    assert ours["shapes"] == theirs["shapes"] == [[3, 4], [3, 4]]
    np.testing.assert_array_equal(ours["grad"], 2 * np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(ours["grad"], theirs["grad"])


def _rows_are_views(module: Any) -> dict[str, Any]:
    """Without grad, rows are views of the tensor (unbind returns views)."""
    x = module.tensor([[1, 2], [3, 4]])
    rows = list(x)
    rows[1][0] = 30
    return {
        "data": x.numpy(),
        "base_is_x": rows[0]._base is x,
        "requires_grad": rows[0].requires_grad,
        "grad_fn": rows[0].grad_fn is None,
    }


def test_rows_of_a_plain_tensor_are_views() -> None:
    ours = _rows_are_views(gradgen)
    theirs = oracle("views", _rows_are_views)
    assert ours["data"].tolist() == theirs["data"].tolist() == [[1, 2], [30, 4]]
    assert ours["base_is_x"] is theirs["base_is_x"] is True
    assert ours["requires_grad"] is theirs["requires_grad"] is False
    assert ours["grad_fn"] is theirs["grad_fn"] is True


def test_iteration_over_an_empty_dim_0_gives_no_rows() -> None:
    x = gradgen.zeros(0, 3, requires_grad=True)
    assert list(x) == []
    assert oracle("count", lambda torch: len(list(torch.zeros(0, 3)))) == 0


def test_iteration_over_a_0d_tensor_raises_pytorchs_type_error() -> None:
    def error(module: Any) -> Exception:
        try:
            iter(module.tensor(1.0, requires_grad=True))
        except TypeError as raised:
            return raised
        raise AssertionError("no error")

    expected = "iteration over a 0-d tensor"
    theirs = oracle("error", error)
    assert type(theirs).__name__ == "TypeError" and str(theirs) == expected
    with pytest.raises(TypeError) as raised:
        iter(gradgen.tensor(1.0, requires_grad=True))
    assert str(raised.value) == expected
