"""The sampling operators taken from PyTorch's derivatives.yaml (poisson, bernoulli,
bernoulli.p): their nodes and zero gradients as PyTorch's, the draws following the
generator given (or gradgen.manual_seed), the statistics of the draws, the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle, outcome

N = 20000


def _node_name(lib: Any, node: Any) -> str:
    """PyTorch's class name (torch's NotImplemented node names itself with its C++
    namespace; gradgen's NotImplementedBackward names itself NotImplemented)."""
    if lib is not gradgen:
        return type(node).__name__
    return str(node.name())


def _nodes_and_grads(lib: Any) -> dict[str, Any]:
    x = lib.full((4,), 0.5, dtype=lib.float64, requires_grad=True)
    drawn = {
        "bernoulli": lib.bernoulli(x),
        "poisson": lib.poisson(x),
    }
    total = drawn["bernoulli"].sum() + drawn["poisson"].sum()
    (grad,) = lib.autograd.grad(total, x)
    return {
        "nodes": {name: type(out.grad_fn).__name__ for name, out in drawn.items()},
        "grad": grad.numpy(),
        "p node": _node_name(lib, lib.bernoulli(x, 0.5).grad_fn),
    }


def test_nodes_and_zero_gradients_are_pytorchs() -> None:
    ours, expected = _nodes_and_grads(gradgen), oracle("result", _nodes_and_grads)
    assert (
        ours["nodes"]
        == expected["nodes"]
        == {
            "bernoulli": "BernoulliBackward0",
            "poisson": "PoissonBackward0",
        }
    )
    assert ours["p node"] == expected["p node"] == "NotImplemented"
    np.testing.assert_array_equal(ours["grad"], expected["grad"])
    np.testing.assert_array_equal(ours["grad"], np.zeros(4))


@pytest.mark.parametrize(
    "draw, mean, var",
    [
        (lambda g: gradgen.bernoulli(gradgen.full((N,), 0.3), generator=g), 0.3, 0.21),
        (lambda g: gradgen.bernoulli(gradgen.zeros(N), 0.7, generator=g), 0.7, 0.21),
        (lambda g: gradgen.poisson(gradgen.full((N,), 2.5), g), 2.5, 2.5),
    ],
)
def test_draws_have_the_distributions_moments(
    draw: Any, mean: float, var: float
) -> None:
    values = draw(gradgen.Generator().manual_seed(5)).numpy().astype(np.float64)
    assert abs(values.mean() - mean) < 0.03 and abs(values.var() - var) < 0.1
    again = draw(gradgen.Generator().manual_seed(5)).numpy()
    np.testing.assert_array_equal(again, values)


def test_the_default_generator_is_gradgen_manual_seeds() -> None:
    rates = gradgen.full((50,), 3.0)
    gradgen.manual_seed(21)
    first = (gradgen.poisson(rates), gradgen.bernoulli(rates / 4))
    gradgen.manual_seed(21)
    second = (gradgen.poisson(rates), gradgen.bernoulli(rates / 4))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_draws_keep_the_input_dtype() -> None:
    x = gradgen.full((3,), 0.5, dtype=gradgen.float32)
    assert gradgen.bernoulli(x).dtype == gradgen.float32
    assert gradgen.bernoulli(x, 0.2).dtype == gradgen.float32
    assert gradgen.poisson(x).dtype == gradgen.float32


ERRORS = {
    "poisson negative": lambda lib: lib.poisson(-lib.ones(3)),
    "poisson long": lambda lib: lib.poisson(lib.ones(3, dtype=lib.long)),
    "bernoulli above one": lambda lib: lib.bernoulli(lib.full((3,), 1.5)),
    "bernoulli long": lambda lib: lib.bernoulli(lib.ones(3, dtype=lib.long)),
    "bernoulli p": lambda lib: lib.bernoulli(lib.ones(3), 1.5),
    "generator": lambda lib: lib.poisson(lib.ones(3), generator=3),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    ours = outcome(lambda: ERRORS[case](gradgen))
    expected = oracle("error", lambda torch: outcome(lambda: ERRORS[case](torch)))
    assert isinstance(expected, Exception) and isinstance(ours, Exception)
    assert type(ours).__name__ == type(expected).__name__
    assert str(ours) == str(expected)
