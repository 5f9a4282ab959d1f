"""Scalar arguments a tensor's dtype cannot hold, as PyTorch treats them: an error
("value cannot be converted to type c10::Half without overflow") where PyTorch
converts the Scalar to the tensor's dtype (clamp, pow's exponent, add/sub's alpha,
fill_, masked_fill, index_fill, hardtanh, linspace), float32 arithmetic where it
computes half precision in float (`x_half * 70000`, addcmul's value), inf where it
casts (`t[i] = v`, comparisons). Answers are PyTorch's (tests/torch_oracle.py)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

from torch_compare import same_outcome

F = Callable[[Any], Any]


def _half(lib: Any) -> Any:
    return lib.tensor([0.5, 1.0], dtype=lib.float16)


def _bf16(lib: Any) -> Any:
    return lib.tensor([0.5, 1.0], dtype=lib.bfloat16)


def _mask(lib: Any) -> Any:
    return lib.tensor([True, False])


def _set(t: Any, index: Any, value: Any) -> Any:
    t[index] = value
    return t.float()


CASES: dict[str, F] = {
    "clamp max": lambda lib: lib.clamp(_half(lib), max=70000).float(),
    "clamp min": lambda lib: lib.clamp(_half(lib), min=-70000).float(),
    "clamp 65505": lambda lib: lib.clamp(_half(lib), max=65505).float(),
    "clamp 65504": lambda lib: lib.clamp(_half(lib), max=65504).float(),
    "clamp inf": lambda lib: lib.clamp(_half(lib), max=float("inf")).float(),
    "clamp_min": lambda lib: lib.clamp_min(_half(lib), 70000).float(),
    "clamp_max": lambda lib: lib.clamp_max(_half(lib), 70000).float(),
    "clamp_ in place": lambda lib: _half(lib).clamp_(max=70000).float(),
    "clamp float32 1e39": lambda lib: lib.clamp(lib.tensor([0.5]), max=1e39),
    "clamp int8 1000": lambda lib: lib.clamp(lib.tensor([1], dtype=lib.int8), max=1000),
    "clamp int32 2**40": lambda lib: lib.clamp(
        lib.tensor([1], dtype=lib.int32), max=2**40
    ),
    "clamp int8 float bound": lambda lib: lib.clamp(
        lib.tensor([1], dtype=lib.int8), max=1000.5
    ),
    "clamp bfloat16": lambda lib: lib.clamp(_bf16(lib), max=1e39).float(),
    "pow": lambda lib: (_half(lib) ** 70000).float(),
    "pow float": lambda lib: (_half(lib) ** 70000.5).float(),
    "torch.pow": lambda lib: lib.pow(_half(lib), -70000).float(),
    "pow_": lambda lib: _half(lib).pow_(70000).float(),
    "pow int8": lambda lib: lib.tensor([1], dtype=lib.int8) ** 1000,
    "pow float32 computes": lambda lib: lib.tensor([0.5, 1.0]) ** 1e39,
    "pow bfloat16": lambda lib: (_bf16(lib) ** 1e39).float(),
    "pow bfloat16 70000": lambda lib: (_bf16(lib) ** 70000).float(),
    "rpow computes": lambda lib: (70000 ** _half(lib)).float(),
    "add alpha": lambda lib: lib.add(_half(lib), _half(lib), alpha=70000).float(),
    "sub alpha": lambda lib: lib.sub(_half(lib), _half(lib), alpha=70000).float(),
    "add_ alpha": lambda lib: _half(lib).add_(_half(lib), alpha=70000).float(),
    "sub_ alpha": lambda lib: _half(lib).sub_(_half(lib), alpha=70000).float(),
    "rsub alpha": lambda lib: lib.rsub(_half(lib), _half(lib), alpha=70000).float(),
    "add number alpha": lambda lib: lib.add(_half(lib), 2, alpha=70000).float(),
    "sub alpha with grad": lambda lib: lib.sub(
        _half(lib).requires_grad_(), _half(lib), alpha=70000
    )
    .detach()
    .float(),
    "add alpha float32 1e39": lambda lib: lib.add(
        lib.tensor([1.0]), lib.tensor([1.0]), alpha=1e39
    ),
    "add alpha int8 1000": lambda lib: lib.add(
        lib.tensor([1], dtype=lib.int8), lib.tensor([1], dtype=lib.int8), alpha=1000
    ),
    "add alpha bfloat16": lambda lib: lib.add(
        _bf16(lib), _bf16(lib), alpha=1e39
    ).float(),
    "add number computes": lambda lib: (_half(lib) + 70000).float(),
    "mul number in float32": lambda lib: (_half(lib) * 70000).float(),
    "div number in float32": lambda lib: (_half(lib) / 70000).float(),
    "mul_ number in float32": lambda lib: _half(lib).mul_(70000).float(),
    "fill_": lambda lib: _half(lib).fill_(70000).float(),
    "fill_ bfloat16": lambda lib: _bf16(lib).fill_(1e39).float(),
    "full": lambda lib: lib.full((2,), 70000, dtype=lib.float16).float(),
    "masked_fill": lambda lib: _half(lib).masked_fill(_mask(lib), 70000).float(),
    "masked_fill_": lambda lib: _half(lib).masked_fill_(_mask(lib), 70000).float(),
    "masked_fill 0-d tensor": lambda lib: _half(lib)
    .masked_fill(_mask(lib), lib.tensor(70000.0))
    .float(),
    "masked_fill inf": lambda lib: _half(lib)
    .masked_fill(_mask(lib), float("inf"))
    .float(),
    "masked_fill int8": lambda lib: lib.tensor([1, 2], dtype=lib.int8).masked_fill(
        _mask(lib), 1000
    ),
    "masked_fill float32 1e39": lambda lib: lib.tensor([1.0, 2.0]).masked_fill(
        _mask(lib), 1e39
    ),
    "index_fill": lambda lib: _half(lib).index_fill(0, lib.tensor([0]), 70000).float(),
    "index_fill_ int8": lambda lib: lib.tensor([1, 2], dtype=lib.int8).index_fill_(
        0, lib.tensor([0]), 1000
    ),
    "where computes": lambda lib: lib.where(_mask(lib), _half(lib), 70000).float(),
    "lt": lambda lib: _half(lib) < 70000,
    "eq 1e39": lambda lib: lib.tensor([float("inf"), 1.0], dtype=lib.float16) == 1e39,
    "gt 65520": lambda lib: lib.tensor([float("inf"), 1.0], dtype=lib.float16) > 65520,
    "hardtanh": lambda lib: lib.nn.functional.hardtanh(
        _half(lib), -70000, 70000
    ).float(),
    "hardtanh int8": lambda lib: lib.nn.functional.hardtanh(
        lib.tensor([1, 2], dtype=lib.int8), -1000, 1000
    ),
    "hardtanh float32": lambda lib: lib.nn.functional.hardtanh(
        lib.tensor([1.0]), -1e39, 1e39
    ),
    "addcmul in float32": lambda lib: lib.addcmul(
        _half(lib), _half(lib), _half(lib), value=70000
    ).float(),
    "addcdiv in float32": lambda lib: lib.addcdiv(
        _half(lib), _half(lib), _half(lib), value=70000
    ).float(),
    "addcmul float overflow": lambda lib: lib.addcmul(
        _half(lib), _half(lib), _half(lib), value=1e39
    ).float(),
    "lerp in float32": lambda lib: lib.lerp(_half(lib), _half(lib), 70000).float(),
    "setitem inf": lambda lib: _set(_half(lib), 0, 70000),
    "setitem slice inf": lambda lib: _set(_half(lib), slice(0, 1), -70000),
    "setitem mask inf": lambda lib: _set(_half(lib), _mask(lib), 1e300),
    "setitem bfloat16 inf": lambda lib: _set(_bf16(lib), 0, 1e39),
    "setitem float32 refuses": lambda lib: _set(lib.tensor([1.0]), 0, 1e39),
    "setitem int8 refuses": lambda lib: _set(lib.tensor([1], dtype=lib.int8), 0, 1000),
    "tensor bfloat16 1e39": lambda lib: lib.tensor([1e39], dtype=lib.bfloat16).float(),
    "linspace": lambda lib: lib.linspace(0, 70000, 3, dtype=lib.float16).float(),
    "linspace float32": lambda lib: lib.linspace(0, 1e39, 3),
    "linspace bfloat16": lambda lib: lib.linspace(
        0, 1e39, 3, dtype=lib.bfloat16
    ).float(),
}


@pytest.mark.parametrize("case", list(CASES))
def test_scalar_overflow_as_pytorch(case: str) -> None:
    with warnings.catch_warnings(record=True) as caught:  # the filters as they are
        same_outcome(CASES[case])
    # PyTorch computes these without a word: no numpy overflow warning either
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], case
