"""Custom autograd Functions inside gradgen.func transforms against torch.func:
setup_context, the vmap staticmethod, generate_vmap_rule=True, and PyTorch's errors
(recorded in tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradgen
from torch_oracle import oracle

from .common import BATCH, assert_same, errors, plain


def _functions(lib: Any) -> dict[str, Any]:
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any, scale: float) -> Any:
            return x**3 * scale

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(inputs[0])
            ctx.scale = inputs[1]

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 3 * grad * x**2 * ctx.scale, None

    class Mul(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any, y: Any) -> Any:
            return x * y, x + y

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + g2

    class Sort(lib.autograd.Function):
        """A vmap staticmethod: the batch moved to the end and back (out_dims)."""

        @staticmethod
        def forward(x: Any) -> Any:
            return x.exp()

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (out,) = ctx.saved_tensors
            return grad * out

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any) -> Any:
            moved = x.movedim(in_dims[0], -1) if in_dims[0] is not None else x
            return Sort.apply(moved) * info.batch_size, -1

    class NoSetup(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    class NoVmap(lib.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x * 2

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    class Both(NoVmap):
        generate_vmap_rule = True

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any) -> Any:
            return x * 2, in_dims[0]

    return {
        "Cube": Cube,
        "Mul": Mul,
        "Sort": Sort,
        "NoSetup": NoSetup,
        "NoVmap": NoVmap,
        "Both": Both,
    }


def _results(lib: Any) -> dict[str, Any]:
    F, fn = lib.func, _functions(lib)
    cube, mul, sort = fn["Cube"].apply, fn["Mul"].apply, fn["Sort"].apply
    x = lib.tensor(BATCH[:, :, 0], dtype=lib.float64)
    y = lib.tensor(BATCH[:, :, 1], dtype=lib.float64)
    leaf = lib.tensor(BATCH[:, :, 0], dtype=lib.float64, requires_grad=True)
    out = F.vmap(lambda a: cube(a, 2.0))(leaf)
    out.sum().backward()
    return {
        "vmap": F.vmap(lambda a: cube(a, 2.0))(x),
        "vmap two outputs": F.vmap(mul)(x, y),
        "vmap unbatched y": F.vmap(mul, (0, None))(x, y[0]),
        "grad": F.grad(lambda a: cube(a, 0.5).sum())(x[0]),
        "vmap grad": F.vmap(F.grad(lambda a: cube(a, 0.5).sum()))(x),
        "vmap grad two": F.vmap(F.grad(lambda a, b: mul(a, b)[0].sum(), (0, 1)))(x, y),
        "jacrev": F.jacrev(lambda a: cube(a, 1.0))(x[0]),
        "vmap jacrev": F.vmap(F.jacrev(lambda a: cube(a, 1.0)))(x),
        "backward after vmap": leaf.grad,
        "vmap staticmethod": F.vmap(sort)(x),
        "vmap staticmethod in_dim 1": F.vmap(sort, 1)(x),
        "vmap grad staticmethod": F.vmap(F.grad(lambda a: sort(a).sum()))(x),
    }


def test_custom_functions_under_transforms_match_torch() -> None:
    ours = plain(_results(gradgen))
    theirs = oracle("results", lambda torch: plain(_results(torch)))
    assert_same(ours, theirs)


def _error_calls(lib: Any) -> dict[str, Any]:
    F, fn = lib.func, _functions(lib)
    x = lib.tensor(BATCH[:, :, 0], dtype=lib.float64)
    return {
        "no setup_context grad": lambda: F.grad(lambda a: fn["NoSetup"].apply(a).sum())(
            x[0]
        ),
        "no setup_context vmap": lambda: F.vmap(fn["NoSetup"].apply)(x),
        "no vmap": lambda: F.vmap(fn["NoVmap"].apply)(x),
        "both": lambda: F.vmap(fn["Both"].apply)(x),
        "staticmethod default": lambda: lib.autograd.Function.vmap(None, (0,), x),
    }


def test_errors_match_torch() -> None:
    ours = errors(_error_calls(gradgen))
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(ours, theirs)


def test_outside_transforms_a_function_without_setup_context_still_works() -> None:
    fn = _functions(gradgen)
    x = gradgen.tensor(np.array([1.0, 2.0]), requires_grad=True)
    fn["NoSetup"].apply(x).sum().backward()
    assert np.allclose(x.grad.numpy(), [2.0, 2.0])


def test_the_generated_rule_records_one_node_for_the_batch() -> None:
    """The forward under vmap runs once on the batch: the output's value has one
    grad_fn, the generated Function's (not one per example)."""
    cube = _functions(gradgen)["Cube"].apply
    x = gradgen.tensor(BATCH[:, :, 0], requires_grad=True)
    seen = []

    def f(a: Any) -> Any:
        out = cube(a, 1.0)
        seen.append(gradgen.func.debug_unwrap(out).grad_fn.name())
        return out

    gradgen.func.vmap(f)(x)
    assert seen == ["VmappedCubeBackward"]
