"""Generator limits met by the resampling family's pasted formulas (codegen)."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.codegen import generate
from gradgen.codegen.cpp_spelling import parse_formula


def _read(text: str) -> str:
    return ast.unparse(parse_formula(text, "formula"))


@pytest.mark.parametrize(
    ("cpp", "python"),
    [
        # channel_shuffle's backward: C++ divides integers
        (
            "channel_shuffle_symint(grad, grad.sym_size(1) / groups)",
            "channel_shuffle(grad, grad.sym_sizes()[1] // groups)",
        ),
        ("self.numel() / 2", "self.numel() // 2"),
        ("self.dim() / 2 ? a : b", "a if self.dim() // 2 else b"),
        # a tensor divided stays a true division
        ("grad / self.sym_size(0)", "grad / self.sym_sizes()[0]"),
        ("grad / 2", "grad / 2"),
    ],
)
def test_a_size_divided_is_integer_division(cpp: str, python: str) -> None:
    assert _read(cpp) == python


# -- a generated package: output sizes and named cotangents -------------------------

NATIVE = """\
- func: twice(Tensor self) -> Tensor
  variants: function
  numpy: self * 2

- func: halves(Tensor self) -> (Tensor low, Tensor high)
  variants: function
  numpy: (np.floor(self), self * 3)

- func: scaled(Tensor self) -> (Tensor twice, Tensor square)
  variants: function
  numpy: (self * 2, self * self)
"""
DERIVATIVES = """\
- name: twice(Tensor self) -> Tensor
  self: sum_to(grad, result.sym_sizes()) * 2

- name: halves(Tensor self) -> (Tensor low, Tensor high)
  self: grad_high * 3
  output_differentiability: [False, True]

- name: scaled(Tensor self) -> (Tensor twice, Tensor square)
  self: grads[0] * 2 + grads[1] * 2 * self
  twice, square: "std::make_tuple(self_t * 2, 2 * self_p * self_t)"
"""


@pytest.fixture()
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "derivatives.yaml").write_text(DERIVATIVES)
    generate(
        tmp_path / "native_functions.yaml",
        tmp_path / "derivatives.yaml",
        tmp_path / "sizeops",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("sizeops")
    for name in [n for n in sys.modules if n == "sizeops" or n.startswith("sizeops.")]:
        del sys.modules[name]


def test_an_output_size_is_saved_after_the_kernel_runs(package: Any) -> None:
    """`result.sym_sizes()` in a formula: the output's sizes, saved once it exists."""
    x = gradgen.tensor([1.5, 2.0, -1.0], requires_grad=True)
    package.twice(x).backward(gradgen.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_named_cotangents_count_the_differentiable_outputs(package: Any) -> None:
    """With output_differentiability [False, True], the node has one cotangent: the
    second output's, which `grad_high` names."""
    x = gradgen.tensor([1.5, 2.0], requires_grad=True)
    low, high = package.halves(x)
    assert low.grad_fn is None and not low.requires_grad
    high.backward(gradgen.tensor([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, -3.0])


def test_a_forward_key_naming_several_outputs_gives_each_its_tangent(
    package: Any,
) -> None:
    """`twice, square: std::make_tuple(...)`: one tangent per output (PyTorch's
    slogdet and eig spell their JVPs so); it used to be left out of the generated
    code, and forward AD refused the operator."""
    forward_ad = gradgen.autograd.forward_ad
    with forward_ad.dual_level():
        x = forward_ad.make_dual(
            gradgen.tensor([1.5, -2.0]), gradgen.tensor([1.0, 0.5])
        )
        twice, square = package.scaled(x)
        np.testing.assert_array_equal(
            forward_ad.unpack_dual(twice).tangent.numpy(), [2.0, 1.0]
        )
        np.testing.assert_array_equal(
            forward_ad.unpack_dual(square).tangent.numpy(), [3.0, -2.0]
        )
