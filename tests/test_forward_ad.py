"""gradgen.autograd.forward_ad: dual tensors, levels, errors (PyTorch's semantics)."""

from __future__ import annotations

import numpy as np
import pytest

import gradgen
from gradgen.autograd import forward_ad as fwAD


def t(values):
    return gradgen.tensor(values, dtype=gradgen.float64)


def test_jvp_of_a_composition_matches_hand_math() -> None:
    x0, v = np.array([0.5, 2.0]), np.array([1.0, -3.0])
    with fwAD.dual_level():
        x = fwAD.make_dual(t(x0), t(v))
        y = (x**3 - 2.0 * x).sum()
        primal, tangent = fwAD.unpack_dual(y)
    assert primal.item() == pytest.approx(np.sum(x0**3 - 2 * x0))
    assert tangent.item() == pytest.approx(np.sum((3 * x0**2 - 2) * v))


def test_unpack_dual_returns_named_fields_and_none_without_tangent() -> None:
    with fwAD.dual_level():
        plain = t([1.0])
        unpacked = fwAD.unpack_dual(plain)
        assert unpacked.primal is plain and unpacked.tangent is None
        dual = fwAD.make_dual(t([1.0]), t([2.0]))
        assert fwAD.unpack_dual(dual).tangent.tolist() == [2.0]


def test_leaving_the_level_deletes_tangents() -> None:
    with fwAD.dual_level():
        dual = fwAD.make_dual(t([1.0]), t([2.0]))
        y = dual * 3.0
    assert fwAD.unpack_dual(y).tangent is None
    assert y._fw_grad is None and dual._fw_grad is None


def test_forward_over_reverse_and_reverse_through_dual() -> None:
    x = t([2.0])
    x.requires_grad_()
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t([1.0]))
        y = dual**3
        _, tangent = fwAD.unpack_dual(y)  # 3x^2 = 12
        (grad_of_tangent,) = gradgen.autograd.grad(tangent.sum(), x)  # d(3x^2)/dx = 6x
    assert tangent.item() == 12.0 and grad_of_tangent.item() == 12.0


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: fwAD.make_dual(t([1.0]), t([1.0])),
            RuntimeError,
            "Trying to create a dual Tensor for forward AD but no level exists, make sure "
            "to enter_dual_level() first.",
        ),
    ],
)
def test_errors_outside_a_level(call, error, message) -> None:
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value) == message


def test_errors_inside_a_level() -> None:
    with fwAD.dual_level():
        with pytest.raises(RuntimeError) as raised:
            fwAD.make_dual(t([1.0, 2.0, 3.0]), t([1.0] * 4))
        assert str(raised.value) == (
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size [3] while the "
            "given forward gradient is of size [4]."
        )
        with pytest.raises(ValueError) as raised:
            fwAD.make_dual(gradgen.tensor([1, 2]), t([1.0, 2.0]))
        assert str(raised.value) == (
            "Expected primal to be floating point or complex, but got: gradgen.int64"
        )
        with pytest.raises(
            RuntimeError,
            match="^Nested forward mode AD is not supported at the moment$",
        ):
            with fwAD.dual_level():
                pass


def test_operator_without_a_forward_formula_refuses(tmp_path, monkeypatch) -> None:
    import importlib
    from pathlib import Path

    from gradgen.codegen import generate

    fixtures = Path(__file__).resolve().parent / "fixtures" / "features"
    generate(
        fixtures / "native_functions.yaml",
        fixtures / "derivatives.yaml",
        tmp_path / "fwfeatures",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ops = importlib.import_module("fwfeatures")
    with fwAD.dual_level():
        dual = fwAD.make_dual(t([1.0]), t([1.0]))
        with pytest.raises(RuntimeError) as raised:
            ops.product(dual, t([2.0]))
    assert str(raised.value).startswith(
        "Trying to use forward AD with product that does not support it because it has "
        "not been implemented yet."
    )
