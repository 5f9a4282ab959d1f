"""`python_module:` (PyTorch's key): linalg/special/fft operators are functions of
gradgen.linalg (...) under their name without the prefix, and formulas call them by
the operator's name."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import gradgen
from gradgen.codegen import generate
from torch_oracle import oracle

NATIVE = """\
- func: linalg_twice(Tensor self) -> Tensor
  python_module: linalg
  numpy: self * 2

- func: special_thrice(Tensor self) -> Tensor
  python_module: special
  numpy: self * 3

- func: square_it(Tensor self) -> Tensor
  python_module: nn
  numpy: self * self
"""
# The formulas call the namespace functions by their operator names.
DERIVATIVES = """\
- name: linalg_twice(Tensor self) -> Tensor
  self: linalg_twice(grad)

- name: special_thrice(Tensor self) -> Tensor
  self: special_thrice(grad)

- name: square_it(Tensor self) -> Tensor
  self: linalg_twice(grad * self)
"""


@pytest.fixture()
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "derivatives.yaml").write_text(DERIVATIVES)
    generate(
        tmp_path / "native_functions.yaml",
        tmp_path / "derivatives.yaml",
        tmp_path / "nsops",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("nsops")
    for name in [n for n in sys.modules if n == "nsops" or n.startswith("nsops.")]:
        del sys.modules[name]


def test_namespace_functions_go_to_their_module(package: Any) -> None:
    assert package.linalg.__all__ == ["twice"]
    assert package.special.__all__ == ["thrice"]
    assert package.fft.__all__ == []
    assert "square_it" in package.ops.__all__  # nn: gradgen.NAME
    for name in ("twice", "thrice", "linalg_twice", "special_thrice"):
        assert not hasattr(package.ops, name)


def test_formulas_call_namespace_functions_by_operator_name(package: Any) -> None:
    x = gradgen.tensor([1.0, -2.0], dtype=gradgen.float64, requires_grad=True)
    y = package.linalg.twice(x) + package.special.thrice(x) + package.square_it(x)
    y.backward(gradgen.tensor([1.0, 1.0], dtype=gradgen.float64))
    # d/dx (2x + 3x + x^2) = 5 + 2x, the last term computed by linalg_twice(grad * x)
    np.testing.assert_allclose(x.grad.numpy(), [7.0, 1.0])


def test_linalg_vector_norm_is_gradgen_linalg_vector_norm() -> None:
    data = np.array([[3.0, -4.0, 1.0], [0.5, 2.0, -2.0]])

    def run(lib: Any) -> list[Any]:
        x = lib.tensor(data, requires_grad=True)
        norms = lib.linalg.vector_norm(x, 3, dim=1)
        norms.sum().backward()
        return [norms.detach().numpy(), x.grad.numpy()]

    got = run(gradgen)
    want = oracle("vector_norm and its gradient", run)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert not hasattr(gradgen, "linalg_vector_norm")
    assert "vector_norm" in gradgen.linalg.__all__
