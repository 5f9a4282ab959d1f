"""add and sub's `alpha` checked against the operands' dtype as PyTorch's alpha_check
does (a float alpha for integral tensors, a bool alpha for non-bool ones, a complex
alpha for real ones are errors, never a silently truncated result); addr's beta and
alpha likewise. Answers are PyTorch's (tests/torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_compare import same_outcome

F = Callable[[Any], Any]


def _ints(lib: Any) -> tuple[Any, Any]:
    return lib.tensor([1, 2]), lib.tensor([3, 4])


CASES: dict[str, F] = {
    "add int float alpha": lambda lib: lib.add(*_ints(lib), alpha=1.5),
    "add int float alpha 2.0": lambda lib: lib.add(*_ints(lib), alpha=2.0),
    "add method": lambda lib: _ints(lib)[0].add(_ints(lib)[1], alpha=2.5),
    "add python scalar": lambda lib: lib.add(_ints(lib)[0], 2, alpha=1.5),
    "sub int float alpha": lambda lib: lib.sub(*_ints(lib), alpha=1.5),
    "sub python scalar": lambda lib: lib.sub(_ints(lib)[0], 2, alpha=1.5),
    "subtract": lambda lib: lib.subtract(*_ints(lib), alpha=0.5),
    "rsub": lambda lib: lib.rsub(*_ints(lib), alpha=1.5),
    "add_ in place": lambda lib: _ints(lib)[0].clone().add_(_ints(lib)[1], alpha=2.0),
    "sub_ in place": lambda lib: _ints(lib)[0].clone().sub_(_ints(lib)[1], alpha=2.0),
    "add bool alpha on float": lambda lib: lib.add(
        lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), alpha=False
    ),
    "add complex alpha on float": lambda lib: lib.add(
        lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), alpha=1j
    ),
    "add bool alpha on bool": lambda lib: lib.add(
        lib.tensor([True, False]), lib.tensor([False, False]), alpha=True
    ),
    "add int alpha on int": lambda lib: lib.add(*_ints(lib), alpha=3),
    "add float alpha on int and float": lambda lib: lib.add(
        _ints(lib)[0], lib.tensor([0.5, 0.25]), alpha=1.5
    ),
    "sub float alpha on float32": lambda lib: lib.sub(
        lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), alpha=2.5
    ),
    "add float alpha with grad": lambda lib: lib.add(
        lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0]), alpha=0.5
    ).detach(),
    # alpha == 1 in value but a float, bool or complex: still checked
    "add int alpha 1.0": lambda lib: lib.add(*_ints(lib), alpha=1.0),
    "add int alpha True": lambda lib: lib.add(*_ints(lib), alpha=True),
    "sub int alpha 1.0": lambda lib: lib.sub(*_ints(lib), alpha=1.0),
    "sub int alpha True": lambda lib: lib.sub(*_ints(lib), alpha=True),
    "add_ int alpha 1.0": lambda lib: _ints(lib)[0]
    .clone()
    .add_(_ints(lib)[1], alpha=1.0),
    "add_ int alpha True": lambda lib: _ints(lib)[0]
    .clone()
    .add_(_ints(lib)[1], alpha=True),
    "sub_ int alpha 1.0": lambda lib: _ints(lib)[0]
    .clone()
    .sub_(_ints(lib)[1], alpha=1.0),
    "sub_ int alpha True": lambda lib: _ints(lib)[0]
    .clone()
    .sub_(_ints(lib)[1], alpha=True),
    "add int number alpha 1.0": lambda lib: lib.add(_ints(lib)[0], 2, alpha=1.0),
    "add out int alpha 1.0": lambda lib: lib.add(
        *_ints(lib), alpha=1.0, out=lib.empty(2, dtype=lib.int64)
    ),
    "add float alpha True": lambda lib: lib.add(
        lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), alpha=True
    ),
    "add float alpha 1.0": lambda lib: lib.add(
        lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), alpha=1.0
    ),
    "add float alpha 1+0j": lambda lib: lib.add(
        lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), alpha=1 + 0j
    ),
    "sub float alpha True with grad": lambda lib: lib.sub(
        lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0]), alpha=True
    ).detach(),
    "sub float alpha False with grad": lambda lib: lib.sub(
        lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0]), alpha=False
    ).detach(),
    "add float alpha True with grad": lambda lib: lib.add(
        lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0]), alpha=True
    ).detach(),
    "add bool alpha True on bool 1": lambda lib: lib.add(
        lib.tensor([True, False]), lib.tensor([True, False]), alpha=True
    ),
    "addr bool alpha": lambda lib: lib.addr(
        lib.tensor([[1, 2], [3, 4]]), *_ints(lib), alpha=True
    ),
    "addr bool beta": lambda lib: lib.addr(
        lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
        lib.tensor([1.0, 2.0]),
        lib.tensor([3.0, 4.0]),
        beta=True,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_alpha_as_pytorch(case: str) -> None:
    same_outcome(CASES[case])


def test_alpha_on_the_recorded_path_and_under_no_grad_alike() -> None:
    """The recorded fast path (its inline kernel stops at alpha != 1) and the kernel
    under no_grad refuse alike."""
    a = gradgen.tensor([1, 2])
    with pytest.raises(RuntimeError, match="argument alpha must not be a floating"):
        gradgen.add(a, a, alpha=1.5)
    with gradgen.no_grad():
        with pytest.raises(RuntimeError, match="argument alpha must not be a floating"):
            gradgen.add(a, a, alpha=1.5)
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    y = gradgen.add(x, x.detach(), alpha=2.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(y.detach().numpy(), [3.0, 6.0])
