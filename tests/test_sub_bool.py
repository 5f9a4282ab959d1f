"""sub refuses a bool operand as PyTorch's sub_check does, whatever the other operand
(`x - True`, `x - mask`, `mask - 1`, in place, with grad, through out=): the check
runs on the operands' own dtypes, before promotion (sub's `promotion_check:`); rsub
likewise. Answers are PyTorch's (tests/torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from torch_compare import same_outcome

F = Callable[[Any], Any]


def _x(lib: Any, requires_grad: bool = False) -> Any:
    return lib.tensor([1.0, 2.0], requires_grad=requires_grad)


def _mask(lib: Any) -> Any:
    return lib.tensor([True, False])


CASES: dict[str, F] = {
    "x - True": lambda lib: _x(lib) - True,
    "x - False": lambda lib: _x(lib) - False,
    "sub(x, True)": lambda lib: lib.sub(_x(lib), True),
    "x.sub(True)": lambda lib: _x(lib).sub(True),
    "x.sub_(True)": lambda lib: _x(lib).sub_(True),
    "x -= mask": lambda lib: _x(lib).__isub__(_mask(lib)),
    "ints - True": lambda lib: lib.tensor([1, 2]) - True,
    "x - mask": lambda lib: _x(lib) - _mask(lib),
    "mask - x": lambda lib: _mask(lib) - _x(lib),
    "mask - 1": lambda lib: _mask(lib) - 1,
    "mask - 1.5": lambda lib: _mask(lib) - 1.5,
    "mask - True": lambda lib: _mask(lib) - True,
    "mask - mask": lambda lib: _mask(lib) - _mask(lib),
    "True - x": lambda lib: True - _x(lib),
    "rsub(x, True)": lambda lib: lib.rsub(_x(lib), True),
    "x with grad - True": lambda lib: (_x(lib, True) - True).detach(),
    "x with grad - mask": lambda lib: (_x(lib, True) - _mask(lib)).detach(),
    "sub out": lambda lib: lib.sub(_x(lib), True, out=lib.empty(2)),
    "subtract": lambda lib: lib.subtract(_x(lib), _mask(lib)),
    "x - 1 computes": lambda lib: _x(lib) - 1,
    "x + True computes": lambda lib: _x(lib) + True,
    "x with grad * True computes": lambda lib: (_x(lib, True) * True).detach(),
    "mask + mask computes": lambda lib: _mask(lib) + _mask(lib),
}


@pytest.mark.parametrize("case", list(CASES))
def test_sub_of_bools_as_pytorch(case: str) -> None:
    same_outcome(CASES[case])
