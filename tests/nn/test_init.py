"""gradgen.nn.init against torch.nn.init: the gains and deterministic fills exactly,
the random fills by their statistics (bounds, mean, standard deviation from the fan
computations, by hand and as torch's samples show them), signatures and errors."""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.nn import init
from torch_oracle import oracle

SHAPE = (256, 128, 3)  # fan_in = 128 * 3 = 384, fan_out = 256 * 3 = 768
FAN_IN, FAN_OUT = 384, 768


def _stats(tensor: Any) -> dict[str, float]:
    values = tensor.detach().numpy().astype(np.float64)
    return {
        "min": float(values.min()),
        "max": float(values.max()),
        "mean": float(values.mean()),
        "std": float(values.std()),
    }


def _seeded(torch: Any, fill: Any) -> dict[str, float]:
    """The statistics of torch's fill under a fixed seed (so the golden is stable)."""
    torch.manual_seed(0)
    return _stats(fill())


def _fresh(lib: Any) -> Any:
    return lib.empty(*SHAPE)


# Each: (function applied to an empty tensor of SHAPE, its bound or None, its std).
def _expected() -> dict[str, tuple[Any, float | None, float]]:
    xavier_std = math.sqrt(2.0 / (FAN_IN + FAN_OUT))
    leaky = math.sqrt(2.0 / (1 + 0.2**2))
    return {
        "uniform": (
            lambda lib, t: lib.nn.init.uniform_(t, -0.5, 1.5),
            None,
            2.0 / math.sqrt(12),
        ),
        "normal": (lambda lib, t: lib.nn.init.normal_(t, 0.5, 2.0), None, 2.0),
        "xavier_uniform": (
            lambda lib, t: lib.nn.init.xavier_uniform_(t, gain=2.0),
            2.0 * math.sqrt(6.0 / (FAN_IN + FAN_OUT)),
            2.0 * xavier_std,
        ),
        "xavier_normal": (
            lambda lib, t: lib.nn.init.xavier_normal_(t),
            None,
            xavier_std,
        ),
        "kaiming_uniform": (
            lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=0.2),
            leaky * math.sqrt(3.0 / FAN_IN),
            leaky / math.sqrt(FAN_IN),
        ),
        "kaiming_uniform_fan_out_relu": (
            lambda lib, t: lib.nn.init.kaiming_uniform_(
                t, mode="fan_out", nonlinearity="relu"
            ),
            math.sqrt(2.0) * math.sqrt(3.0 / FAN_OUT),
            math.sqrt(2.0 / FAN_OUT),
        ),
        "kaiming_normal": (
            lambda lib, t: lib.nn.init.kaiming_normal_(t, mode="fan_out"),
            None,
            math.sqrt(2.0 / (1 + 0.01**2)) / math.sqrt(FAN_OUT),
        ),
        "kaiming_linear_default": (  # nn.Linear's weight: a = sqrt(5)
            lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
            1.0 / math.sqrt(FAN_IN),
            1.0 / math.sqrt(FAN_IN) / math.sqrt(3),
        ),
    }


@pytest.mark.parametrize("name", sorted(_expected()))
def test_random_fills_follow_the_fan_formulas(name: str) -> None:
    fill, bound, std = _expected()[name]
    gradgen.manual_seed(0)
    tensor = _fresh(gradgen)
    assert fill(gradgen, tensor) is tensor
    ours = _stats(tensor)
    theirs = oracle(
        "stats", lambda torch: _seeded(torch, lambda: fill(torch, _fresh(torch)))
    )
    # n = 98304 samples: the sample std is within 1% of the true one, the mean within
    # 4 standard errors.
    assert ours["std"] == pytest.approx(std, rel=0.01)
    assert theirs["std"] == pytest.approx(std, rel=0.01)
    standard_error = std / math.sqrt(math.prod(SHAPE))
    assert abs(ours["mean"] - theirs["mean"]) < 8 * standard_error
    if bound is not None:
        assert -bound <= ours["min"] and ours["max"] <= bound
        assert ours["max"] == pytest.approx(bound, rel=1e-3)
        assert theirs["max"] == pytest.approx(bound, rel=1e-3)


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments() -> None:
    gradgen.manual_seed(1)
    tensor = init.trunc_normal_(
        gradgen.empty(200, 300), mean=0.5, std=1.0, a=0.0, b=2.0
    )
    ours = _stats(tensor)
    theirs = oracle(
        "stats",
        lambda torch: _seeded(
            torch,
            lambda: torch.nn.init.trunc_normal_(
                torch.empty(200, 300), 0.5, 1.0, 0.0, 2.0
            ),
        ),
    )
    # The truncated normal's mean: mu + sigma * (phi(alpha) - phi(beta)) / Z.
    alpha, beta = -0.5, 1.5
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    mean = 0.5 + (phi(alpha) - phi(beta)) / z
    assert 0.0 <= ours["min"] and ours["max"] <= 2.0
    assert ours["mean"] == pytest.approx(mean, abs=0.01)
    assert theirs["mean"] == pytest.approx(mean, abs=0.01)
    assert ours["std"] == pytest.approx(theirs["std"], rel=0.02)
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(gradgen.empty(3), mean=10.0)


def test_deterministic_fills_match_torch() -> None:
    def run(lib: Any) -> Any:
        init = lib.nn.init
        return [
            init.constant_(lib.empty(2, 3), 0.25).tolist(),
            init.ones_(lib.empty(2)).tolist(),
            init.zeros_(lib.empty(2)).tolist(),
            init.eye_(lib.empty(2, 3)).tolist(),
            init.dirac_(lib.empty(4, 2, 3)).tolist(),
            init.dirac_(lib.empty(4, 2, 3, 3), groups=2).tolist(),
            [
                init.calculate_gain(name, param)
                for name, param in (
                    ("linear", None),
                    ("conv2d", None),
                    ("sigmoid", None),
                    ("tanh", None),
                    ("relu", None),
                    ("leaky_relu", None),
                    ("leaky_relu", 0.2),
                    ("leaky_relu", 3),
                    ("selu", None),
                )
            ],
        ]

    assert run(gradgen) == oracle("fills", run)


def test_orthogonal_and_sparse() -> None:
    gradgen.manual_seed(2)
    for shape in ((6, 4), (3, 8), (4, 2, 3)):
        weight = init.orthogonal_(gradgen.empty(*shape), gain=2.0)
        matrix = weight.numpy().reshape(shape[0], -1).astype(np.float64)
        gram = matrix @ matrix.T if shape[0] <= matrix.shape[1] else matrix.T @ matrix
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)
    sparse = init.sparse_(gradgen.empty(10, 7), sparsity=0.25, std=0.5)
    zeros_per_column = (sparse.numpy() == 0).sum(axis=0)
    assert zeros_per_column.tolist() == [math.ceil(0.25 * 10)] * 7


def test_init_errors_match_torch() -> None:
    def run(lib: Any) -> Any:
        init = lib.nn.init
        out = []
        for call in (
            lambda: init.xavier_uniform_(lib.empty(3)),
            lambda: init.kaiming_normal_(lib.empty(3, 2), mode="fan_middle"),
            lambda: init.eye_(lib.empty(3)),
            lambda: init.dirac_(lib.empty(3, 2)),
            lambda: init.dirac_(lib.empty(3, 2, 2), groups=2),
            lambda: init.orthogonal_(lib.empty(3)),
            lambda: init.sparse_(lib.empty(3, 2, 2), 0.1),
            lambda: init.calculate_gain("softmax"),
            lambda: init.calculate_gain("leaky_relu", "x"),
            lambda: init.calculate_gain("leaky_relu", True),
        ):
            try:
                call()
                out.append(None)
            except Exception as error:  # noqa: BLE001 - the error is the answer
                out.append(f"{type(error).__name__}: {error}")
        return out

    assert run(gradgen) == oracle("errors", run)


def test_signatures_match_torch() -> None:
    def run(lib: Any) -> Any:
        return {
            name: [
                (p.name, repr(p.default) if p.default is not p.empty else None)
                for p in inspect.signature(
                    getattr(lib.nn.init, name)
                ).parameters.values()
            ]
            for name in init.__all__
        }

    assert run(gradgen) == oracle("signatures", run)


def test_generator_and_manual_seed_make_fills_reproducible() -> None:
    first = init.normal_(gradgen.empty(5), generator=np.random.default_rng(7))
    second = init.normal_(gradgen.empty(5), generator=np.random.default_rng(7))
    assert first.tolist() == second.tolist()
    gradgen.manual_seed(3)
    a = gradgen.nn.Linear(4, 3)
    gradgen.manual_seed(3)
    b = gradgen.nn.Linear(4, 3)
    assert a.weight.tolist() == b.weight.tolist() and a.bias.tolist() == b.bias.tolist()
    with pytest.raises(TypeError, match="generator must be"):
        init.uniform_(gradgen.empty(2), generator=3)


def test_fills_run_outside_autograd_on_parameters() -> None:
    weight = gradgen.nn.Parameter(gradgen.empty(3, 4))
    version = weight._version
    init.kaiming_uniform_(weight)
    assert weight.grad_fn is None and weight.requires_grad
    assert weight._version == version + 1
    with pytest.warns(
        UserWarning, match="Initializing zero-element tensors is a no-op"
    ):
        init.kaiming_normal_(gradgen.empty(0, 3))


def test_default_layer_initialisations_follow_torch() -> None:
    gradgen.manual_seed(4)
    linear = gradgen.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for values in (linear.weight.detach().numpy(), linear.bias.detach().numpy()):
        assert values.min() >= -bound and values.max() <= bound
    assert linear.weight.detach().numpy().std() == pytest.approx(
        bound / math.sqrt(3), rel=0.02
    )
    embedding = gradgen.nn.Embedding(300, 200)
    assert embedding.weight.detach().numpy().std() == pytest.approx(1.0, rel=0.02)
    assert gradgen.nn.PReLU(3).weight.tolist() == [0.25] * 3
    norm = gradgen.nn.LayerNorm(3)
    assert norm.weight.tolist() == [1.0] * 3 and norm.bias.tolist() == [0.0] * 3
