"""Type-checked, never run (it calls things with wrong arguments on purpose): the public API as a user's code sees it under mypy --strict.

`mypy` checks this file with src/ and codegen/ (pyproject.toml's [tool.mypy] `files`),
so each `assert_type` pins a public signature and each use pins a re-export; it is not
a test module (pytest collects only test_*.py). Operators generated into
gradgen.generated (`gradgen.add`, `t.mul`, ...) are in operators.py, beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from typing_extensions import assert_type

import gradgen
import gradgen.autograd
from gradgen.autograd import forward_ad
from gradgen.graph import Node, RemovableHandle

# Factories.
x = gradgen.tensor([1.0, 2.0], requires_grad=True)
assert_type(x, gradgen.Tensor)
assert_type(gradgen.tensor(np.zeros(3), dtype=np.float64), gradgen.Tensor)
assert_type(gradgen.zeros(2, 3, dtype=gradgen.float64), gradgen.Tensor)
assert_type(gradgen.ones((2, 3), dtype="float32"), gradgen.Tensor)
assert_type(gradgen.full((2,), 1.5), gradgen.Tensor)
assert_type(gradgen.zeros_like(x), gradgen.Tensor)
assert_type(gradgen.ones_like(x, dtype=gradgen.float64), gradgen.Tensor)
assert_type(gradgen.arange(0.0, 1.0, 0.25), gradgen.Tensor)
assert_type(gradgen.rand(3), gradgen.Tensor)
assert_type(gradgen.randn(2, 2, requires_grad=True), gradgen.Tensor)
assert_type(gradgen.manual_seed(0), gradgen.Generator)
gradgen.zeros(2.5)  # type: ignore[arg-type]  # sizes are ints

# dtypes.
assert_type(gradgen.float64, gradgen.dtype)
assert_type(gradgen.get_default_dtype(), gradgen.dtype)
assert_type(gradgen.set_default_dtype(gradgen.float32), None)

# Tensor attributes and methods.
assert_type(x.shape, gradgen.Size)
assert_type(x.dtype, gradgen.dtype)
assert_type(x.ndim, int)
assert_type(x.requires_grad, bool)
assert_type(x.grad, gradgen.Tensor | None)
assert_type(x.grad_fn, Node | None)
assert_type(x.is_leaf, bool)
assert_type(x.detach(), gradgen.Tensor)
assert_type(x.requires_grad_(), gradgen.Tensor)
assert_type(x.register_hook(lambda grad: grad * 2), RemovableHandle)
assert_type(x.item(), int | float | complex)
assert_type(x.numpy(), np.ndarray)
assert_type(x.numel(), int)
assert_type(x.dim(), int)
assert_type(x.is_complex(), bool)
assert_type(x.backward(), None)
assert_type(x * 2.0 + x - x / 3, gradgen.Tensor)
assert_type(x**2, gradgen.Tensor)
assert_type(-x, gradgen.Tensor)
x.grad = None

# Autograd.
y = x * x
assert_type(gradgen.autograd.grad(y, x), tuple[gradgen.Tensor | None, ...])
assert_type(gradgen.autograd.backward([y], [gradgen.ones(2)]), None)
assert_type(gradgen.autograd.gradcheck(lambda t: t * t, (x,), eps=1e-6), bool)
assert_type(gradgen.autograd.gradgradcheck(lambda t: t * t, (x,)), bool)

# Grad mode: context managers and decorators that keep the signature.
with gradgen.no_grad():
    pass
with gradgen.enable_grad(), gradgen.set_grad_enabled(False):
    pass
assert_type(gradgen.is_grad_enabled(), bool)


@gradgen.no_grad()
def scaled(t: gradgen.Tensor, factor: float) -> gradgen.Tensor:
    return t * factor


assert_type(scaled(x, 2.0), gradgen.Tensor)
# The decorated function keeps its parameters (warn_unused_ignores fails this line
# if the decorator ever returns an untyped callable).
scaled(x)  # type: ignore[call-arg]


@gradgen.autograd.detect_anomaly()
def shifted(t: gradgen.Tensor) -> gradgen.Tensor:
    return t + 1


assert_type(shifted(x), gradgen.Tensor)

# Forward AD.
with forward_ad.dual_level() as level:
    assert_type(level, int)
    dual = forward_ad.make_dual(x.detach(), gradgen.ones(2))
    assert_type(dual, gradgen.Tensor)
    primal, tangent = forward_ad.unpack_dual(dual)
    assert_type(primal, gradgen.Tensor)
    assert_type(tangent, gradgen.Tensor | None)
    assert_type(forward_ad.unpack_dual(dual).tangent, gradgen.Tensor | None)


# Custom Functions.
class Square(gradgen.autograd.Function):
    @staticmethod
    def forward(ctx: gradgen.autograd.FunctionCtx, a: gradgen.Tensor) -> gradgen.Tensor:
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    @gradgen.autograd.once_differentiable
    def backward(ctx: Any, grad: gradgen.Tensor) -> gradgen.Tensor:
        (a,) = ctx.saved_tensors
        result: gradgen.Tensor = 2 * a * grad
        return result


z: gradgen.Tensor = Square.apply(x)
