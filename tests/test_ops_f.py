"""Batch F (activations, losses, normalization, embedding, padding, dropout) against
PyTorch, beyond the operator table: float32/float64/integer dtypes, every reduction,
parameters, error messages, second derivatives, forward mode, the in-place variants
and gradgen.nn.functional's signatures and messages.

PyTorch binds most of these in torch._C._nn, whose Python default for `reduction`
reads the schema's `Mean` as 0: these tests always pass `reduction`.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import forward_ad, gradcheck, gradgradcheck
from torch_oracle import numbered, oracle, outcome

# torch.autograd.forward_ad's first use scripts a function with torch.jit (deprecated).
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

NONE, MEAN, SUM = 0, 1, 2
REDUCTIONS = [NONE, MEAN, SUM]
TOLERANCE = {"float64": 1e-12, "float32": 2e-6}


def _arrays(seed: int, *shapes: tuple[int, ...], dtype: str = "float64") -> list[Any]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, shape).astype(dtype) for shape in shapes]


def _nn(torch: Any, name: str) -> Callable[..., Any]:
    """torch._C._nn.NAME, else torch.NAME, else torch.ops.aten.NAME."""
    for namespace in (torch._C._nn, torch):
        if hasattr(namespace, name):
            return getattr(namespace, name)  # type: ignore[no-any-return]
    return getattr(torch.ops.aten, name)  # type: ignore[no-any-return]


def _dtype_name(t: Any) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _flags(arrays: list[Any], requires_grad: Any) -> list[bool]:
    if isinstance(requires_grad, (list, tuple)):
        return list(requires_grad)
    return [requires_grad] * len(arrays)


def _run(
    lib: Any, fn: Callable[..., Any], arrays: list[Any], flags: list[bool], seed: int
) -> dict[str, Any]:
    """fn(*tensors of lib): value, dtype, shape, grad_fn name and, when it requires
    grad, the gradients of the inputs that require grad for one seeded cotangent."""
    inputs = [lib.tensor(a, requires_grad=f) for a, f in zip(arrays, flags)]
    out = fn(*inputs)
    answer: dict[str, Any] = {
        "dtype": _dtype_name(out),
        "shape": tuple(out.shape),
        "out": out.detach().numpy(),
        "grad_fn": None if out.grad_fn is None else out.grad_fn.name(),
    }
    grad_inputs = [i for i, t in enumerate(inputs) if t.requires_grad]
    if out.requires_grad and grad_inputs:
        cotangent = np.random.default_rng(seed).uniform(-1, 1, tuple(out.shape))
        cotangent = cotangent.astype(arrays[grad_inputs[0]].dtype)
        grads = lib.autograd.grad(
            out, [inputs[i] for i in grad_inputs], lib.tensor(cotangent)
        )
        answer["grads"] = [g.numpy() for g in grads]
    return answer


def _check_against_torch(
    ours_fn: Callable[..., Any],
    theirs_fn: Callable[[Any], Callable[..., Any]],
    arrays: list[Any],
    requires_grad: Any = True,
    seed: int = 7,
    rtol: float | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Values, dtype, shape, grad_fn name and (for inputs requiring grad) gradients of
    ours_fn equal those of theirs_fn(torch) (recorded, see torch_oracle). Returns both
    answers (see _run)."""
    flags = _flags(arrays, requires_grad)
    expected = oracle(
        numbered("check"),
        lambda torch: _run(torch, theirs_fn(torch), arrays, flags, seed),
    )
    out = _run(gradgen, ours_fn, arrays, flags, seed)
    assert out["dtype"] == expected["dtype"]
    assert out["shape"] == expected["shape"]
    tolerance = rtol if rtol is not None else TOLERANCE.get(out["dtype"], 0)
    np.testing.assert_allclose(
        out["out"], expected["out"], rtol=tolerance, atol=tolerance
    )
    if "grads" in expected:
        assert out["grad_fn"] == expected["grad_fn"]
        assert "grads" in out and len(out["grads"]) == len(expected["grads"])
        for g, w in zip(out["grads"], expected["grads"]):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=10 * tolerance, atol=10 * tolerance)
    return out, expected


def _second(
    lib: Any, fn: Callable[..., Any], arrays: list[Any], seed: int
) -> list[Any]:
    """d/dx <w, d f/dx . v> (create_graph=True, then a second grad)."""
    rng = np.random.default_rng(seed)
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*inputs)
    cotangent = rng.uniform(-1, 1, tuple(out.shape))
    first = lib.autograd.grad(out, inputs, lib.tensor(cotangent), create_graph=True)
    weights = [rng.uniform(-1, 1, a.shape) for a in arrays]
    total = sum((g * lib.tensor(w)).sum() for g, w in zip(first, weights))
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return [None if g is None else g.numpy() for g in second]


def _second_derivatives_match(
    ours_fn: Callable[..., Any],
    theirs_fn: Callable[[Any], Callable[..., Any]],
    arrays: list[Any],
    seed: int = 11,
) -> None:
    """d/dx <w, d f/dx . v> against torch's (recorded, see torch_oracle)."""
    expected = oracle(
        numbered("second"), lambda torch: _second(torch, theirs_fn(torch), arrays, seed)
    )
    got = _second(gradgen, ours_fn, arrays, seed)
    for g, w in zip(got, expected, strict=True):
        if w is None:
            assert g is None or not np.any(g)
            continue
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def _same_error(
    ours: Callable[[], Any], theirs: Callable[[Any], Callable[[], Any]]
) -> None:
    """ours() raises the error theirs(torch)() raises (recorded): type and message."""
    expected = oracle(numbered("error"), lambda torch: outcome(theirs(torch)))
    assert isinstance(expected, Exception), f"torch raised nothing: {expected!r}"
    with pytest.raises(type(expected)) as got:
        ours()
    assert str(got.value) == str(expected)


# -- activations -------------------------------------------------------------------------

ACTIVATIONS: list[tuple[str, tuple[Any, ...]]] = [
    ("leaky_relu", ()),
    ("leaky_relu", (0.2,)),
    ("leaky_relu", (-1.5,)),
    ("elu", ()),
    ("elu", (0.5,)),
    ("elu", (2.0, 1.5, 0.25)),
    ("softplus", ()),
    ("softplus", (2.0, 1.0)),
    ("softplus", (0.5, -0.5)),
    ("log_sigmoid", ()),
    ("hardtanh", ()),
    ("hardtanh", (-0.25, 1.5)),
    ("mish", ()),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, args", ACTIVATIONS)
def test_activations_match_torch(name, args, dtype) -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(1, (4, 5), dtype=dtype)
    x.flat[:3] = [0.0, -0.0, 1.0]  # the kinks
    _check_against_torch(
        lambda a: getattr(gradgen, name)(a, *args),
        lambda torch: lambda a: _nn(torch, name)(a, *args),
        [x],
    )


@pytest.mark.parametrize("name, args", ACTIVATIONS)
def test_activations_second_derivatives_match_torch(name, args) -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(2, (7,))
    _second_derivatives_match(
        lambda a: getattr(gradgen, name)(a, *args) * a,
        lambda torch: lambda a: _nn(torch, name)(a, *args) * a,
        [x],
    )


@pytest.mark.parametrize("name, args", ACTIVATIONS)
def test_activations_forward_mode_matches_torch(name, args) -> None:  # type: ignore[no-untyped-def]
    x, v = _arrays(3, (6,), (6,))
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(gradgen.tensor(x), gradgen.tensor(v))
        ours = forward_ad.unpack_dual(getattr(gradgen, name)(dual, *args)).tangent

    def tangent(torch: Any) -> Any:
        fwAD = torch.autograd.forward_ad
        with fwAD.dual_level():
            dual_t = fwAD.make_dual(torch.tensor(x), torch.tensor(v))
            return fwAD.unpack_dual(_nn(torch, name)(dual_t, *args)).tangent

    theirs = oracle("tangent", tangent)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, atol=1e-14)


def test_activations_extreme_values_match_torch() -> None:  # type: ignore[no-untyped-def]
    x = np.array(
        [-1000.0, -50.0, -20.0, 0.0, 19.9, 20.1, 50.0, 1000.0, np.nan, np.inf, -np.inf]
    )
    for name, args in ACTIVATIONS:
        ours = getattr(gradgen, name)(gradgen.tensor(x), *args).numpy()
        theirs = oracle(
            f"{name}{args}", lambda torch: _nn(torch, name)(torch.tensor(x), *args)
        )
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=f"{name}{args}")


def test_activation_gradients_at_extremes_match_torch() -> None:  # type: ignore[no-untyped-def]
    x = np.array([-800.0, -30.0, 0.0, 30.0, 800.0, np.nan])
    for name, args in ACTIVATIONS:
        _check_against_torch(
            lambda a: getattr(gradgen, name)(a, *args),
            lambda torch: lambda a: _nn(torch, name)(a, *args),
            [x],
        )


@pytest.mark.parametrize(
    "name", ["leaky_relu", "elu", "softplus", "log_sigmoid", "mish"]
)
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "complex128"])
def test_activation_dtype_errors_match_torch(name, dtype) -> None:  # type: ignore[no-untyped-def]
    x = np.ones(3, dtype=dtype)
    _same_error(
        lambda: getattr(gradgen, name)(gradgen.tensor(x)),
        lambda torch: lambda: _nn(torch, name)(torch.tensor(x)),
    )


def test_hardtanh_dtypes_match_torch() -> None:  # type: ignore[no-untyped-def]
    for values, dtype in (([1, -2, 5, 0], "int64"), ([3, -3], "int32")):
        x = np.array(values, dtype=dtype)
        ours = gradgen.hardtanh(gradgen.tensor(x), -1.5, 2.5)
        theirs = oracle(
            dtype, lambda torch: torch._C._nn.hardtanh(torch.tensor(x), -1.5, 2.5)
        )
        assert ours.tolist() == theirs.tolist()
        assert _dtype_name(ours) == theirs.dtype.name
    for dtype in ("bool", "complex64"):
        x = np.ones(2, dtype=dtype)
        _same_error(
            lambda: gradgen.hardtanh(gradgen.tensor(x)),
            lambda torch: lambda: torch._C._nn.hardtanh(torch.tensor(x)),
        )
    # min_val > max_val: the operator clamps to max_val; F.hardtanh refuses.
    x = np.array([-3.0, 0.0, 3.0])
    assert (
        gradgen.hardtanh(gradgen.tensor(x), 2.0, 1.0).tolist()
        == oracle(
            "min > max", lambda torch: torch._C._nn.hardtanh(torch.tensor(x), 2.0, 1.0)
        ).tolist()
    )
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        GF.hardtanh(gradgen.tensor(x), 2.0, 1.0)


BACKWARD_OPERATORS: list[tuple[str, Callable[[Any, Any, Any], tuple[Any, ...]]]] = [
    ("leaky_relu_backward", lambda lib, g, x: (g, x, 0.3, False)),
    ("elu_backward", lambda lib, g, x: (g, 1.5, 0.5, 2.0, False, x)),
    ("elu_backward", lambda lib, g, x: (g, 1.5, 0.5, 2.0, True, x * 0.2 - 0.4)),
    ("softplus_backward", lambda lib, g, x: (g, x, 1.5, 0.5)),
    ("hardtanh_backward", lambda lib, g, x: (g, x, -0.5, 1.0)),
    ("mish_backward", lambda lib, g, x: (g, x)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, arguments", BACKWARD_OPERATORS)
def test_backward_operators_match_torch(name, arguments, dtype) -> None:  # type: ignore[no-untyped-def]
    g, x = _arrays(4, (3, 4), (3, 4), dtype=dtype)
    ours = getattr(gradgen, name)(
        *arguments(gradgen, gradgen.tensor(g), gradgen.tensor(x))
    )
    theirs = oracle(
        "result",
        lambda torch: getattr(torch.ops.aten, name)(
            *arguments(torch, torch.tensor(g), torch.tensor(x))
        ),
    )
    assert _dtype_name(ours) == theirs.dtype.name
    np.testing.assert_allclose(
        ours.numpy(), theirs, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype]
    )


def test_log_sigmoid_forward_and_backward_match_torch() -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(5, (2, 5))
    g = np.linspace(-1, 1, 10).reshape(2, 5)

    def theirs(torch: Any) -> list[Any]:
        output_t, buffer_t = torch.ops.aten.log_sigmoid_forward(torch.tensor(x))
        backward = torch.ops.aten.log_sigmoid_backward(
            torch.tensor(g), torch.tensor(x), buffer_t
        )
        return [output_t, buffer_t, backward]

    output_t, buffer_t, backward_t = oracle("forward and backward", theirs)
    output, buffer = gradgen.log_sigmoid_forward(gradgen.tensor(x))
    np.testing.assert_allclose(output.numpy(), output_t, rtol=1e-12)
    np.testing.assert_allclose(buffer.numpy(), buffer_t, rtol=1e-12)
    named = gradgen.log_sigmoid_forward(gradgen.tensor(x, requires_grad=True))
    assert named.output.grad_fn.name() == "LogSigmoidBackward0"
    assert named.buffer.grad_fn is None and not named.buffer.requires_grad
    for ours_buffer in (buffer, gradgen.zeros(0)):  # (an empty buffer: recomputed)
        ours = gradgen.log_sigmoid_backward(
            gradgen.tensor(g), gradgen.tensor(x), ours_buffer
        )
        np.testing.assert_allclose(ours.numpy(), backward_t, rtol=1e-12)


def test_backward_operators_double_backward_match_torch() -> None:  # type: ignore[no-untyped-def]
    g, x = _arrays(6, (5,), (5,))
    for name, arguments in BACKWARD_OPERATORS[:-1]:  # mish_backward has no derivative
        _second_derivatives_match(
            lambda a, b: getattr(gradgen, name)(*arguments(gradgen, a, b)) * b,
            lambda torch: lambda a, b: getattr(torch.ops.aten, name)(
                *arguments(torch, a, b)
            )
            * b,
            [g, x],
        )


def test_mish_backward_has_no_derivative_and_mish_double_backward_works() -> None:  # type: ignore[no-untyped-def]
    g, x = _arrays(7, (4,), (4,))
    out = gradgen.mish_backward(
        gradgen.tensor(g, requires_grad=True), gradgen.tensor(x)
    )
    assert out.grad_fn.name() == "NotImplemented"
    inputs = [gradgen.tensor(x, requires_grad=True)]
    assert gradgradcheck(gradgen.mish, inputs)


def test_inplace_backward_with_negative_slope_errors_match_torch() -> None:  # type: ignore[no-untyped-def]
    g, x = _arrays(8, (3,), (3,))
    for name, args in (("leaky_relu_backward", (-0.5, True)), ("elu_backward", None)):
        if name == "elu_backward":
            ours = lambda: gradgen.elu_backward(
                gradgen.tensor(g), -0.5, 1.0, 1.0, True, gradgen.tensor(x)
            )  # noqa: E731
            theirs = lambda torch: lambda: torch.ops.aten.elu_backward(
                torch.tensor(g), -0.5, 1.0, 1.0, True, torch.tensor(x)
            )  # noqa: E731
        else:
            ours = lambda: gradgen.leaky_relu_backward(
                gradgen.tensor(g), gradgen.tensor(x), *args
            )  # noqa: E731
            theirs = lambda torch: lambda: torch.ops.aten.leaky_relu_backward(
                torch.tensor(g), torch.tensor(x), *args
            )  # noqa: E731
        _same_error(ours, theirs)


INPLACE = [
    ("leaky_relu_", (0.2,), "LeakyReluBackward1", "LeakyReluBackward0"),
    ("elu_", (0.7,), "EluBackward1", "EluBackward0"),
    ("hardtanh_", (-0.5, 1.0), "HardtanhBackward0", "HardtanhBackward0"),
    ("mish_", (), "MishBackward0", "MishBackward0"),
]


@pytest.mark.parametrize("name, args, torch_node, our_node", INPLACE)
def test_inplace_activations_match_torch(name, args, torch_node, our_node) -> None:  # type: ignore[no-untyped-def]
    """Values and gradients equal torch's. leaky_relu_ and elu_ record the functional
    node (LeakyReluBackward0, EluBackward0) with the input saved before it is
    overwritten: PyTorch's own entries differentiate from the result, which an in-place
    entry of gradgen's derivatives.yaml cannot name."""
    (x,) = _arrays(9, (6,))

    def run(torch: Any) -> tuple[Any, ...]:
        a_t = torch.tensor(x, requires_grad=True)
        y_t = a_t * 1.0
        out_t = _nn(torch, name)(y_t, *args)
        assert out_t is y_t
        node = out_t.grad_fn.name()
        (out_t * out_t).sum().backward()
        return node, y_t.detach(), a_t.grad

    torch_node_name, y_t, grad_t = oracle("node, value, grad", run)
    a = gradgen.tensor(x, requires_grad=True)
    y = a * 1.0
    out = getattr(gradgen, name)(y, *args)
    assert out is y
    assert out.grad_fn.name() == our_node and torch_node_name == torch_node
    np.testing.assert_allclose(y.detach().numpy(), y_t, rtol=1e-12)
    (out * out).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), grad_t, rtol=1e-12)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(gradgen, name)(a, *args)


def test_inplace_activations_in_forward_mode() -> None:  # type: ignore[no-untyped-def]
    x, v = _arrays(10, (5,), (5,))
    for name, args, _, _ in INPLACE:
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(gradgen.tensor(x), gradgen.tensor(v))
            ours = forward_ad.unpack_dual(
                getattr(gradgen, name)(dual * 1.0, *args)
            ).tangent

        def tangent(torch: Any) -> Any:
            fwAD = torch.autograd.forward_ad
            with fwAD.dual_level():
                dual_t = fwAD.make_dual(torch.tensor(x), torch.tensor(v))
                return fwAD.unpack_dual(_nn(torch, name)(dual_t * 1.0, *args)).tangent

        theirs = oracle(name, tangent)
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, err_msg=name)


# -- losses ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, args",
    [
        ("l1_loss", ()),
        ("smooth_l1_loss", (1.0,)),
        ("smooth_l1_loss", (0.25,)),
        ("smooth_l1_loss", (0.0,)),
        ("huber_loss", (1.0,)),
        ("huber_loss", (0.3,)),
    ],
)
def test_regression_losses_match_torch(name, args, reduction, dtype) -> None:  # type: ignore[no-untyped-def]
    x, y = _arrays(12, (4, 3), (4, 3), dtype=dtype)
    _check_against_torch(
        lambda a, b: getattr(gradgen, name)(a, b, reduction, *args),
        lambda torch: lambda a, b: _nn(torch, name)(a, b, reduction, *args),
        [x, y],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, args", [("smooth_l1_loss", (0.7,)), ("huber_loss", (0.7,)), ("l1_loss", ())]
)
def test_regression_losses_second_derivatives_match_torch(name, args, reduction) -> None:  # type: ignore[no-untyped-def]
    x, y = _arrays(13, (3, 2), (3, 2))
    _second_derivatives_match(
        lambda a, b: getattr(gradgen, name)(a, b, reduction, *args) * (a * b).sum(),
        lambda torch: lambda a, b: _nn(torch, name)(a, b, reduction, *args)
        * (a * b).sum(),
        [x, y],
    )


def test_loss_backward_operators_match_torch() -> None:  # type: ignore[no-untyped-def]
    g, x, y = _arrays(14, (3, 4), (3, 4), (3, 4))
    for reduction in REDUCTIONS:
        grad = g if reduction == NONE else g[0, :1].reshape(())
        for name, extra in (
            ("smooth_l1_loss_backward", 0.6),
            ("smooth_l1_loss_backward", 0.0),
            ("huber_loss_backward", 0.6),
        ):
            ours = getattr(gradgen, name)(
                *(gradgen.tensor(a) for a in (grad, x, y)), reduction, extra
            )
            theirs = oracle(
                f"{name} {reduction} {extra}",
                lambda torch: getattr(torch.ops.aten, name)(
                    *(torch.tensor(a) for a in (grad, x, y)), reduction, extra
                ),
            )
            np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, err_msg=name)


def test_loss_backward_operators_second_derivatives_match_torch() -> None:  # type: ignore[no-untyped-def]
    g, x, y = _arrays(15, (3, 2), (3, 2), (3, 2))
    for reduction in REDUCTIONS:
        grad = g if reduction == NONE else g[0, :1].reshape(())
        for name in ("smooth_l1_loss_backward", "huber_loss_backward"):
            _second_derivatives_match(
                lambda gg, a, b: getattr(gradgen, name)(gg, a, b, reduction, 0.8) * a,
                lambda torch: lambda gg, a, b: getattr(torch.ops.aten, name)(
                    gg, a, b, reduction, 0.8
                )
                * a,
                [grad, x, y],
            )


def test_loss_errors_match_torch() -> None:  # type: ignore[no-untyped-def]
    x, y = np.ones(3), np.zeros(3)
    cases = [
        ("smooth_l1_loss", (x, y, MEAN, -1.0)),
        ("huber_loss", (x, y, MEAN, 0.0)),
        ("huber_loss", (x, y, MEAN, -2.0)),
        ("smooth_l1_loss", (np.ones(3, np.int64), np.ones(3, np.int64), MEAN, 1.0)),
        ("huber_loss", (np.ones(3, np.int64), np.ones(3, np.int64), MEAN, 1.0)),
        ("smooth_l1_loss", (x, np.ones(2), MEAN, 1.0)),
        ("huber_loss", (x, np.ones(2), MEAN, 1.0)),
        ("l1_loss", (x, np.ones(2), MEAN)),
    ]
    for name, args in cases:
        _same_error(
            lambda: getattr(gradgen, name)(
                *[gradgen.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            ),
            lambda torch: lambda: _nn(torch, name)(
                *[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            ),
        )
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
        gradgen.huber_loss(gradgen.tensor(x), gradgen.tensor(y), 3)


def test_losses_promote_and_broadcast_as_torch() -> None:  # type: ignore[no-untyped-def]
    x = np.array([1.0, -2.0, 0.5], np.float32)
    y = np.array([0.5], np.float64)
    for name, args in (
        ("smooth_l1_loss", (0.5,)),
        ("huber_loss", (0.5,)),
        ("l1_loss", ()),
    ):
        for a, b in ((x, y), (y, x)):
            ours = getattr(gradgen, name)(
                gradgen.tensor(a), gradgen.tensor(b), NONE, *args
            )

            def loss(torch: Any) -> Any:
                with warnings.catch_warnings():  # torch: "An output ... was resized"
                    warnings.simplefilter("ignore")
                    return _nn(torch, name)(
                        torch.tensor(a), torch.tensor(b), NONE, *args
                    )

            theirs = oracle(numbered(name), loss)
            assert _dtype_name(ours) == theirs.dtype.name
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6)


BCE_CASES = [
    ("none", None, None),
    ("weight", (3,), None),
    ("pos_weight", None, (3,)),
    ("both", (4, 3), (1, 3)),
    ("scalars", (), ()),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case, weight_shape, pos_weight_shape", BCE_CASES)
def test_binary_cross_entropy_with_logits_matches_torch(case, weight_shape, pos_weight_shape, reduction, dtype) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(16)
    x = (rng.normal(size=(4, 3)) * 4).astype(dtype)
    x[0, 0], x[0, 1] = 60.0, -60.0
    y = rng.uniform(0, 1, (4, 3)).astype(dtype)
    arrays = [x, y]
    flags = [True, True]
    for shape in (weight_shape, pos_weight_shape):
        if shape is not None:
            arrays.append(rng.uniform(0.5, 3, shape).astype(dtype))
            flags.append(False)

    def call(lib: Any, a: Any, b: Any, *rest: Any) -> Any:
        rest_iter = iter(rest)
        weight = next(rest_iter) if weight_shape is not None else None
        pos_weight = next(rest_iter) if pos_weight_shape is not None else None
        return lib.binary_cross_entropy_with_logits(a, b, weight, pos_weight, reduction)

    _check_against_torch(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        arrays,
        flags,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits_second_derivatives_match_torch(reduction) -> None:  # type: ignore[no-untyped-def]
    x, y = _arrays(17, (3, 2), (3, 2))
    w, p = np.array([0.5, 2.0]), np.array([3.0, 0.25])
    for weight, pos_weight in ((None, None), (w, p)):

        def ours(a: Any, b: Any) -> Any:
            return (
                gradgen.binary_cross_entropy_with_logits(
                    a,
                    b,
                    None if weight is None else gradgen.tensor(weight),
                    None if pos_weight is None else gradgen.tensor(pos_weight),
                    reduction,
                )
                * a.sum()
            )

        def theirs(torch: Any) -> Callable[..., Any]:
            def function(a: Any, b: Any) -> Any:
                return (
                    torch.binary_cross_entropy_with_logits(
                        a,
                        b,
                        None if weight is None else torch.tensor(weight),
                        None if pos_weight is None else torch.tensor(pos_weight),
                        reduction,
                    )
                    * a.sum()
                )

            return function

        _second_derivatives_match(ours, theirs, [x, y])


def test_binary_cross_entropy_with_logits_dtypes_and_errors_match_torch() -> None:  # type: ignore[no-untyped-def]
    x32, x64 = np.array([0.5, -1.0, 2.0], np.float32), np.array([0.5, -1.0, 2.0])
    for a, b, w in (
        (x32, x64, None),
        (x64, x32, None),
        (x32, x32, x64),
        (x64, x32, x64),
    ):
        weight = None if w is None else gradgen.tensor(w)
        ours = gradgen.binary_cross_entropy_with_logits(
            gradgen.tensor(a), gradgen.tensor(b * 0.1), weight, weight, MEAN
        )

        def loss(torch: Any) -> Any:
            weight_t = None if w is None else torch.tensor(w)
            return torch.binary_cross_entropy_with_logits(
                torch.tensor(a), torch.tensor(b * 0.1), weight_t, weight_t, MEAN
            )

        theirs = oracle(numbered("loss"), loss)
        assert _dtype_name(ours) == theirs.dtype.name
        np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)
    ones = np.ones(3)
    cases = [
        (np.ones(3, np.int64), np.ones(3, np.int64), None, None),
        (np.ones(3, np.complex128), np.ones(3, np.complex128), None, None),
        (ones, np.ones(3, np.int64), None, None),
        (ones, np.ones(3, bool), None, None),
        (ones, np.ones(1), None, None),
        (ones, ones, np.ones((2, 1)), None),
        (ones, ones, None, np.ones((2, 1))),
        (ones, ones, np.ones(2), None),
    ]
    for a, b, w, p in cases:
        _same_error(
            lambda: gradgen.binary_cross_entropy_with_logits(
                gradgen.tensor(a),
                gradgen.tensor(b),
                None if w is None else gradgen.tensor(w),
                None if p is None else gradgen.tensor(p),
                NONE,
            ),
            lambda torch: lambda: torch.binary_cross_entropy_with_logits(
                torch.tensor(a),
                torch.tensor(b),
                None if w is None else torch.tensor(w),
                None if p is None else torch.tensor(p),
                NONE,
            ),
        )
    with pytest.raises(
        RuntimeError, match="is not differentiable with respect to argument 'weight'"
    ):
        gradgen.binary_cross_entropy_with_logits(
            gradgen.tensor(ones, requires_grad=True),
            gradgen.tensor(ones),
            gradgen.tensor(ones, requires_grad=True),
        )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_torch(log_target, reduction, dtype) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(18)
    x = np.log(rng.dirichlet(np.ones(4), 3)).astype(dtype)
    y = rng.dirichlet(np.ones(4), 3).astype(dtype)
    if log_target:
        y = np.log(y)
    _check_against_torch(
        lambda a, b: gradgen.kl_div(a, b, reduction, log_target=log_target),
        lambda torch: lambda a, b: torch.kl_div(a, b, reduction, log_target=log_target),
        [x, y],
    )
    _second_derivatives_match(
        lambda a, b: gradgen.kl_div(a, b, reduction, log_target=log_target) * a.sum(),
        lambda torch: lambda a, b: torch.kl_div(a, b, reduction, log_target=log_target)
        * a.sum(),
        [x.astype("float64"), y.astype("float64")],
    )


def test_kl_div_zero_and_negative_targets_and_errors_match_torch() -> None:  # type: ignore[no-untyped-def]
    x = np.array([-1.0, -2.0, -0.5])
    y = np.array([0.0, -1.0, 2.0])
    ours = gradgen.kl_div(
        gradgen.tensor(x, requires_grad=True),
        gradgen.tensor(y, requires_grad=True),
        NONE,
    )
    theirs = oracle(
        "kl_div",
        lambda torch: torch.kl_div(
            torch.tensor(x, requires_grad=True),
            torch.tensor(y, requires_grad=True),
            NONE,
        ),
    )
    np.testing.assert_allclose(ours.detach().numpy(), theirs, rtol=1e-12)
    for a, b in (
        (np.ones(2, np.int64), np.ones(2)),
        (np.ones(2), np.ones(2, np.int32)),
        (np.ones(2), np.ones(2, bool)),
        (np.ones(2, np.complex128), np.ones(2)),
    ):
        _same_error(
            lambda: gradgen.kl_div(gradgen.tensor(a), gradgen.tensor(b), MEAN),
            lambda torch: lambda: torch.kl_div(torch.tensor(a), torch.tensor(b), MEAN),
        )


# -- layer norm --------------------------------------------------------------------------

LAYER_NORM_CASES = [
    ((2, 3, 4), (4,), True, True),
    ((2, 3, 4), (3, 4), True, True),
    ((2, 3, 4), (2, 3, 4), True, False),
    ((5,), (5,), False, False),
    ((3, 5), (5,), True, False),
    ((3, 5), (5,), False, True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape, normalized, has_weight, has_bias", LAYER_NORM_CASES)
def test_layer_norm_matches_torch(shape, normalized, has_weight, has_bias, dtype) -> None:  # type: ignore[no-untyped-def]
    x, w, b = _arrays(19, shape, normalized, normalized, dtype=dtype)
    arrays, flags = [x], [True]
    if has_weight:
        arrays.append(w)
        flags.append(True)
    if has_bias:
        arrays.append(b)
        flags.append(True)

    def call(lib: Any, a: Any, *rest: Any) -> Any:
        it = iter(rest)
        weight = next(it) if has_weight else None
        bias = next(it) if has_bias else None
        return lib.layer_norm(a, normalized, weight, bias, 1e-5)

    rtol = 1e-5 if dtype == "float32" else None
    _check_against_torch(
        lambda *t: call(gradgen, *t),
        lambda torch: lambda *t: call(torch, *t),
        arrays,
        flags,
        rtol=rtol,
    )


@pytest.mark.parametrize("shape, normalized, has_weight, has_bias", LAYER_NORM_CASES)
def test_native_layer_norm_statistics_match_torch(shape, normalized, has_weight, has_bias) -> None:  # type: ignore[no-untyped-def]
    x, w, b = _arrays(20, shape, normalized, normalized)
    weight = w if has_weight else None
    bias = b if has_bias else None
    ours = gradgen.native_layer_norm(
        gradgen.tensor(x, requires_grad=True),
        normalized,
        None if weight is None else gradgen.tensor(weight),
        None if bias is None else gradgen.tensor(bias),
        1e-3,
    )

    def outputs(torch: Any) -> list[Any]:
        results = torch.native_layer_norm(
            torch.tensor(x, requires_grad=True),
            normalized,
            None if weight is None else torch.tensor(weight),
            None if bias is None else torch.tensor(bias),
            1e-3,
        )
        return [(t.grad_fn is None, t.requires_grad, t) for t in results]

    theirs = oracle("outputs", outputs)
    assert len(ours) == len(theirs)
    for o, (no_grad_fn, requires_grad, t) in zip(ours, theirs):
        assert o.shape == t.shape
        assert (o.grad_fn is None) == no_grad_fn and o.requires_grad == requires_grad
        np.testing.assert_allclose(o.detach().numpy(), t, rtol=1e-12, atol=1e-12)
    assert ours[0].grad_fn.name() == "NativeLayerNormBackward0"


# PyTorch's own double backward fails for a bias without a weight ("Expected a proper
# Tensor but got None ... for argument #1 'other'"); gradgradcheck covers that case.
@pytest.mark.parametrize(
    "shape, normalized, has_weight, has_bias",
    [case for case in LAYER_NORM_CASES if case[2] or not case[3]],
)
def test_layer_norm_second_derivatives_match_torch(shape, normalized, has_weight, has_bias) -> None:  # type: ignore[no-untyped-def]
    x, w, b = _arrays(21, shape, normalized, normalized)
    arrays = [x] + ([w] if has_weight else []) + ([b] if has_bias else [])

    def call(lib: Any, a: Any, *rest: Any) -> Any:
        it = iter(rest)
        weight = next(it) if has_weight else None
        bias = next(it) if has_bias else None
        return lib.layer_norm(a, normalized, weight, bias, 1e-5) * a

    _second_derivatives_match(
        lambda *t: call(gradgen, *t), lambda torch: lambda *t: call(torch, *t), arrays
    )


@pytest.mark.parametrize("shape, normalized, has_weight, has_bias", LAYER_NORM_CASES)
def test_layer_norm_gradcheck_gradgradcheck_and_forward_mode(shape, normalized, has_weight, has_bias) -> None:  # type: ignore[no-untyped-def]
    x, w, b = _arrays(22, shape, normalized, normalized)
    inputs = [gradgen.tensor(x, requires_grad=True)]
    if has_weight:
        inputs.append(gradgen.tensor(w, requires_grad=True))
    if has_bias:
        inputs.append(gradgen.tensor(b, requires_grad=True))

    def call(a: Any, *rest: Any) -> Any:
        it = iter(rest)
        weight = next(it) if has_weight else None
        bias = next(it) if has_bias else None
        return gradgen.layer_norm(a, normalized, weight, bias, 1e-5)

    assert gradcheck(call, inputs, check_forward_ad=True)
    assert gradgradcheck(call, inputs)


def test_layer_norm_forward_mode_matches_torch() -> None:  # type: ignore[no-untyped-def]
    x, w, b, tx, tw, tb = _arrays(23, (3, 4), (4,), (4,), (3, 4), (4,), (4,))
    with forward_ad.dual_level():
        duals = [
            forward_ad.make_dual(gradgen.tensor(p), gradgen.tensor(t))
            for p, t in ((x, tx), (w, tw), (b, tb))
        ]
        ours = forward_ad.unpack_dual(
            gradgen.layer_norm(duals[0], (4,), duals[1], duals[2])
        ).tangent

    def tangent(torch: Any) -> Any:
        fwAD = torch.autograd.forward_ad
        with fwAD.dual_level():
            duals_t = [
                fwAD.make_dual(torch.tensor(p), torch.tensor(t))
                for p, t in ((x, tx), (w, tw), (b, tb))
            ]
            return fwAD.unpack_dual(
                torch.layer_norm(duals_t[0], (4,), duals_t[1], duals_t[2])
            ).tangent

    theirs = oracle("tangent", tangent)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-10, atol=1e-12)


def test_native_layer_norm_backward_matches_torch() -> None:  # type: ignore[no-untyped-def]
    g, x, w, b = _arrays(24, (2, 3, 4), (2, 3, 4), (3, 4), (3, 4))

    def theirs_of(torch: Any) -> list[Any]:
        _, mean_t, rstd_t = torch.native_layer_norm(
            torch.tensor(x), (3, 4), torch.tensor(w), torch.tensor(b), 1e-5
        )
        grads = torch.ops.aten.native_layer_norm_backward(
            torch.tensor(g),
            torch.tensor(x),
            (3, 4),
            mean_t,
            rstd_t,
            torch.tensor(w),
            torch.tensor(b),
            [True, True, True],
        )
        return [mean_t, rstd_t, list(grads)]

    mean, rstd, theirs = oracle("statistics and grads", theirs_of)
    ours = gradgen.native_layer_norm_backward(
        gradgen.tensor(g),
        gradgen.tensor(x),
        (3, 4),
        gradgen.tensor(mean),
        gradgen.tensor(rstd),
        gradgen.tensor(w),
        gradgen.tensor(b),
        [True, True, True],
    )
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t, rtol=1e-10, atol=1e-12)
    # A masked-out output is zeros here (PyTorch's is undefined).
    masked = gradgen.native_layer_norm_backward(
        gradgen.tensor(g),
        gradgen.tensor(x),
        (3, 4),
        gradgen.tensor(mean),
        gradgen.tensor(rstd),
        None,
        None,
        [True, False, False],
    )
    assert not np.any(masked[1].numpy()) and not np.any(masked[2].numpy())


def test_layer_norm_third_derivative_through_native_layer_norm_backward() -> None:
    """native_layer_norm_backward's own formula recomputes the statistics from its input
    under grad mode, so its derivatives (a third derivative of layer_norm) are right."""
    x, w = _arrays(25, (2, 4), (4,))

    def second(a: Any, weight: Any) -> Any:
        out = gradgen.layer_norm(a, (4,), weight)
        ga, gw = gradgen.autograd.grad(
            (out * out * a).sum(), (a, weight), create_graph=True
        )
        return ga * ga.sum() + gw.sum()

    inputs = [
        gradgen.tensor(x, requires_grad=True),
        gradgen.tensor(w, requires_grad=True),
    ]
    assert gradcheck(second, inputs)


def test_layer_norm_errors_match_torch() -> None:  # type: ignore[no-untyped-def]
    x = np.ones((2, 3, 4), np.float32)
    cases: list[tuple[Any, Any, Any, Any]] = [
        (x, [], None, None),
        (x, [3], None, None),
        (x, [2, 3, 4, 5], None, None),
        (x, [4], np.ones(3, np.float32), None),
        (x, [4], None, np.ones(3, np.float32)),
        (x.astype(np.int64), [4], None, None),
        (x.astype(np.complex64), [4], None, None),
        (x.astype(np.float64), [4], np.ones(4, np.float32), None),
        (x, [4], np.ones(4, np.float64), None),
        (x, [4], None, np.ones(4, np.float64)),
    ]
    for a, shape, w, b in cases:
        _same_error(
            lambda: gradgen.layer_norm(
                gradgen.tensor(a),
                shape,
                None if w is None else gradgen.tensor(w),
                None if b is None else gradgen.tensor(b),
            ),
            lambda torch: lambda: torch.layer_norm(
                torch.tensor(a),
                shape,
                None if w is None else torch.tensor(w),
                None if b is None else torch.tensor(b),
            ),
        )


def test_layer_norm_empty_inputs_match_torch() -> None:  # type: ignore[no-untyped-def]
    for shape, normalized in (((0, 4), (4,)), ((2, 0), (0,))):
        x = np.ones(shape)
        ours = gradgen.native_layer_norm(
            gradgen.tensor(x), normalized, None, None, 1e-5
        )
        theirs = oracle(
            str(shape),
            lambda torch: list(
                torch.native_layer_norm(torch.tensor(x), normalized, None, None, 1e-5)
            ),
        )
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert o.shape == t.shape
            np.testing.assert_allclose(o.numpy(), t)


# -- embedding ---------------------------------------------------------------------------

EMBEDDING_INDICES = np.array([[0, 2, 4], [2, 2, 1]])


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("padding_idx", [-1, 2, 3])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_matches_torch(padding_idx, scale_grad_by_freq, index_dtype) -> None:  # type: ignore[no-untyped-def]
    (w,) = _arrays(26, (5, 3))
    indices = EMBEDDING_INDICES.astype(index_dtype)
    _check_against_torch(
        lambda a: gradgen.embedding(
            a, gradgen.tensor(indices), padding_idx, scale_grad_by_freq
        ),
        lambda torch: lambda a: torch.embedding(
            a, torch.tensor(indices), padding_idx, scale_grad_by_freq
        ),
        [w],
    )


def test_embedding_scalar_index_float32_and_forward_mode() -> None:  # type: ignore[no-untyped-def]
    (w,) = _arrays(27, (5, 3), dtype="float32")
    _check_against_torch(
        lambda a: gradgen.embedding(a, gradgen.tensor(3)),
        lambda torch: lambda a: torch.embedding(a, torch.tensor(3)),
        [w],
    )
    (w,) = _arrays(28, (5, 3))
    assert gradcheck(
        lambda a: gradgen.embedding(a, gradgen.tensor(EMBEDDING_INDICES)),
        [gradgen.tensor(w, requires_grad=True)],
        check_forward_ad=True,
    )


def test_embedding_dense_backward_matches_torch() -> None:  # type: ignore[no-untyped-def]
    (g,) = _arrays(29, (2, 3, 4))
    for padding_idx in (-1, 2):
        for scale in (False, True):
            ours = gradgen.embedding_dense_backward(
                gradgen.tensor(g),
                gradgen.tensor(EMBEDDING_INDICES),
                6,
                padding_idx,
                scale,
            )
            theirs = oracle(
                f"{padding_idx} {scale}",
                lambda torch: torch.ops.aten.embedding_dense_backward(
                    torch.tensor(g),
                    torch.tensor(EMBEDDING_INDICES),
                    6,
                    padding_idx,
                    scale,
                ),
            )
            np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12)
    # embedding_backward (the composite) is the same for sparse=False.
    ours = gradgen.embedding_backward(
        gradgen.tensor(g), gradgen.tensor(EMBEDDING_INDICES), 6, 2, True, False
    )
    theirs = oracle(
        "embedding_backward",
        lambda torch: torch.ops.aten.embedding_backward(
            torch.tensor(g), torch.tensor(EMBEDDING_INDICES), 6, 2, True, False
        ),
    )
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12)
    with pytest.raises(NotImplementedError, match="sparse"):
        gradgen.embedding_backward(
            gradgen.tensor(g), gradgen.tensor(EMBEDDING_INDICES), 6, 2, True, True
        )


def test_embedding_dense_backward_double_backward_scales_by_frequency() -> None:
    """The derivative of embedding_dense_backward for grad_output is the transpose of
    the operator, scale_grad_by_freq included (PyTorch's formula leaves the scaling
    out, so its gradcheck of this case fails)."""
    (g,) = _arrays(30, (2, 3, 4))
    for padding_idx in (-1, 2):
        function = lambda a: gradgen.embedding_dense_backward(
            a * a, gradgen.tensor(EMBEDDING_INDICES), 6, padding_idx, True
        )  # noqa: E731
        inputs = [gradgen.tensor(g, requires_grad=True)]
        assert gradcheck(function, inputs, check_forward_ad=True)
        assert gradgradcheck(function, inputs)


def test_embedding_errors_match_torch() -> None:  # type: ignore[no-untyped-def]
    w = np.ones((5, 3))
    cases = [
        (w, np.array([0.0, 1.0])),
        (w, np.array([True])),
        (w, np.array([1 + 0j])),
        (w, np.array([0, 5])),
        (w, np.array([0, -1])),
        (np.ones(5), np.array([1])),
        (np.ones((5, 2, 2)), np.array([1])),
    ]
    for weight, indices in cases:
        _same_error(
            lambda: gradgen.embedding(gradgen.tensor(weight), gradgen.tensor(indices)),
            lambda torch: lambda: torch.embedding(
                torch.tensor(weight), torch.tensor(indices)
            ),
        )
    _same_error(
        lambda: gradgen.embedding_dense_backward(
            gradgen.ones(2, 3), gradgen.tensor([0.0, 1.0]), 4, -1, False
        ),
        lambda torch: lambda: torch.ops.aten.embedding_dense_backward(
            torch.ones(2, 3), torch.tensor([0.0, 1.0]), 4, -1, False
        ),
    )


def test_functional_embedding_matches_torch() -> None:  # type: ignore[no-untyped-def]
    (w,) = _arrays(31, (6, 3))
    indices = np.array([[1, 5, 0], [5, 5, 2]])
    for kwargs in (
        {},
        {"padding_idx": 5},
        {"padding_idx": -1},
        {"scale_grad_by_freq": True},
    ):
        _check_against_torch(
            lambda a: GF.embedding(gradgen.tensor(indices), a, **kwargs),
            lambda torch: lambda a: torch.nn.functional.embedding(
                torch.tensor(indices), a, **kwargs
            ),
            [w],
        )
    for padding_idx in (6, -7):
        with pytest.raises(
            AssertionError, match="^Padding_idx must be within num_embeddings$"
        ):
            GF.embedding(
                gradgen.tensor(indices), gradgen.tensor(w), padding_idx=padding_idx
            )
    with pytest.raises(NotImplementedError, match="sparse"):
        GF.embedding(gradgen.tensor(indices), gradgen.tensor(w), sparse=True)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_functional_embedding_max_norm_renormalizes_rows_as_torch(norm_type) -> None:  # type: ignore[no-untyped-def]
    (w,) = _arrays(32, (6, 3))
    w = w * 3
    indices = np.array([[1, 4, 0], [4, 4, 2]])

    def theirs(torch: Any) -> list[Any]:
        theirs_w = torch.tensor(w, requires_grad=True)
        expected = torch.nn.functional.embedding(
            torch.tensor(indices), theirs_w, max_norm=1.5, norm_type=norm_type
        )
        renormed = theirs_w.detach().clone()
        expected.sum().backward()
        return [renormed, expected.detach(), theirs_w.grad]

    theirs_w, expected, theirs_grad = oracle("weight, out, grad", theirs)
    ours_w = gradgen.tensor(w, requires_grad=True)
    version = ours_w._version
    out = GF.embedding(
        gradgen.tensor(indices), ours_w, max_norm=1.5, norm_type=norm_type
    )
    assert ours_w._version == version + 1
    np.testing.assert_allclose(ours_w.detach().numpy(), theirs_w, rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(ours_w.grad.numpy(), theirs_grad, rtol=1e-12)


# -- one_hot -----------------------------------------------------------------------------


def test_one_hot_matches_torch() -> None:  # type: ignore[no-untyped-def]
    for values, num_classes in (
        ([0, 2, 1], -1),
        ([[0, 3], [1, 1]], 5),
        (2, 4),
        ([], 3),
    ):
        ours = GF.one_hot(gradgen.tensor(values, dtype=gradgen.int64), num_classes)
        theirs = oracle(
            f"{values} {num_classes}",
            lambda torch: torch.nn.functional.one_hot(
                torch.tensor(values, dtype=torch.int64), num_classes
            ),
        )
        assert ours.dtype == gradgen.int64 and ours.shape == theirs.shape
        assert theirs.dtype == np.int64 and ours.tolist() == theirs.tolist()
    for values, dtype, num_classes in (
        ([0.0, 1.0], None, -1),
        ([0, 1], "int32", -1),
        ([], "int64", -1),
        ([], "int64", 0),
        ([-1, 1], None, -1),
        ([3, 1], None, 3),
        ([0, 1], None, 0),
        ([0, 1], None, -2),
    ):
        _same_error(
            lambda: gradgen.one_hot(
                gradgen.tensor(np.array(values, dtype=dtype) if dtype else values),
                num_classes,
            ),
            lambda torch: lambda: torch.nn.functional.one_hot(
                torch.tensor(np.array(values, dtype=dtype) if dtype else values),
                num_classes,
            ),
        )


def test_one_hot_is_not_differentiable() -> None:
    out = gradgen.one_hot(gradgen.tensor([1, 0]), 2)
    assert not out.requires_grad and out.grad_fn is None


# -- padding -----------------------------------------------------------------------------

PAD_CASES = [
    ((2, 3), (1, 1)),
    ((2, 3), (1, 2, 0, 1)),
    ((2, 3), (-1, 0)),
    ((2, 3), (1, -2)),
    ((2, 3), (-3, 0)),
    ((2, 3), (0, 0)),
    ((2, 3), (-1, -1, 0, 0)),
    ((2, 3, 4), (2, -1, 0, 3, 1, 0)),
    ((), ()),
    ((4,), (0, 2)),
]


@pytest.mark.parametrize("shape, pad", PAD_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_constant_pad_nd_matches_torch(shape, pad, dtype) -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(33, shape, dtype=dtype)
    _check_against_torch(
        lambda a: gradgen.constant_pad_nd(a * 1.0, pad, 1.5),
        lambda torch: lambda a: torch.constant_pad_nd(a * 1.0, pad, 1.5),
        [x],
    )


@pytest.mark.parametrize("shape, pad", [c for c in PAD_CASES[:8] if c[1] != (-3, 0)])
def test_constant_pad_nd_gradgradcheck_and_forward_mode(shape, pad) -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(34, shape)
    inputs = [gradgen.tensor(x, requires_grad=True)]
    function = lambda a: gradgen.constant_pad_nd(a * a, pad, -2.0)  # noqa: E731
    assert gradcheck(function, inputs, check_forward_ad=True)
    assert gradgradcheck(function, inputs)


def test_constant_pad_nd_dtypes_match_torch() -> None:  # type: ignore[no-untyped-def]
    cases = [
        (np.array([1, 2]), 2.5),
        (np.array([1, 2], np.int32), -1),
        (np.array([True, False]), 1),
        (np.array([1 + 1j]), 2),
        (np.array([1 + 1j], np.complex64), 2 - 1j),
        (np.array([1.0], np.float32), math.inf),
    ]
    for x, value in cases:
        ours = gradgen.constant_pad_nd(gradgen.tensor(x), (1, 1), value)
        theirs = oracle(
            numbered("padded"),
            lambda torch: torch.constant_pad_nd(torch.tensor(x), (1, 1), value),
        )
        assert _dtype_name(ours) == theirs.dtype.name
        assert ours.tolist() == theirs.tolist()


def test_constant_pad_nd_errors_match_torch() -> None:  # type: ignore[no-untyped-def]
    x = np.ones((2, 3))
    for array, pad, value in (
        (x, (1,), 0),
        (x, (1, 1, 1, 1, 1, 1), 0),
        (x, (-4, 0), 0),
        (x, (0, -4), 0),
        (x, (0, 0, -2, -1), 0),
        (np.ones(()), (1, 1), 0),
        (x, (1, 1), 2 + 1j),
    ):
        _same_error(
            lambda: gradgen.constant_pad_nd(gradgen.tensor(array), pad, value),
            lambda torch: lambda: torch.constant_pad_nd(
                torch.tensor(array), pad, value
            ),
        )


def test_functional_pad() -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(35, (2, 3))
    for kwargs in ({}, {"value": 2.5}, {"mode": "constant", "value": -1.0}):
        _check_against_torch(
            lambda a: GF.pad(a, (1, 2, 0, 1), **kwargs),
            lambda torch: lambda a: torch.nn.functional.pad(a, (1, 2, 0, 1), **kwargs),
            [x],
        )
    ints = GF.pad(gradgen.tensor([1, 2]), (1, 0))
    assert ints.dtype == gradgen.int64 and ints.tolist() == [0, 1, 2]
    for mode in ("reflect", "replicate", "circular"):
        with pytest.raises(NotImplementedError, match=f"mode='{mode}'"):
            GF.pad(gradgen.tensor(x), (1, 1), mode=mode)
        _same_error(
            lambda: GF.pad(gradgen.tensor(x), (1, 1), mode=mode, value=2.0),
            lambda torch: lambda: torch.nn.functional.pad(
                torch.tensor(x), (1, 1), mode=mode, value=2.0
            ),
        )
    _same_error(
        lambda: GF.pad(gradgen.tensor(x), (1, 1), mode="foo"),
        lambda torch: lambda: torch.nn.functional.pad(
            torch.tensor(x), (1, 1), mode="foo"
        ),
    )


# -- dropout -----------------------------------------------------------------------------


def test_dropout_scales_the_kept_elements_and_drops_about_p() -> None:
    gradgen.manual_seed(0)
    x = gradgen.ones(200, 50, dtype=gradgen.float64, requires_grad=True)
    out = gradgen.dropout(x, 0.3, True)
    values = out.detach().numpy()
    kept = values != 0
    assert out.grad_fn.name() == "MulBackward0"
    np.testing.assert_allclose(values[kept], 1 / 0.7)
    assert abs(kept.mean() - 0.7) < 0.02
    out.sum().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), values
    )  # the gradient is the mask / (1 - p)


def test_dropout_is_reproducible_with_manual_seed() -> None:
    x = gradgen.ones(5, 7)
    gradgen.manual_seed(3)
    first = GF.dropout(x, 0.5).numpy()
    gradgen.manual_seed(3)
    second = GF.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(first, second)
    assert first.dtype == np.float32


def test_dropout_edge_cases_match_torch() -> None:  # type: ignore[no-untyped-def]
    x = np.array([1.0, -2.0, np.nan, np.inf])
    for p, train in ((0.0, True), (0.5, False), (1.0, False)):
        a = gradgen.tensor(x, requires_grad=True)
        assert gradgen.dropout(a, p, train) is a
        # torch returns the input's values unchanged too
        theirs = oracle(
            f"{p} {train}", lambda torch: torch.dropout(torch.tensor(x), p, train)
        )
        np.testing.assert_array_equal(theirs, x)
    ours = gradgen.dropout(gradgen.tensor(x, requires_grad=True), 1.0, True)

    def dropped(torch: Any) -> tuple[Any, str]:
        out = torch.dropout(torch.tensor(x, requires_grad=True), 1.0, True)
        return out.detach(), out.grad_fn.name()

    theirs, node = oracle("p=1", dropped)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs)
    assert ours.grad_fn.name() == node == "MulBackward0"
    empty = gradgen.zeros(0)
    assert gradgen.dropout(empty, 0.5, True) is empty
    for p in (-0.1, 1.5):
        _same_error(
            lambda: gradgen.dropout(gradgen.ones(2), p, True),
            lambda torch: lambda: torch.dropout(torch.ones(2), p, True),
        )
        _same_error(
            lambda: GF.dropout(gradgen.ones(2), p),
            lambda torch: lambda: torch.nn.functional.dropout(torch.ones(2), p),
        )


def test_dropout_in_place() -> None:
    gradgen.manual_seed(5)
    x = gradgen.ones(10, 10, dtype=gradgen.float64)
    version = x._version
    out = GF.dropout(x, 0.25, inplace=True)
    assert out is x and x._version == version + 1
    values = x.numpy()
    np.testing.assert_allclose(values[values != 0], 1 / 0.75)
    y = gradgen.ones(3)
    assert (
        GF.dropout(y, 0.25, training=False, inplace=True) is y
        and y.tolist() == [1.0] * 3
    )
    z = gradgen.ones(3)
    GF.dropout(z, 1.0, inplace=True)
    assert z.tolist() == [0.0, 0.0, 0.0]
    leaf = gradgen.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        GF.dropout(leaf, 0.5, inplace=True)


# -- normalize ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, dim",
    [(2.0, 1), (2.0, 0), (1.0, -1), (3.0, 1), (0.5, 1), (math.inf, 1), (-math.inf, 0)],
)
def test_normalize_matches_torch(p, dim) -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(36, (4, 3))
    _check_against_torch(
        lambda a: GF.normalize(a, p=p, dim=dim),
        lambda torch: lambda a: torch.nn.functional.normalize(a, p=p, dim=dim),
        [x],
    )


def test_normalize_zero_rows_tiny_eps_and_float32_match_torch() -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(37, (3, 4))
    x[1] = 0.0
    _check_against_torch(
        lambda a: GF.normalize(a),
        lambda torch: lambda a: torch.nn.functional.normalize(a),
        [x],
    )
    _check_against_torch(
        lambda a: GF.normalize(a, eps=10.0),
        lambda torch: lambda a: torch.nn.functional.normalize(a, eps=10.0),
        [x],
    )
    (y,) = _arrays(38, (2, 3, 2), dtype="float32")
    _check_against_torch(
        lambda a: GF.normalize(a, dim=2),
        lambda torch: lambda a: torch.nn.functional.normalize(a, dim=2),
        [y],
    )
    inputs = [gradgen.tensor(_arrays(39, (3, 4))[0], requires_grad=True)]
    assert gradgradcheck(lambda a: GF.normalize(a), inputs)
    with pytest.raises(NotImplementedError, match="out="):
        GF.normalize(gradgen.ones(2, 2), out=gradgen.ones(2, 2))


# -- gradgen.nn.functional ---------------------------------------------------------------

FUNCTIONS = [
    "leaky_relu",
    "elu",
    "hardtanh",
    "mish",
    "softsign",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "layer_norm",
    "embedding",
    "pad",
    "dropout",
    "normalize",
]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_signatures_match_torch(name) -> None:  # type: ignore[no-untyped-def]
    def parameters(function: Any) -> list[tuple[str, str, str]]:
        signature = inspect.signature(function)
        return [
            (p.name, repr(p.default), str(p.kind))
            for p in signature.parameters.values()
        ]

    theirs = oracle(
        "parameters", lambda torch: parameters(getattr(torch.nn.functional, name))
    )
    assert parameters(getattr(GF, name)) == theirs


def test_functional_builtin_signatures_match_torch_docs() -> None:  # type: ignore[no-untyped-def]
    """softplus, logsigmoid and one_hot are C functions in torch: their documented
    signatures."""
    assert str(inspect.signature(GF.softplus)).startswith(
        "(input: 'Tensor', beta: 'float' = 1, threshold: 'float' = 20)"
    )
    assert list(inspect.signature(GF.logsigmoid).parameters) == ["input"]
    assert str(inspect.signature(GF.one_hot)).startswith(
        "(tensor: 'Tensor', num_classes: 'int' = -1)"
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_functional_losses_match_torch(reduction) -> None:  # type: ignore[no-untyped-def]
    a, b = _arrays(40, (4, 3), (4, 3))
    w = np.abs(a) + 0.5
    probabilities = (b + 2) / 4
    cases: list[tuple[str, dict[str, Any], list[Any], list[bool]]] = [
        ("l1_loss", {}, [a, b], [True, True]),
        ("l1_loss", {"weight": True}, [a, b, w], [True, True, True]),
        ("smooth_l1_loss", {"beta": 0.5}, [a, b], [True, True]),
        ("smooth_l1_loss", {"beta": 0.0}, [a, b], [True, True]),
        ("huber_loss", {"delta": 0.5}, [a, b], [True, True]),
        ("huber_loss", {"weight": True}, [a, b, w], [True, True, True]),
        ("binary_cross_entropy_with_logits", {}, [a, probabilities], [True, True]),
        (
            "binary_cross_entropy_with_logits",
            {"weight": True, "pos_weight": True},
            [a, probabilities, w, w[0]],
            [True, True, False, False],
        ),
        ("kl_div", {}, [np.log(probabilities), probabilities], [True, True]),
        ("kl_div", {"log_target": True}, [a, b], [True, True]),
    ]
    for name, options, arrays, flags in cases:

        def call(module: Any, *tensors: Any) -> Any:
            kwargs = {k: v for k, v in options.items() if v is not True}
            rest = list(tensors[2:])
            for key in ("weight", "pos_weight"):
                if options.get(key) is True:
                    kwargs[key] = rest.pop(0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(module, name)(
                    tensors[0], tensors[1], reduction=reduction, **kwargs
                )

        _check_against_torch(
            lambda *t: call(GF, *t),
            lambda torch: lambda *t: call(torch.nn.functional, *t),
            arrays,
            flags,
        )


def test_functional_kl_div_batchmean_and_warnings_match_torch() -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(41)
    x, y = np.log(rng.dirichlet(np.ones(3), 4)), rng.dirichlet(np.ones(3), 4)
    _check_against_torch(
        lambda a, b: GF.kl_div(a, b, reduction="batchmean"),
        lambda torch: lambda a, b: torch.nn.functional.kl_div(
            a, b, reduction="batchmean"
        ),
        [x, y],
    )

    def messages(lib: Any, functional: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            functional.kl_div(lib.tensor(x), lib.tensor(y))
        return [str(w.message) for w in caught]

    theirs = oracle("warnings", lambda torch: messages(torch, torch.nn.functional))
    assert messages(gradgen, GF) == theirs


@pytest.mark.parametrize(
    "size_average, reduce", [(None, False), (False, None), (True, True), (False, False)]
)
@pytest.mark.parametrize(
    "name", ["l1_loss", "smooth_l1_loss", "binary_cross_entropy_with_logits", "kl_div"]
)
def test_functional_legacy_flags_match_torch(name, size_average, reduce) -> None:  # type: ignore[no-untyped-def]
    a, b = _arrays(42, (4, 3), (4, 3))
    b = (b + 2) / 4

    def run(lib: Any, functional: Any) -> tuple[Any, list[str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(functional, name)(
                lib.tensor(a), lib.tensor(b), size_average=size_average, reduce=reduce
            )
        return out.numpy(), [str(w.message) for w in caught]

    out, messages = run(gradgen, GF)
    expected, expected_messages = oracle(
        "result", lambda torch: run(torch, torch.nn.functional)
    )
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert messages == expected_messages


def test_functional_messages_match_torch() -> None:  # type: ignore[no-untyped-def]
    checks: list[tuple[Callable[[], Any], Callable[[Any], Any]]] = [
        (
            lambda: GF.l1_loss(
                gradgen.ones(3), gradgen.ones(3), weight=gradgen.ones(4)
            ),
            lambda torch: torch.nn.functional.l1_loss(
                torch.ones(3), torch.ones(3), weight=torch.ones(4)
            ),
        ),
        (
            lambda: GF.huber_loss(
                gradgen.ones(3), gradgen.ones(3), weight=gradgen.ones(4)
            ),
            lambda torch: torch.nn.functional.huber_loss(
                torch.ones(3), torch.ones(3), weight=torch.ones(4)
            ),
        ),
        (
            lambda: GF.l1_loss(
                gradgen.ones(3),
                gradgen.ones(3),
                weight=gradgen.ones(3),
                reduction="bad",
            ),
            lambda torch: torch.nn.functional.l1_loss(
                torch.ones(3), torch.ones(3), weight=torch.ones(3), reduction="bad"
            ),
        ),
        (
            lambda: GF.l1_loss(gradgen.ones(3), gradgen.ones(3), reduction="bad"),
            lambda torch: torch.nn.functional.l1_loss(
                torch.ones(3), torch.ones(3), reduction="bad"
            ),
        ),
        (
            lambda: GF.kl_div(gradgen.ones(3), gradgen.ones(3), reduction="bad"),
            lambda torch: torch.nn.functional.kl_div(
                torch.ones(3), torch.ones(3), reduction="bad"
            ),
        ),
        (
            lambda: GF.binary_cross_entropy_with_logits(
                gradgen.ones(3), gradgen.ones(3, 1)
            ),
            lambda torch: torch.nn.functional.binary_cross_entropy_with_logits(
                torch.ones(3), torch.ones(3, 1)
            ),
        ),
    ]
    for number, (ours, theirs) in enumerate(checks):
        expected = oracle(str(number), lambda torch: outcome(lambda: theirs(torch)))
        assert isinstance(expected, Exception)
        with pytest.raises(type(expected)) as got:
            ours()
        assert str(got.value).replace("gradgen.Size", "torch.Size") == str(expected)
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
        with pytest.warns(
            UserWarning,
            match=r"Using a target size \(gradgen.Size\(\[3\]\)\) that is different to the input size \(gradgen.Size\(\[3, 1\]\)\)",
        ):
            out = getattr(GF, name)(gradgen.ones(3, 1), gradgen.zeros(3))
        assert out.shape == ()


def test_functional_activations_match_torch() -> None:  # type: ignore[no-untyped-def]
    (x,) = _arrays(43, (3, 4))
    for name, kwargs in (
        ("leaky_relu", {"negative_slope": 0.2}),
        ("elu", {"alpha": 0.5}),
        ("softplus", {"beta": 2, "threshold": 1}),
        ("logsigmoid", {}),
        ("hardtanh", {"min_val": -0.5, "max_val": 0.5}),
        ("mish", {}),
        ("softsign", {}),
    ):
        _check_against_torch(
            lambda a: getattr(GF, name)(a, **kwargs),
            lambda torch: lambda a: getattr(torch.nn.functional, name)(a, **kwargs),
            [x],
        )
    for name in ("leaky_relu", "elu", "hardtanh", "mish"):

        def inplace(lib: Any, functional: Any) -> Any:
            tensor = lib.tensor(x)
            assert functional(tensor, inplace=True) is tensor
            return tensor.numpy()

        theirs = oracle(
            f"{name}(inplace=True)",
            lambda torch: inplace(torch, getattr(torch.nn.functional, name)),
        )
        ours = inplace(gradgen, getattr(GF, name))
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=name)


def test_grad_fn_names_match_torch() -> None:  # type: ignore[no-untyped-def]
    x, y = _arrays(44, (2, 3), (2, 3))
    cases: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (lambda lib, a, b: _f(lib, "l1_loss")(a, b, MEAN), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "l1_loss")(a, b, SUM), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "l1_loss")(a, b, NONE), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "kl_div")(a, b, NONE), lambda lib, a, b: None),
        (
            lambda lib, a, b: _f(lib, "kl_div")(a, b, NONE, log_target=True),
            lambda lib, a, b: None,
        ),
        (lambda lib, a, b: _f(lib, "log_sigmoid")(a), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "dropout")(a, 1.0, True), lambda lib, a, b: None),
        (lambda lib, a, b: _f(lib, "layer_norm")(a, (3,)), lambda lib, a, b: None),
        (
            lambda lib, a, b: _f(lib, "constant_pad_nd")(a, (1, 1)),
            lambda lib, a, b: None,
        ),
        (
            lambda lib, a, b: _f(lib, "embedding")(a, lib.tensor([1, 0])),
            lambda lib, a, b: None,
        ),
    ]
    for number, (make, _) in enumerate(cases):

        def names(lib: Any) -> tuple[str, list[Any]]:
            out = make(
                lib,
                lib.tensor(x, requires_grad=True),
                lib.tensor(y, requires_grad=True),
            )
            following = [
                type(n).__name__ if n is not None else None
                for n, _ in out.grad_fn.next_functions
            ]
            return out.grad_fn.name(), following

        ours_name, ours_next = names(gradgen)
        theirs_name, theirs_next = oracle(str(number), names)
        assert ours_name == theirs_name
        # gradgen has no xlogy: kl_div writes xlogy(target, target) with where.
        assert ours_next == [{"XlogyBackward0": "WhereBackward0"}.get(n, n) for n in theirs_next]  # type: ignore[arg-type]


def _f(lib: Any, name: str) -> Callable[..., Any]:
    return getattr(lib, name) if lib is gradgen else _nn(lib, name)
