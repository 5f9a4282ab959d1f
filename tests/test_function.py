"""Custom autograd Functions (gradgen.autograd.function), against hand math and torch.

The torch comparisons define each Function once, in a factory taking the library and
its ``Function`` base, so the same code runs on both; the forwards compute with numpy
(``lib.tensor(np.exp(...))``) and the backwards with operators both libraries have.
PyTorch's answers are recorded in tests/golden/ (see torch_oracle.py).
"""

from __future__ import annotations

import gc
import re
import weakref
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import grad as autograd_grad
from gradgen.autograd.function import (
    Function,
    FunctionCtx,
    InplaceFunction,
    once_differentiable,
)
from gradgen.autograd.gradcheck import gradcheck
from gradgen.graph import AccumulateGrad, Node
from torch_oracle import oracle

F64 = gradgen.float64


def leaf(values: Any, dtype: Any = F64) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=dtype, requires_grad=True)


def ones(n: int, dtype: Any = F64) -> gradgen.Tensor:
    return gradgen.ones(n, dtype=dtype)


def make_functions(lib: Any, base: Any) -> dict[str, Any]:
    """The same custom Functions for gradgen (lib=gradgen) and torch (lib=torch)."""

    class Exp(base):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            result = lib.tensor(np.exp(x.detach().numpy()))
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (result,) = ctx.saved_tensors
            return grad * result

    class Mul(base):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            x, y = ctx.saved_tensors
            return grad * y, grad * x

    class Cube(base):
        """Differentiable backward: second order works through it."""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 3.0 * x**2

    class ScaleShift(base):
        """Non-Tensor arguments in the middle and at the end."""

        @staticmethod
        def forward(ctx: Any, x: Any, k: float, y: Any, name: str) -> Any:
            ctx.k = k
            ctx.label = name
            return x * k + y

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * ctx.k, None, grad, None

    class SplitScale(base):
        """Two outputs: 2x and 3x."""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx: Any, ga: Any, gb: Any) -> Any:
            return ga * 2.0 + gb * 3.0

    class WithIndex(base):
        """A differentiable output, a marked one, an integer one and a string."""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            marked = x * 3.0
            ctx.mark_non_differentiable(marked)
            index = lib.tensor(np.arange(3))
            return x * 2.0, marked, index, "label"

        @staticmethod
        def backward(ctx: Any, ga: Any, gm: Any, gi: Any, gs: Any) -> Any:
            ctx.seen = (ga, gm, gi, gs)
            return ga * 2.0

    class SetupMul(base):
        """The forward-without-ctx style, with a defaulted non-Tensor argument."""

        @staticmethod
        def forward(x: Any, y: Any, alpha: float = 2.0) -> Any:
            return x * y * alpha

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            x, y, alpha = inputs
            ctx.save_for_backward(x, y)
            ctx.alpha = alpha

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            x, y = ctx.saved_tensors
            return grad * y * ctx.alpha, grad * x * ctx.alpha, None

    return {
        "Exp": Exp,
        "Mul": Mul,
        "Cube": Cube,
        "ScaleShift": ScaleShift,
        "SplitScale": SplitScale,
        "WithIndex": WithIndex,
        "SetupMul": SetupMul,
    }


G = make_functions(gradgen, Function)
Exp, Mul, Cube = G["Exp"], G["Mul"], G["Cube"]


def torch_functions(torch: Any) -> dict[str, Any]:
    return make_functions(torch, torch.autograd.Function)


def as_numpy(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.detach().numpy())


# -- basics -----------------------------------------------------------------------------


def test_exp_forward_backward_and_node_identity() -> None:
    values = [0.0, 1.0, -2.0]
    x = leaf(values)
    y = Exp.apply(x)
    np.testing.assert_allclose(as_numpy(y), np.exp(values))
    assert type(y.grad_fn).__name__ == "ExpBackward"
    assert y.grad_fn.name() == "ExpBackward"
    assert isinstance(y.grad_fn, Node) and isinstance(y.grad_fn, FunctionCtx)
    assert repr(y).endswith("grad_fn=<ExpBackward>)")
    assert not y.is_leaf and y.requires_grad and y.output_nr == 0
    (edge,) = y.grad_fn.next_functions
    assert isinstance(edge[0], AccumulateGrad) and edge[0].variable is x
    y.backward(gradient=gradgen.tensor([1.0, 2.0, 3.0], dtype=F64))
    np.testing.assert_allclose(as_numpy(x.grad), np.exp(values) * [1.0, 2.0, 3.0])


def test_mul_gradients_and_chain_with_builtin_ops() -> None:
    x, y = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0, 6.0])
    z = Mul.apply(x * 2.0, y)  # the edge of x*2 is its MulBackward0
    assert z.grad_fn.next_functions[0][0].name() == "MulBackward0"
    z.backward(gradient=ones(3))
    np.testing.assert_allclose(as_numpy(x.grad), [8.0, 10.0, 12.0])
    np.testing.assert_allclose(as_numpy(y.grad), [2.0, 4.0, 6.0])


def test_no_graph_without_grad_or_under_no_grad() -> None:
    plain = gradgen.tensor([1.0, 2.0], dtype=F64)
    out = Exp.apply(plain)
    assert out.grad_fn is None and not out.requires_grad
    x = leaf([1.0, 2.0])
    with gradgen.no_grad():
        out = Exp.apply(x)
    assert out.grad_fn is None and not out.requires_grad


def test_forward_runs_under_no_grad() -> None:
    seen: list[bool] = []

    class Probe(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            seen.append(gradgen.is_grad_enabled())
            inner = x * 2.0  # not recorded
            assert inner.grad_fn is None
            return inner

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2.0

    out = Probe.apply(leaf([1.0]))
    assert seen == [False] and gradgen.is_grad_enabled()
    assert out.grad_fn.name() == "ProbeBackward"


def test_needs_input_grad_and_non_tensor_arguments() -> None:
    x = leaf([1.0, 2.0])
    y = gradgen.tensor([10.0, 20.0], dtype=F64)
    ScaleShift = G["ScaleShift"]
    out = ScaleShift.apply(x, 3.0, y, "tag")
    node = out.grad_fn
    assert node.needs_input_grad == (True, False, False, False)
    assert node.k == 3.0 and node.label == "tag"  # ctx attributes live on the node
    # One edge per Tensor argument only; y requires no grad so its edge is empty.
    assert len(node.next_functions) == 2
    assert node.next_functions[1] == (None, 0)
    out.backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), [3.0, 3.0])
    # needs_input_grad is also set without a graph (grad mode off).
    with gradgen.no_grad():
        captured: list[tuple[bool, ...]] = []

        class Peek(Function):
            @staticmethod
            def forward(ctx: Any, a: Any, b: Any) -> Any:
                captured.append(ctx.needs_input_grad)
                return a * 1.0

        Peek.apply(x, 5)
    assert captured == [(True, False)]


def test_keyword_arguments_are_bound_to_positions() -> None:
    class Scale(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float = 5.0) -> Any:
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * ctx.k, None

    x = leaf([1.0])
    out = Scale.apply(x, k=2.0)
    assert out.grad_fn.needs_input_grad == (True, False)
    out.backward(gradient=ones(1))
    assert x.grad.item() == 2.0
    with pytest.raises(TypeError, match="^forward\\(\\) got an unexpected keyword"):
        Scale.apply(x, c=1.0)
    with pytest.raises(TypeError, match="got multiple values for argument 'x'"):
        Scale.apply(x, x=1.0)


# -- against torch ----------------------------------------------------------------------


def test_same_functions_match_torch() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    cot = rng.standard_normal(4)

    def run(lib: Any, fns: dict[str, Any]) -> list[np.ndarray]:
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        e = fns["Exp"].apply(x)
        m = fns["Mul"].apply(e, y)
        s = fns["ScaleShift"].apply(m, 3.0, x, "n")
        p, q = fns["SplitScale"].apply(s)
        w = fns["SetupMul"].apply(p, y)
        out = w + q
        out.backward(lib.tensor(cot))
        return [as_numpy(out), as_numpy(x.grad), as_numpy(y.grad)]

    theirs = oracle("out and grads", lambda torch: run(torch, torch_functions(torch)))
    for got, want in zip(run(gradgen, G), theirs, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_non_differentiable_outputs_match_torch() -> None:
    def run(lib: Any, fns: dict[str, Any]) -> tuple[Any, ...]:
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        a, marked, index, label = fns["WithIndex"].apply(x)
        node = a.grad_fn
        flags = (a.requires_grad, marked.requires_grad, index.requires_grad, label)
        assert marked.grad_fn is None and index.grad_fn is None
        a.backward(lib.ones(3, dtype=lib.float64))
        ga, gm, gi, gs = node.seen
        return (flags, as_numpy(ga), as_numpy(gm), as_numpy(gi), str(gi.dtype), gs)

    ours = run(gradgen, G)
    theirs = oracle("results", lambda torch: run(torch, torch_functions(torch)))
    assert ours[0] == theirs[0] == (True, False, False, "label")
    np.testing.assert_array_equal(ours[2], theirs[2])  # zeros for the marked output
    np.testing.assert_array_equal(ours[3], theirs[3])  # integer zeros
    assert ours[4].split(".")[-1] == theirs[4].split(".")[-1] == "int64"
    assert ours[5] is None and theirs[5] is None


def test_second_order_matches_torch() -> None:
    def run(lib: Any, fns: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = fns["Cube"].apply(x)
        (gx,) = lib.autograd.grad(
            y, x, grad_outputs=lib.ones(3, dtype=lib.float64), create_graph=True
        )
        (ggx,) = lib.autograd.grad(gx, x, grad_outputs=lib.ones(3, dtype=lib.float64))
        return as_numpy(gx), as_numpy(ggx)

    outs = [
        run(gradgen, G),
        oracle("g, gg", lambda torch: run(torch, torch_functions(torch))),
    ]
    np.testing.assert_allclose(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1])
    np.testing.assert_allclose(outs[0][1], 6.0 * np.array([0.5, -1.5, 2.0]))


# -- gradcheck --------------------------------------------------------------------------


def test_gradcheck_on_custom_functions() -> None:
    rng = np.random.default_rng(1)
    x = leaf(rng.standard_normal(3))
    y = leaf(rng.standard_normal(3))
    assert gradcheck(Exp.apply, (x,))
    assert gradcheck(Mul.apply, (x, y))
    assert gradcheck(Cube.apply, (x,))
    assert gradcheck(lambda a: G["SplitScale"].apply(a), (x,))
    assert gradcheck(lambda a, b: G["SetupMul"].apply(a, b, 0.5), (x, y))


def test_gradcheck_catches_a_wrong_backward() -> None:
    class WrongExp(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return gradgen.tensor(np.exp(x.detach().numpy()))

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2.0

    x = leaf([0.1, 0.2])
    assert not gradcheck(WrongExp.apply, (x,), raise_exception=False)


# -- materialization and several outputs -----------------------------------------------


def test_unused_output_gradient_is_zeros_by_default() -> None:
    x = leaf([1.0, 2.0])
    a, b = G["SplitScale"].apply(x)
    assert (a.output_nr, b.output_nr) == (0, 1)
    assert a.grad_fn is b.grad_fn
    a.backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), [2.0, 2.0])


def test_set_materialize_grads_false_gives_none() -> None:
    seen: list[Any] = []

    class Pair(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.set_materialize_grads(False)
            return x * 1.0, x * 1.0

        @staticmethod
        def backward(ctx: Any, ga: Any, gb: Any) -> Any:
            seen.extend([ga, gb])
            return ga

    x = leaf([1.0, 2.0])
    a, _ = Pair.apply(x)
    a.backward(gradient=ones(2))
    assert isinstance(seen[0], gradgen.Tensor) and seen[1] is None


def test_broadcast_gradient_is_reduced_by_the_engine() -> None:
    class Widen(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return gradgen.ones((2, 3), dtype=F64) * grad

    x = leaf([1.0, 2.0, 3.0])
    Widen.apply(x).backward(gradient=ones(3))
    np.testing.assert_allclose(as_numpy(x.grad), [2.0, 2.0, 2.0])


def test_trailing_nones_are_allowed() -> None:
    class Extra(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2.0

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2.0, None, None

    x = leaf([1.0])
    Extra.apply(x).backward(gradient=ones(1))
    assert x.grad.item() == 2.0


# -- error messages ---------------------------------------------------------------------


def _backward_returning(value_fn: Any, n_args: int = 2) -> type[Function]:
    class MyFn(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, *rest: Any) -> Any:
            return x * 2.0

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return value_fn(grad)

    return MyFn


def test_wrong_number_of_gradients() -> None:
    MyFn = _backward_returning(lambda g: g)
    out = MyFn.apply(leaf([1.0, 2.0, 3.0]), leaf([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError) as info:
        out.backward(gradient=ones(3))
    assert str(info.value) == (
        "function MyFnBackward returned an incorrect number of gradients "
        "(expected 2, got 1)"
    )
    MyFn = _backward_returning(lambda g: (g, None, 1))
    with pytest.raises(RuntimeError, match=re.escape("(expected 1, got 3)")):
        MyFn.apply(leaf([1.0])).backward(gradient=ones(1))


def test_wrong_gradient_shape() -> None:
    MyFn = _backward_returning(lambda g: gradgen.ones(4, dtype=F64))
    out = MyFn.apply(leaf([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError) as info:
        out.backward(gradient=ones(3))
    assert str(info.value) == (
        "Function MyFnBackward returned an invalid gradient at index 0 - got [4] but "
        "expected shape compatible with [3]"
    )


def test_gradient_for_a_non_tensor_argument_or_of_a_wrong_type() -> None:
    MyFn = _backward_returning(lambda g: (g, g))
    out = MyFn.apply(leaf([1.0]), 2.0)
    with pytest.raises(RuntimeError) as info:
        out.backward(gradient=ones(1))
    assert str(info.value) == (
        "function MyFnBackward returned a gradient different than None at position 2, "
        "but the corresponding forward input was not a Variable"
    )
    MyFn = _backward_returning(lambda g: [g])
    with pytest.raises(RuntimeError, match=r"^expected Variable or None \(got list\)$"):
        MyFn.apply(leaf([1.0])).backward(gradient=ones(1))


def test_save_for_backward_rejects_non_tensors() -> None:
    class Bad(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x, 3)
            return x * 1.0

    with pytest.raises(TypeError) as info:
        Bad.apply(leaf([1.0]))
    assert str(info.value) == (
        "save_for_backward can only save variables, but argument 1 is of type int"
    )
    Bad.apply(gradgen.tensor([1.0]))  # not recorded: nothing is saved, no error


def test_missing_methods() -> None:
    class NoBackward(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 1.0

    with pytest.raises(NotImplementedError, match="implement either the backward or"):
        NoBackward.apply(leaf([1.0])).backward(gradient=ones(1))

    class NoForward(Function):
        pass

    with pytest.raises(NotImplementedError, match="implement the forward function"):
        NoForward.apply(leaf([1.0]))
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        instance = NoForward()
    with pytest.raises(RuntimeError, match="^Legacy autograd function"):
        instance(1)


def test_backward_twice_and_retain_graph() -> None:
    x = leaf([0.0, 1.0])
    y = Exp.apply(x)
    node = y.grad_fn
    y.backward(gradient=ones(2), retain_graph=True)
    y.backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), 2 * np.exp([0.0, 1.0]))
    with pytest.raises(
        RuntimeError, match="^Trying to backward through the graph a second time"
    ):
        y.backward(gradient=ones(2))
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph"):
        node.saved_tensors


def test_saved_tensor_modified_in_place_is_detected() -> None:
    x = leaf([1.0, 2.0])
    h = x * 1.0
    y = Mul.apply(h, h)
    h.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(gradient=ones(2))


# -- hooks, grad(), saved tensors' lifetime --------------------------------------------


def test_hooks_grad_and_retain_grad() -> None:
    x = leaf([1.0, 2.0])
    y = Exp.apply(x)
    calls: list[np.ndarray] = []
    y.register_hook(lambda g: calls.append(as_numpy(g)) or g * 10.0)
    y.retain_grad()
    post: list[Any] = []
    y.grad_fn.register_hook(lambda gi, go: post.append((gi, go)))
    (gx,) = autograd_grad(y, x, grad_outputs=ones(2))
    np.testing.assert_allclose(calls[0], [1.0, 1.0])
    np.testing.assert_allclose(as_numpy(gx), 10.0 * np.exp([1.0, 2.0]))
    assert x.grad is None  # grad() does not accumulate
    assert len(post) == 1 and len(post[0][0]) == 1 and len(post[0][1]) == 1


def test_saved_intermediate_is_freed_after_backward() -> None:
    refs: list[weakref.ref[gradgen.Tensor]] = []

    class Square(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            doubled = x * 2.0  # an intermediate: neither input nor output
            refs.append(weakref.ref(doubled))
            ctx.save_for_backward(doubled)
            return x * x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (doubled,) = ctx.saved_tensors
            return grad * doubled

    x = leaf([3.0])
    y = Square.apply(x)
    assert refs[0]() is not None
    y.backward(gradient=ones(1), retain_graph=True)
    assert refs[0]() is not None  # retained
    y.backward(gradient=ones(1))
    assert refs[0]() is None  # released with the graph
    assert x.grad.item() == 12.0


def test_saved_output_makes_no_reference_cycle() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        x = leaf([0.0, 1.0])
        y = Exp.apply(x)
        saved = y.grad_fn.saved_tensors[0]
        assert saved is not y and saved.grad_fn is y.grad_fn  # rebuilt on unpack
        del saved
        node_ref = weakref.ref(y.grad_fn)
        out_ref = weakref.ref(y)
        del y
        assert out_ref() is None and node_ref() is None  # refcounting alone frees them
    finally:
        if was_enabled:
            gc.enable()


def test_ctx_marks_do_not_keep_outputs_alive() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        out_ref = None

        class Marks(Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                a, b = x * 1.0, x * 2.0
                ctx.mark_non_differentiable(b)
                ctx.save_for_backward(a)
                return a, b

            @staticmethod
            def backward(ctx: Any, ga: Any, gb: Any) -> Any:
                return ga

        a, b = Marks.apply(leaf([1.0]))
        node_ref = weakref.ref(a.grad_fn)
        out_ref = weakref.ref(a)
        del a, b
        assert out_ref() is None and node_ref() is None
    finally:
        if was_enabled:
            gc.enable()


# -- second order, once_differentiable ---------------------------------------------------


def test_second_order_through_differentiable_backward() -> None:
    x = leaf([1.0, 2.0])
    y = Cube.apply(x)
    (gx,) = autograd_grad(y, x, grad_outputs=ones(2), create_graph=True)
    np.testing.assert_allclose(as_numpy(gx), [3.0, 12.0])
    assert gx.requires_grad
    (ggx,) = autograd_grad(gx, x, grad_outputs=ones(2))
    np.testing.assert_allclose(as_numpy(ggx), [6.0, 12.0])


def test_saved_output_second_order() -> None:
    # d/dx (exp(x) * g) flows back through the saved output, i.e. the node itself.
    x = leaf([0.0, 1.0])
    y = Exp.apply(x)
    (gx,) = autograd_grad(y, x, grad_outputs=ones(2), create_graph=True)
    (ggx,) = autograd_grad(gx, x, grad_outputs=ones(2))
    np.testing.assert_allclose(as_numpy(ggx), np.exp([0.0, 1.0]))


class OnceCube(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Any) -> Any:
        assert not gradgen.is_grad_enabled()
        (x,) = ctx.saved_tensors
        return grad * 3.0 * x**2


def test_once_differentiable_first_order() -> None:
    x = leaf([1.0, 2.0])
    OnceCube.apply(x).backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), [3.0, 12.0])
    # create_graph with a constant incoming gradient: plain result, no error node.
    (gx,) = autograd_grad(OnceCube.apply(x), x, grad_outputs=ones(2), create_graph=True)
    assert not gx.requires_grad


def test_once_differentiable_refuses_double_backward() -> None:
    x = leaf([1.0, 2.0])
    y = OnceCube.apply(x)
    z = y * y  # makes the gradient reaching OnceCube require grad
    (gx,) = autograd_grad(z, x, grad_outputs=ones(2), create_graph=True)
    np.testing.assert_allclose(as_numpy(gx), 2 * np.array([1.0, 8.0]) * [3.0, 12.0])
    assert type(gx.grad_fn).__name__ == "Error"
    with pytest.raises(RuntimeError) as info:
        gx.backward(gradient=ones(2))
    assert str(info.value) == (
        "trying to differentiate twice a function that was marked with "
        "@once_differentiable"
    )


# -- setup_context style --------------------------------------------------------------


def test_setup_context_style() -> None:
    SetupMul = G["SetupMul"]
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    out = SetupMul.apply(x, y)  # alpha defaults to 2.0
    assert out.grad_fn.name() == "SetupMulBackward"
    assert out.grad_fn.needs_input_grad == (True, True, False)
    out.backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), [6.0, 8.0])
    np.testing.assert_allclose(as_numpy(y.grad), [2.0, 4.0])
    x.grad = None
    SetupMul.apply(x, y, alpha=0.5).backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), [1.5, 2.0])


def test_setup_context_sees_no_grad_and_unwrapped_output() -> None:
    seen: list[Any] = []

    class Probe(Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x * 2.0

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            seen.append((gradgen.is_grad_enabled(), inputs, output.grad_fn))
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (out,) = ctx.saved_tensors
            return grad * 2.0

    x = leaf([1.0])
    out = Probe.apply(x)
    assert seen[0][0] is False and seen[0][1] == (x,) and seen[0][2] is None
    out.backward(gradient=ones(1))
    assert x.grad.item() == 2.0


def test_setup_context_cannot_save_an_input_returned_as_is() -> None:
    class Ident(Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

    with pytest.raises(RuntimeError, match="^An input that has been returned as-is"):
        Ident.apply(leaf([1.0]))


# -- inputs returned as outputs, mark_dirty -------------------------------------------


def test_input_returned_as_is_becomes_a_view_with_history() -> None:
    class Ident(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 3.0

    x = leaf([1.0, 2.0])
    out = Ident.apply(x)
    assert out is not x and out._base is x and x.is_leaf
    assert out.grad_fn.name() == "IdentBackward"
    out.backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), [3.0, 3.0])


def test_mark_dirty_rebases_the_input() -> None:
    class MulInPlace(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2.0

    x = leaf([1.0, 2.0])
    h = x * 1.0
    version = h._version
    previous = h.grad_fn
    out = MulInPlace.apply(h)
    assert out is h and h.grad_fn.name() == "MulInPlaceBackward"
    assert h._version == version + 2  # mul_ and mark_dirty, as PyTorch
    assert h.grad_fn.next_functions[0][0] is previous
    np.testing.assert_allclose(as_numpy(h), [2.0, 4.0])
    h.backward(gradient=ones(2))
    np.testing.assert_allclose(as_numpy(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError) as info:
        MulInPlace.apply(leaf([1.0]))
    assert str(info.value) == (
        "a leaf Variable that requires grad has been used in an in-place operation."
    )


def test_mark_dirty_requires_returning_the_tensor() -> None:
    class Forgetful(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2.0)
            ctx.mark_dirty(x)
            return x * 1.0

    with pytest.raises(RuntimeError, match="^Some elements marked as dirty"):
        Forgetful.apply(leaf([1.0]) * 1.0)


def test_inplace_function_is_a_function() -> None:
    assert issubclass(InplaceFunction, Function)


def test_ctx_attributes_the_engine_uses_are_protected() -> None:
    class Named(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.name = "tag"  # would shadow Node.name(), which the engine calls
            return x * 1.0

    with pytest.raises(AttributeError, match="attribute 'name' of 'NamedBackward'"):
        Named.apply(leaf([1.0]))


def test_marks_reject_non_tensors() -> None:
    class MarkInt(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.mark_non_differentiable(3)
            return x * 1.0

    with pytest.raises(RuntimeError, match="^mark_non_differentiable only accepts"):
        MarkInt.apply(leaf([1.0]))

    class DirtyInt(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.mark_dirty(3)
            return x * 1.0

    with pytest.raises(RuntimeError, match="^mark_dirty can only accept variables"):
        DirtyInt.apply(leaf([1.0]))


def test_vjp_alias_and_boxed_grads_call() -> None:
    class ViaVjp(Function):
        boxed_grads_call = True

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2.0

        @staticmethod
        def vjp(ctx: Any, grads: Any) -> Any:
            assert isinstance(grads, list) and len(grads) == 1
            return grads.pop() * 2.0

    x = leaf([1.0])
    ViaVjp.apply(x).backward(gradient=ones(1))
    assert x.grad.item() == 2.0
