"""Bugs fixed in session 8 (helper bugs2), each against PyTorch (recorded in
tests/golden/): functional_call refusing to put a tensor over a non-tensor attribute,
and operators refusing uninitialized (lazy) parameters and buffers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle


def _attribute_model(lib: Any) -> Any:
    class Scaled(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = 2.0
            self.lin = lib.nn.Linear(2, 2)
            self.empty = None
            self.offset = lib.ones(2, dtype=lib.float64)

        def forward(self, x: Any) -> Any:
            out = self.lin(x) * self.scale
            return out if self.empty is None else out + self.empty

        @property
        def twice(self) -> float:
            return 2 * self.scale

    model = Scaled()
    with lib.no_grad():
        model.lin.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        model.lin.bias.zero_()
    return model


ATTRIBUTE_NAMES = ["scale", "lin", "training", "twice", "lin.in_features"]
ACCEPTED_NAMES = ["empty", "offset", "missing", "lin.missing"]


def _replace(lib: Any, name: str) -> Any:
    """functional_call with a tensor at `name`: the output (as a list), or the error;
    and whether the model got its attributes back."""
    model = _attribute_model(lib)
    given = {"lin.bias": lib.full((2,), 5.0), name: lib.full((2,), 0.5)}
    try:
        found: Any = lib.func.functional_call(model, given, (lib.ones(2),)).tolist()
    except Exception as error:  # noqa: BLE001  # the answer is the error
        found = error
    restored = (
        model.scale == 2.0
        and model.empty is None
        and model.lin.bias.tolist() == [0.0, 0.0]
        and not hasattr(model, "missing")
    )
    return found, restored


def test_functional_call_refuses_tensor_over_plain_attribute() -> None:
    for name in ATTRIBUTE_NAMES + ACCEPTED_NAMES:
        ours, ours_restored = _replace(gradgen, name)
        theirs, theirs_restored = oracle(name, lambda torch: _replace(torch, name))
        assert ours_restored and theirs_restored, name
        if isinstance(theirs, Exception):
            assert type(ours).__name__ == type(theirs).__name__, name
            assert str(ours) == str(theirs), name
        else:
            np.testing.assert_allclose(ours, theirs, err_msg=name)


def test_functional_call_plain_attribute_error_text() -> None:
    with pytest.raises(TypeError, match=r"^attribute `scale`: 2.0 is not an instance"):
        gradgen.func.functional_call(
            _attribute_model(gradgen), {"scale": gradgen.ones(())}, (gradgen.ones(2),)
        )


UNINITIALIZED_CALLS: dict[str, Any] = {
    "method_add": lambda lib, p, b: p + 1,
    "function_add": lambda lib, p, b: lib.add(p, 1),
    "buffer_mul": lambda lib, p, b: b * 2,
    "linear": lambda lib, p, b: lib.nn.functional.linear(lib.ones(2), p),
    "sum": lambda lib, p, b: p.sum(),
    "exp": lambda lib, p, b: lib.exp(p),
    "matmul_right": lambda lib, p, b: lib.matmul(lib.ones(0), p),
}
ALLOWED_CALLS: dict[str, Any] = {
    "double": lambda lib, p, b: str(p.double().dtype).split(".")[-1],
    "to": lambda lib, p, b: str(b.to(lib.float64).dtype).split(".")[-1],
    "size": lambda lib, p, b: list(p.size()),
    "is_floating_point": lambda lib, p, b: p.is_floating_point(),
    "is_complex": lambda lib, p, b: b.is_complex(),
    "requires_grad": lambda lib, p, b: (p.requires_grad, b.requires_grad),
}


def _uninitialized(lib: Any, call: Any) -> Any:
    try:
        return call(lib, lib.nn.UninitializedParameter(), lib.nn.UninitializedBuffer())
    except Exception as error:  # noqa: BLE001  # the answer is the error
        return error


def _without_function(message: str) -> str:
    """The message without the function named after "in " (PyTorch names its own)."""
    head, _, tail = message.partition(" in ")
    return head + " in ... " + tail.partition(". ")[2]


def _refusal(lib: Any, call: Any) -> tuple[str, str]:
    """The error's class and message without the function (PyTorch's holds an
    address, so it is not recorded)."""
    error = _uninitialized(lib, call)
    return type(error).__name__, _without_function(str(error))


def test_operators_refuse_uninitialized_parameters_and_buffers() -> None:
    for name, call in UNINITIALIZED_CALLS.items():
        ours = _refusal(gradgen, call)
        theirs = oracle(name, lambda torch: _refusal(torch, call))
        assert ours == tuple(theirs), name
        assert ours[0] == "ValueError", name


def test_uninitialized_error_names_the_function() -> None:
    param = gradgen.nn.UninitializedParameter()
    with pytest.raises(ValueError, match=r"uninitialized parameter in <function exp>"):
        gradgen.exp(param)
    with pytest.raises(ValueError, match=r"UninitializedParameter` objects"):
        gradgen.nn.functional.linear(gradgen.ones(2), param)


def test_uninitialized_tensors_still_convert_and_materialize() -> None:
    for name, call in ALLOWED_CALLS.items():
        assert _uninitialized(gradgen, call) == oracle(
            name, lambda torch: _uninitialized(torch, call)
        ), name
    model = gradgen.nn.LazyLinear(3).double()
    out = model(gradgen.ones(2, 4, dtype=gradgen.float64))
    assert out.shape == (2, 3) and model.weight.dtype == gradgen.float64
    np.testing.assert_allclose(
        out.detach().numpy(),
        np.ones((2, 4)) @ model.weight.detach().numpy().T + model.bias.detach().numpy(),
    )
