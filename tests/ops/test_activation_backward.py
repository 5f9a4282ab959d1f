"""gelu, silu and their backward operators beyond the operator table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle, outcome
from ops.unary_functions import _aten, _nn

# -- gelu, silu and the backward operators ----------------------------------------------


def test_gelu_rejects_unknown_approximations() -> None:
    message = "approximate argument must be either none or tanh."
    expected = oracle(
        "error",
        lambda torch: outcome(
            lambda: torch._C._nn.gelu(torch.ones(2), approximate="erf")
        ),
    )
    assert isinstance(expected, RuntimeError) and str(expected) == message
    with pytest.raises(RuntimeError, match=message):
        gradgen.gelu(gradgen.ones(2), approximate="erf")
    with pytest.raises(RuntimeError, match=message):
        gradgen.gelu_backward(gradgen.ones(2), gradgen.ones(2), approximate="erf")


def test_silu_backward_takes_the_kernel_without_create_graph() -> None:
    """silu's formula: silu_backward (no graph) unless grad mode is on in the backward,
    then the infinitely differentiable form (MulBackward0, as PyTorch)."""
    x = gradgen.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    (plain,) = gradgen.autograd.grad(gradgen.silu(x).sum(), x)
    (graph,) = gradgen.autograd.grad(gradgen.silu(x).sum(), x, create_graph=True)
    assert plain.grad_fn is None and type(graph.grad_fn).__name__ == "MulBackward0"
    np.testing.assert_allclose(plain.numpy(), graph.detach().numpy(), rtol=1e-15)


def test_silu_backward_has_no_derivative_as_in_torch() -> None:
    def run(lib: Any) -> tuple[bool, Any]:
        y = _aten(lib, "silu_backward")(lib.ones(2, requires_grad=True), lib.ones(2))
        return repr(y).endswith("grad_fn=<NotImplemented>)"), outcome(
            lambda: y.sum().backward()
        )

    for repr_ends_so, error in (run(gradgen), oracle("result", run)):
        assert repr_ends_so
        assert isinstance(error, RuntimeError)
        assert str(error) == "derivative for aten::silu_backward is not implemented"


@pytest.mark.parametrize(
    "name",
    [
        "sigmoid_backward",
        "tanh_backward",
        "threshold_backward",
        "gelu_backward",
        "silu_backward",
    ],
)
def test_backward_operators_promote_and_refuse_ints_as_torch(name: str) -> None:
    extra = (0.5,) if name == "threshold_backward" else ()
    for dtypes in (
        ("float32", "float64"),
        ("float64", "float32"),
        ("int64", "int64"),
        ("bool", "bool"),
    ):
        if name == "gelu_backward" and dtypes == ("float64", "float32"):
            continue  # torch sends float32 `self` to oneDNN, which refuses a double grad
        a = np.array([1, 0, 1], dtype=dtypes[0])
        b = np.array([1, 0, 1], dtype=dtypes[1])
        expected = oracle(
            str(dtypes),
            lambda torch: outcome(
                lambda: _aten(torch, name)(torch.tensor(a), torch.tensor(b), *extra)
            ),
        )
        if isinstance(expected, Exception):
            error = expected
            with pytest.raises(type(error)) as got:
                _aten(gradgen, name)(gradgen.tensor(a), gradgen.tensor(b), *extra)
            assert str(got.value) == str(error).splitlines()[0]
            continue
        ours = _aten(gradgen, name)(gradgen.tensor(a), gradgen.tensor(b), *extra)
        assert ours.dtype.name == str(expected.dtype).removeprefix("torch.")
        np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-6)


def test_backward_operator_grad_fn_names_match_torch() -> None:
    def run(lib: Any) -> list[str]:
        x = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        names = []
        for function in (lib.relu, lib.sigmoid, lib.tanh, _nn(lib, "gelu")):
            (g,) = lib.autograd.grad(function(x).sum(), x, create_graph=True)
            names.append(type(g.grad_fn).__name__)
        return names

    for names in (run(gradgen), oracle("names", run)):
        assert names == [
            "ThresholdBackwardBackward0",
            "SigmoidBackwardBackward0",
            "TanhBackwardBackward0",
            "GeluBackwardBackward0",
        ]
