"""Workarounds for operators gradgen once lacked, replaced by those operators: `number /
tensor` is `reciprocal() * number`, the weighted mse_loss divides, and modules write
parameters and gradients with `copy_`. Each is checked against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradgen
from gradgen.nn.modules import _overwrite_
from torch_oracle import oracle


def _hex(values: Any) -> list[str]:
    return [float(v).hex() for v in np.asarray(values).reshape(-1)]


def _number_over_tensor(module: Any) -> dict[str, Any]:
    x = module.tensor([1.0, 3.0, 7.0], requires_grad=True)
    y = 3 / x
    y.sum().backward()
    return {
        "values": _hex(y.detach().numpy()),
        "grad_fn": type(y.grad_fn).__name__,
        "grad": x.grad.numpy(),
        "int": (2 / module.tensor([1, 2, 4])).numpy(),
        "int_dtype": str((2 / module.tensor([1, 2, 4])).dtype).split(".")[1],
        "complex": ((1 + 2j) / module.tensor([1.0, 4.0])).numpy(),
        "zero": (1 / module.tensor([0.0, -0.0])).numpy(),
    }


def test_number_divided_by_a_tensor_is_pytorchs_reciprocal_times_the_number() -> None:
    ours = _number_over_tensor(gradgen)
    theirs = oracle("rtruediv", _number_over_tensor)
    # 3 * float32(1/7) rounds to 0x1.b6db70p-2, where float32(3/7) is 0x1.b6db6ep-2:
    # PyTorch's answer is the product, to the last bit.
    assert ours["values"] == theirs["values"]
    assert ours["values"][2] == "0x1.b6db700000000p-2"
    assert ours["grad_fn"] == theirs["grad_fn"] == "MulBackward0"
    np.testing.assert_allclose(ours["grad"], [-3.0, -1.0 / 3.0, -3.0 / 49.0], rtol=1e-6)
    np.testing.assert_array_equal(ours["grad"], theirs["grad"])
    assert ours["int"].tolist() == theirs["int"].tolist() == [2.0, 1.0, 0.5]
    assert ours["int_dtype"] == theirs["int_dtype"] == "float32"
    assert ours["complex"].tolist() == theirs["complex"].tolist()
    assert ours["complex"].tolist() == [1 + 2j, 0.25 + 0.5j]
    assert ours["zero"].tolist() == theirs["zero"].tolist() == [np.inf, -np.inf]


def _weighted_mse(module: Any) -> dict[str, Any]:
    """Squared errors 1 and 0 under weights 3 and 4: the mean is exactly 3 / 7."""
    x = module.tensor([1.0, 2.0], requires_grad=True)
    target = module.tensor([0.0, 2.0])
    weight = module.tensor([3.0, 4.0])
    loss = module.nn.functional.mse_loss(x, target, weight=weight)
    loss.backward()
    return {
        "loss": loss.item().hex(),
        "grad_fn": type(loss.grad_fn).__name__,
        "grad": x.grad.numpy(),
    }


def test_weighted_mse_loss_mean_divides_by_the_weight_sum() -> None:
    ours = _weighted_mse(gradgen)
    theirs = oracle("mse", _weighted_mse)
    assert (
        ours["loss"] == theirs["loss"] == float(np.float32(3.0) / np.float32(7.0)).hex()
    )
    assert ours["grad_fn"] == theirs["grad_fn"] == "DivBackward0"
    # d/dx of sum(w * (x - t)**2) / sum(w) = 2 w (x - t) / 7.
    np.testing.assert_allclose(ours["grad"], [6.0 / 7.0, 0.0], rtol=1e-6)
    np.testing.assert_array_equal(ours["grad"], theirs["grad"])


def _copy_into_parameter(module: Any, write: Any) -> dict[str, Any]:
    p = module.nn.Parameter(module.tensor([[1.0, float("nan")], [float("inf"), 2.0]]))
    before = p._version
    with module.no_grad():
        write(p, [[1.5, 2.5], [3.5, 4.5]])
    return {
        "data": p.detach().numpy(),
        "bumps": p._version - before,
        "leaf": p.is_leaf and p.grad_fn is None and p.requires_grad,
    }


def test_modules_write_parameters_with_copy_as_pytorch() -> None:
    ours = _copy_into_parameter(gradgen, _overwrite_)
    theirs = oracle(
        "copy",
        lambda torch: _copy_into_parameter(
            torch, lambda p, values: p.copy_(torch.tensor(values))
        ),
    )
    assert ours["data"].tolist() == theirs["data"].tolist() == [[1.5, 2.5], [3.5, 4.5]]
    assert ours["bumps"] == theirs["bumps"] == 1
    assert ours["leaf"] is theirs["leaf"] is True


def test_zero_grad_zeroes_the_gradient_in_place_with_one_version_bump() -> None:
    linear = gradgen.nn.Linear(3, 2)
    linear(gradgen.ones(1, 3)).sum().backward()
    grad = linear.weight.grad
    version = grad._version
    linear.zero_grad(set_to_none=False)
    assert linear.weight.grad is grad  # the same tensor, written in place
    assert grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert grad._version == version + 1


def test_writing_a_parameter_with_grad_enabled_is_pytorchs_leaf_error() -> None:
    def error(module: Any) -> Exception:
        p = module.nn.Parameter(module.zeros(2))
        try:
            p.copy_(module.ones(2))
        except RuntimeError as raised:
            return raised
        raise AssertionError("no error")

    theirs = oracle("error", error)
    p = gradgen.nn.Parameter(gradgen.zeros(2))
    try:
        _overwrite_(p, 1)
    except RuntimeError as raised:
        assert str(raised) == str(theirs)
        assert str(raised) == (
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    else:
        raise AssertionError("no error")
    assert p.tolist() == [0.0, 0.0] and p._version == 0
