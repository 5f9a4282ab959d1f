"""Activations (and dropout) against PyTorch, beyond the operator table: values,
derivatives, forward mode, extremes, dtypes, backward operators, in-place variants.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import forward_ad, gradgradcheck
from torch_oracle import oracle
from ops.nn_checks import (
    TOLERANCE,
    _arrays,
    _check_against_torch,
    _dtype_name,
    _nn,
    _same_error,
    _second_derivatives_match,
)

# torch.autograd.forward_ad's first use scripts a function with torch.jit (deprecated).
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


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
def test_activations_match_torch(name, args, dtype) -> None:
    (x,) = _arrays(1, (4, 5), dtype=dtype)
    x.flat[:3] = [0.0, -0.0, 1.0]  # the kinks
    _check_against_torch(
        lambda a: getattr(gradgen, name)(a, *args),
        lambda torch: lambda a: _nn(torch, name)(a, *args),
        [x],
    )


@pytest.mark.parametrize("name, args", ACTIVATIONS)
def test_activations_second_derivatives_match_torch(name, args) -> None:
    (x,) = _arrays(2, (7,))
    _second_derivatives_match(
        lambda a: getattr(gradgen, name)(a, *args) * a,
        lambda torch: lambda a: _nn(torch, name)(a, *args) * a,
        [x],
    )


@pytest.mark.parametrize("name, args", ACTIVATIONS)
def test_activations_forward_mode_matches_torch(name, args) -> None:
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


def test_activations_extreme_values_match_torch() -> None:
    x = np.array(
        [-1000.0, -50.0, -20.0, 0.0, 19.9, 20.1, 50.0, 1000.0, np.nan, np.inf, -np.inf]
    )
    for name, args in ACTIVATIONS:
        ours = getattr(gradgen, name)(gradgen.tensor(x), *args).numpy()
        theirs = oracle(
            f"{name}{args}", lambda torch: _nn(torch, name)(torch.tensor(x), *args)
        )
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=f"{name}{args}")


def test_activation_gradients_at_extremes_match_torch() -> None:
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
def test_activation_dtype_errors_match_torch(name, dtype) -> None:
    x = np.ones(3, dtype=dtype)
    _same_error(
        lambda: getattr(gradgen, name)(gradgen.tensor(x)),
        lambda torch: lambda: _nn(torch, name)(torch.tensor(x)),
    )


def test_hardtanh_dtypes_match_torch() -> None:
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
def test_backward_operators_match_torch(name, arguments, dtype) -> None:
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


def test_log_sigmoid_forward_and_backward_match_torch() -> None:
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


def test_backward_operators_double_backward_match_torch() -> None:
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


def test_mish_backward_has_no_derivative_and_mish_double_backward_works() -> None:
    g, x = _arrays(7, (4,), (4,))
    out = gradgen.mish_backward(
        gradgen.tensor(g, requires_grad=True), gradgen.tensor(x)
    )
    assert out.grad_fn.name() == "NotImplemented"
    inputs = [gradgen.tensor(x, requires_grad=True)]
    assert gradgradcheck(gradgen.mish, inputs)


def test_inplace_backward_with_negative_slope_errors_match_torch() -> None:
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
def test_inplace_activations_match_torch(name, args, torch_node, our_node) -> None:
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


def test_inplace_activations_in_forward_mode() -> None:
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


def test_dropout_edge_cases_match_torch() -> None:
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
