"""Forward-mode AD through a custom Function calls its ``jvp`` (PyTorch's rule), tested
against torch: the same program runs on both libraries."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle


def _program(lib: Any, case: str) -> Any:
    """Run one case on `lib` (gradgen or torch); return its tangent or its error."""
    forward_ad = lib.autograd.forward_ad
    calls: list[str] = []

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, scale: float) -> Any:
            result = x.exp() * scale
            ctx.save_for_forward(result)
            return result

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad, None

        @staticmethod
        def jvp(ctx: Any, tangent: Any, scale_tangent: Any) -> Any:
            calls.append(f"scale tangent {scale_tangent}")
            (result,) = ctx.saved_tensors
            return {
                "exp": tangent * result,
                "count": (tangent, tangent),
                "not a tensor": 3,
                "shape": tangent[:1],
            }[case]

    class Product(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            return x * y, (x * y).gt(2.0)

        @staticmethod
        def jvp(ctx: Any, tx: Any, ty: Any) -> Any:
            calls.append(f"ty {ty.tolist()}")
            return tx + ty, (tx if case == "non-differentiable" else None)

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    x = lib.tensor([0.5, 1.0], dtype=lib.float64)
    y = lib.tensor([3.0, 4.0], dtype=lib.float64)
    try:
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, lib.tensor([1.0, -2.0], dtype=lib.float64))
            if case in ("product", "non-differentiable"):
                out, flag = Product.apply(dual, y)
                flag_tangent = forward_ad.unpack_dual(flag).tangent
                tangent = forward_ad.unpack_dual(out).tangent
                return tangent.numpy(), flag_tangent is None, calls
            if case == "no jvp":
                Twice.apply(dual)
            if case == "no tangent":
                out = Exp.apply(x, 2.0)
                return forward_ad.unpack_dual(out).tangent is None, calls
            out = Exp.apply(dual, 2.0)
            return forward_ad.unpack_dual(out).tangent.numpy(), calls
    except Exception as error:  # the error is the answer
        return error


CASES = [
    "exp",
    "count",
    "not a tensor",
    "shape",
    "product",
    "non-differentiable",
    "no jvp",
    "no tangent",
]


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, Exception):
        assert type(ours).__name__ == type(theirs).__name__, ours
        assert str(ours) == str(theirs)
        return
    assert not isinstance(ours, Exception), ours
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-15)
        else:
            assert a == b


@pytest.mark.parametrize("case", CASES)
def test_custom_function_jvp_matches_torch(case: str) -> None:
    _same(_program(gradgen, case), oracle(case, lambda torch: _program(torch, case)))


def test_jvp_value_by_hand() -> None:
    """d/dx 2 exp(x) . t = 2 exp(x) t, computed independently of both libraries."""
    tangent, calls = _program(gradgen, "exp")
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(tangent, 2 * np.exp(x) * np.array([1.0, -2.0]))
    assert calls == ["scale tangent None"]


def test_forward_runs_without_tangents() -> None:
    """Operators inside forward compute no tangents: jvp alone decides the result."""

    class Identityish(gradgen.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x.sin()

        @staticmethod
        def jvp(ctx: Any, tangent: Any) -> Any:
            return tangent * 0 + 7

    forward_ad = gradgen.autograd.forward_ad
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(
            gradgen.tensor([0.3], dtype=gradgen.float64),
            gradgen.tensor([1.0], dtype=gradgen.float64),
        )
        tangent = forward_ad.unpack_dual(Identityish.apply(dual)).tangent
    assert tangent.tolist() == [7.0]
