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
