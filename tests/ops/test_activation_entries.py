"""The activation, margin-loss and dropout entries taken from PyTorch's derivatives.yaml
(celu, glu, hardshrink, softshrink, hardsigmoid, hardswish, threshold, rrelu_with_noise,
prelu, logaddexp, soft/multi/multilabel margin losses, native_dropout), beyond the
operator table: torch.nn.functional and the modules go through them (grad_fn names),
float32, complex logaddexp, error texts, and the second derivatives gradgen adds where
PyTorch has none (checked numerically)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome

RNG = np.random.default_rng(1313)
X = RNG.uniform(-4.0, 4.0, (3, 4))
W = RNG.uniform(0.1, 0.5, (4,))

# name -> (the call, for torch.nn.functional or gradgen.nn.functional; PyTorch's node)
FUNCTIONALS: dict[str, tuple[Any, str]] = {
    "celu": (lambda F, x: F.celu(x, 0.7), "CeluBackward0"),
    "glu": (lambda F, x: F.glu(x, 1), "GluBackward0"),
    "hardshrink": (lambda F, x: F.hardshrink(x, 0.9), "HardshrinkBackward0"),
    "softshrink": (lambda F, x: F.softshrink(x, 0.9), "SoftshrinkBackward0"),
    "hardsigmoid": (lambda F, x: F.hardsigmoid(x), "HardsigmoidBackward0"),
    "hardswish": (lambda F, x: F.hardswish(x), "HardswishBackward0"),
    "threshold": (lambda F, x: F.threshold(x, 0.5, -2.0), "ThresholdBackward0"),
    "rrelu_eval": (lambda F, x: F.rrelu(x, 0.1, 0.3), "RreluWithNoiseBackward0"),
    "soft_margin_loss": (
        lambda F, x: F.soft_margin_loss(x, (x.detach() > 0).to(x.dtype) * 2 - 1),
        "SoftMarginLossBackward0",
    ),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONALS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_functional_goes_through_the_entry(name: str, dtype: str) -> None:
    call = FUNCTIONALS[name][0]
    x = gradgen.tensor(X.astype(dtype), requires_grad=True)
    out = call(GF, x)
    out.sum().backward()

    def run(torch: Any) -> Any:
        t = torch.tensor(X.astype(dtype), requires_grad=True)
        result = call(torch.nn.functional, t)
        result.sum().backward()
        return {
            "out": result.detach().numpy(),
            "grad": t.grad.numpy(),
            "node": type(result.grad_fn).__name__,
        }

    expected = oracle("result", run)
    assert type(out.grad_fn).__name__ == expected["node"] == FUNCTIONALS[name][1]
    rtol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.detach().numpy(), expected["out"], rtol=rtol)
    np.testing.assert_allclose(x.grad.numpy(), expected["grad"], rtol=rtol, atol=1e-7)
    assert out.dtype == gradgen.float32 if dtype == "float32" else gradgen.float64


def test_prelu_module_goes_through_prelu_kernel() -> None:
    module = gradgen.nn.PReLU(4, 0.3)
    x = gradgen.tensor(X, dtype=gradgen.float32)
    out = module(x)
    out.sum().backward()
    expected = oracle("result", _prelu_torch)
    assert type(out.grad_fn).__name__ == expected["node"] == "PreluKernelBackward0"
    np.testing.assert_allclose(out.detach().numpy(), expected["out"], rtol=1e-6)
    np.testing.assert_allclose(module.weight.grad.numpy(), expected["grad"], rtol=1e-6)


def _prelu_torch(torch: Any) -> dict[str, Any]:
    module = torch.nn.PReLU(4, 0.3)
    out = module(torch.tensor(X, dtype=torch.float32))
    out.sum().backward()
    return {
        "out": out.detach().numpy(),
        "grad": module.weight.grad.numpy(),
        "node": type(out.grad_fn).__name__,
    }


def test_rrelu_in_training_draws_slopes_into_the_noise() -> None:
    """Negative inputs get a slope in [lower, upper] (kept in noise), others 1; the
    gradient is the noise (hand math), and the draws follow gradgen.manual_seed."""
    x = gradgen.tensor(X, requires_grad=True)
    noise = gradgen.zeros(3, 4, dtype=gradgen.float64)
    gradgen.manual_seed(7)
    out = gradgen.rrelu_with_noise(x, noise, 0.1, 0.3, True)
    slopes = noise.numpy()
    assert np.all(slopes[X > 0] == 1)
    assert np.all((slopes[X <= 0] >= 0.1) & (slopes[X <= 0] <= 0.3))
    np.testing.assert_allclose(out.detach().numpy(), X * slopes)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)
    again = gradgen.zeros(3, 4, dtype=gradgen.float64)
    gradgen.manual_seed(7)
    gradgen.rrelu_with_noise(x.detach(), again, 0.1, 0.3, True)
    np.testing.assert_array_equal(again.numpy(), slopes)


def test_rrelu_module_in_evaluation_is_leaky_relu_with_the_mean_slope() -> None:
    module = gradgen.nn.RReLU(0.1, 0.3).eval()
    out = module(gradgen.tensor(X))
    np.testing.assert_allclose(out.numpy(), np.where(X >= 0, X, 0.2 * X))


def test_logaddexp_of_complex_numbers_matches_torch() -> None:
    a = X + 1j * X[::-1]
    b = X.T.reshape(3, 4) - 0.5j
    x = gradgen.tensor(a, requires_grad=True)
    y = gradgen.tensor(b, requires_grad=True)
    assert gradcheck(gradgen.logaddexp, (x, y))
    out = gradgen.logaddexp(x, y)

    def run(torch: Any) -> Any:
        return torch.logaddexp(torch.tensor(a), torch.tensor(b)).numpy()

    np.testing.assert_allclose(out.detach().numpy(), oracle("value", run), rtol=1e-12)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multi_margin_loss_module_matches_torch(p: int, reduction: str) -> None:
    target = np.array([3, 0, 2])
    weight = np.array([0.5, 1.0, 2.0, 1.5])

    def run(lib: Any) -> Any:
        x = lib.tensor(X * 0.3, requires_grad=True)
        module = lib.nn.MultiMarginLoss(p, 0.9, lib.tensor(weight), reduction=reduction)
        out = module(x, lib.tensor(target))
        out.sum().backward()
        return {"out": out.detach().numpy(), "grad": x.grad.numpy()}

    ours, expected = run(gradgen), oracle("result", run)
    np.testing.assert_allclose(ours["out"], expected["out"], rtol=1e-12)
    np.testing.assert_allclose(ours["grad"], expected["grad"], rtol=1e-12)


def test_multilabel_margin_loss_module_matches_torch() -> None:
    target = np.array([[3, 0, -1, 1], [1, -1, 0, 0], [2, 1, 0, 3]])

    def run(lib: Any) -> Any:
        x = lib.tensor(X * 0.3, requires_grad=True)
        out = lib.nn.MultiLabelMarginLoss(reduction="sum")(x, lib.tensor(target))
        out.backward()
        return {"out": out.detach().numpy(), "grad": x.grad.numpy()}

    ours, expected = run(gradgen), oracle("result", run)
    np.testing.assert_allclose(ours["out"], expected["out"], rtol=1e-12)
    np.testing.assert_allclose(ours["grad"], expected["grad"], rtol=1e-12)


def test_margin_loss_backwards_match_torch_values() -> None:
    """The backward operators' values (their own derivatives are gradgen's)."""
    target = np.array([3, 0, 2])
    labels = np.array([[3, 0, -1, 1], [1, -1, 0, 0], [2, 1, 0, 3]])
    g = RNG.uniform(-1, 1, 3)

    def run(lib: Any) -> Any:
        ns = lib.ops.aten if lib is not gradgen else gradgen
        x = lib.tensor(X * 0.3)
        is_target = ns.multilabel_margin_loss_forward(x, lib.tensor(labels), 0)[1]
        return [
            ns.multi_margin_loss_backward(
                lib.tensor(g), x, lib.tensor(target), 2, 0.9, None, 0
            ).numpy(),
            ns.multilabel_margin_loss_backward(
                lib.tensor(g), x, lib.tensor(labels), 0, is_target
            ).numpy(),
        ]

    for ours, expected in zip(run(gradgen), oracle("values", run)):
        np.testing.assert_allclose(ours, expected, rtol=1e-12)


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_second_derivatives_are_numerically_right(p: int) -> None:
    """gradgen's own formulas for multi_margin_loss_backward, against differences."""
    x = gradgen.tensor(X * 0.3, requires_grad=True)
    target = gradgen.tensor([3, 0, 2])
    weight = gradgen.tensor([0.5, 1.0, 2.0, 1.5], dtype=gradgen.float64)
    for reduction in (0, 1, 2):
        assert gradgradcheck(
            lambda a: gradgen.multi_margin_loss(a, target, p, 0.9, weight, reduction),
            (x,),
        )


def test_native_dropout_draws_and_scales() -> None:
    """Kept entries scaled by 1 / (1 - p), the mask boolean, the gradient the same
    mask and scale (hand math); not training: the input and an all-true mask."""
    gradgen.manual_seed(3)
    x = gradgen.tensor(X, requires_grad=True)
    out, mask = gradgen.native_dropout(x, 0.25, True)
    keep = mask.numpy()
    assert mask.dtype == gradgen.bool and 0 < keep.sum() < keep.size
    np.testing.assert_allclose(out.detach().numpy(), X * keep / 0.75)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), keep / 0.75)
    assert type(out.grad_fn).__name__ == "NativeDropoutBackward0"
    same, full = gradgen.native_dropout(x, 0.25, False)
    np.testing.assert_array_equal(same.detach().numpy(), X)
    assert full.numpy().all()


CASES = {
    "celu alpha 0": lambda lib: lib.celu(lib.tensor([1.0]), 0.0),
    "glu odd": lambda lib: lib.nn.functional.glu(lib.tensor([1.0, 2.0, 3.0])),
    "glu scalar": lambda lib: lib.nn.functional.glu(lib.tensor(1.0)),
    "hardshrink long": lambda lib: lib.hardshrink(lib.tensor([1]), 0.5),
    "softshrink negative": lambda lib: lib.nn.functional.softshrink(
        lib.tensor([1.0]), -1.0
    ),
    "prelu weight 2d": lambda lib: lib.prelu(lib.ones(2, 3), lib.ones(3, 1)),
    "prelu mismatch": lambda lib: lib.prelu(lib.ones(2, 3), lib.ones(2)),
    "multi margin target": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(3, 4), lib.tensor([2, 0])
    ),
    "multi margin range": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(3, 4), lib.tensor([2, 0, 5])
    ),
    "multi margin p": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(3, 4), lib.tensor([2, 0, 1]), p=3
    ),
    "multi margin weight": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(3, 4), lib.tensor([2, 0, 1]), weight=lib.ones(3)
    ),
    "multilabel target size": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.ones(2, 4), lib.tensor([1, 2])
    ),
    "multilabel range": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.ones(2, 4), lib.tensor([[1, 5, -1, 0], [0, 0, 0, 0]])
    ),
    "native dropout p": lambda lib: lib.native_dropout(lib.ones(3), 1.5, True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_errors_match_torch(case: str) -> None:
    ours = outcome(lambda: CASES[case](gradgen))
    expected = oracle("error", lambda torch: outcome(lambda: CASES[case](torch)))
    assert isinstance(expected, Exception) and isinstance(ours, Exception)
    assert type(ours).__name__ == type(expected).__name__
    assert str(ours) == str(expected)
