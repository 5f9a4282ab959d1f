"""Every gradgen.optim algorithm against torch.optim step by step: the same initial
weights, the gradients of the same loss, the parameters after each step equal to
float64 rounding (recorded in tests/golden/optim/, see torch_oracle.py); and a few
updates worked out by hand."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import optim
from torch_oracle import oracle, outcome

# (optimizer, options): every option each algorithm has, each at least once.
CONFIGS = [
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True, foreach=False)),
    ("Adam", dict(lr=0.02, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.02, maximize=True, foreach=True, capturable=False)),
    ("AdamW", dict(lr=0.02)),
    ("AdamW", dict(lr=0.02, betas=(0.8, 0.95), amsgrad=True, weight_decay=0.3)),
    ("AdamW", dict(lr=0.02, maximize=True, differentiable=False)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.2, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.02)),
    ("Adamax", dict(lr=0.02, betas=(0.7, 0.9), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.02)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.02)),
    ("RAdam", dict(lr=0.02, betas=(0.5, 0.9), weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
]
STEPS = 8


def regression(
    lib: Any, dtype: Any = np.float64
) -> tuple[list[Any], Callable[[], Any]]:
    """Two parameters and a loss of them (a tanh layer's squared error)."""
    rng = np.random.default_rng(0)
    weight0, bias0 = rng.standard_normal((4, 3)), rng.standard_normal(4)
    x, target = rng.standard_normal((6, 3)), rng.standard_normal((6, 4))
    weight = lib.tensor(weight0.astype(dtype), requires_grad=True)
    bias = lib.tensor(bias0.astype(dtype), requires_grad=True)
    inputs, targets = lib.tensor(x.astype(dtype)), lib.tensor(target.astype(dtype))

    def loss() -> Any:
        return ((((inputs @ weight.t()) + bias).tanh() - targets) ** 2).sum()

    return [weight, bias], loss


def trajectory(lib: Any, name: str, options: dict[str, Any]) -> list[np.ndarray]:
    """The parameters (flattened together) after each of STEPS steps."""
    params, loss = regression(lib)
    optimizer = getattr(lib.optim, name)(params, **options)
    result = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss().backward()
        optimizer.step()
        result.append(np.concatenate([p.detach().numpy().ravel() for p in params]))
    return result


@pytest.mark.parametrize(("name", "options"), CONFIGS)
def test_steps_match_torch(name: str, options: dict[str, Any]) -> None:
    ours = trajectory(gradgen, name, options)
    theirs = oracle("parameters", lambda torch: trajectory(torch, name, options))
    start = np.concatenate([p.detach().numpy().ravel() for p in regression(gradgen)[0]])
    assert np.max(np.abs(ours[-1] - start)) > 1e-3  # the parameters moved
    for step, (mine, torchs) in enumerate(zip(ours, theirs), 1):
        np.testing.assert_allclose(
            mine, torchs, rtol=0, atol=1e-13, err_msg=f"step {step}"
        )


def float32_trajectory(lib: Any, name: str) -> np.ndarray:
    params, loss = regression(lib, np.float32)
    optimizer = getattr(lib.optim, name)(params, lr=0.01)
    for _ in range(5):
        optimizer.zero_grad()
        loss().backward()
        optimizer.step()
    return np.concatenate([p.detach().numpy().ravel() for p in params])


@pytest.mark.parametrize(
    "name",
    ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "ASGD"],
)
def test_float32_parameters_stay_float32_and_match_torch(name: str) -> None:
    ours = float32_trajectory(gradgen, name)
    theirs = oracle("parameters", lambda torch: float32_trajectory(torch, name))
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def complex_trajectory(lib: Any, name: str) -> np.ndarray:
    """A complex parameter: PyTorch updates its real and imaginary parts as reals."""
    z = lib.tensor(np.array([1 + 2j, -0.5 + 0.25j]), requires_grad=True)
    target = lib.tensor(np.array([0.3 - 1j, 2 + 0j]))
    optimizer = getattr(lib.optim, name)([z], lr=0.05)
    for _ in range(4):
        optimizer.zero_grad()
        ((z - target).abs() ** 2).sum().backward()
        optimizer.step()
    return z.detach().numpy()


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad", "Rprop", "ASGD"])
def test_complex_parameters_match_torch(name: str) -> None:
    ours = complex_trajectory(gradgen, name)
    theirs = oracle("parameter", lambda torch: complex_trajectory(torch, name))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-13)


# -- LBFGS -----------------------------------------------------------------------------


def logistic(lib: Any, options: dict[str, Any]) -> dict[str, Any]:
    """LBFGS on an L2-regularised logistic regression: the weights after each step
    and the counters PyTorch keeps."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 5))
    y = (rng.standard_normal(8) > 0).astype(float)
    w = lib.tensor(rng.standard_normal(5) * 0.1, requires_grad=True)
    x, labels = lib.tensor(a), lib.tensor(y)
    optimizer = lib.optim.LBFGS([w], **options)

    def closure() -> Any:
        optimizer.zero_grad()
        z = x @ w
        loss = ((1 + (-z).exp()).log() + (1 - labels) * z).mean() + 0.05 * (w * w).sum()
        loss.backward()
        return loss

    weights, losses = [], []
    for _ in range(3):
        losses.append(float(optimizer.step(closure).detach()))
        weights.append(w.detach().numpy().copy())
    state = optimizer.state_dict()["state"][0]
    return {
        "weights": weights,
        "losses": losses,
        "func_evals": state["func_evals"],
        "n_iter": state["n_iter"],
        "keys": sorted(state),
    }


LBFGS_CONFIGS = [
    dict(),
    dict(lr=0.5, max_iter=5),
    dict(max_iter=4, history_size=2),
    dict(line_search_fn="strong_wolfe"),
    dict(lr=1, max_iter=8, history_size=3, line_search_fn="strong_wolfe"),
]


@pytest.mark.parametrize("options", LBFGS_CONFIGS)
def test_lbfgs_matches_torch(options: dict[str, Any]) -> None:
    ours = logistic(gradgen, options)
    theirs = oracle("run", lambda torch: logistic(torch, options))
    for mine, torchs in zip(ours["weights"], theirs["weights"]):
        np.testing.assert_allclose(mine, torchs, rtol=0, atol=1e-13)
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-13)
    assert ours["func_evals"] == theirs["func_evals"]
    assert ours["n_iter"] == theirs["n_iter"]
    assert ours["keys"] == theirs["keys"]


def rosenbrock_run(lib: Any) -> np.ndarray:
    """The strong-Wolfe search on Rosenbrock's valley: brackets and zooms."""
    xy = lib.tensor(np.array([-1.5, 2.0]), requires_grad=True)
    optimizer = lib.optim.LBFGS(
        [xy], lr=1, max_iter=30, history_size=5, line_search_fn="strong_wolfe"
    )

    def closure() -> Any:
        optimizer.zero_grad()
        loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
        loss.backward()
        return loss

    optimizer.step(closure)
    return xy.detach().numpy()


def test_lbfgs_strong_wolfe_on_rosenbrock() -> None:
    ours = rosenbrock_run(gradgen)
    theirs = oracle("point", rosenbrock_run)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    x, y = ours
    assert (1 - x) ** 2 + 100 * (y - x * x) ** 2 < 0.2  # from 12.5, down the valley


def test_lbfgs_closure_and_errors() -> None:
    w = gradgen.tensor([3.0], requires_grad=True)
    optimizer = optim.LBFGS([w])
    with pytest.raises(TypeError) as raised:
        optimizer.step()
    theirs = oracle(
        "no closure",
        lambda torch: outcome(
            lambda: torch.optim.LBFGS([torch.zeros(1, requires_grad=True)]).step()
        ),
    )
    assert type(theirs) is TypeError and str(raised.value) == str(theirs)
    with pytest.raises(
        ValueError, match=r"doesn't support per-parameter options \(parameter groups\)"
    ):
        optim.LBFGS([{"params": [w]}, {"params": [gradgen.tensor([1.0])]}])
    bad = optim.LBFGS([w], line_search_fn="armijo")

    def closure() -> gradgen.Tensor:
        bad.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        bad.step(closure)
    # A quadratic: L-BFGS lands on the minimum.
    optimizer = optim.LBFGS([w], line_search_fn="strong_wolfe")

    def quadratic() -> gradgen.Tensor:
        optimizer.zero_grad()
        loss = ((w - 2) ** 2).sum()
        loss.backward()
        return loss

    optimizer.step(quadratic)
    assert w.item() == pytest.approx(2.0, abs=1e-6)


# -- by hand ---------------------------------------------------------------------------


def one_step(optimizer_class: Any, values: list[float], **options: Any) -> np.ndarray:
    """The parameter after one step on loss = sum(p**2) / 2 (gradient p)."""
    p = gradgen.tensor(np.array(values), requires_grad=True)
    optimizer = optimizer_class([p], **options)
    (p * p).sum().mul(0.5).backward()
    optimizer.step()
    return p.detach().numpy()


def test_first_steps_by_hand() -> None:
    p = np.array([2.0, -0.5])
    # Adagrad: s = g**2, p -= lr * g / (|g| + eps).
    np.testing.assert_allclose(
        one_step(optim.Adagrad, [2.0, -0.5], lr=0.1), p - 0.1 * np.sign(p), rtol=1e-9
    )
    # RMSprop: v = (1 - alpha) g**2, p -= lr * g / (sqrt(v) + eps).
    np.testing.assert_allclose(
        one_step(optim.RMSprop, [2.0, -0.5], lr=0.01, alpha=0.75),
        p - 0.01 * p / (np.sqrt(0.25 * p * p) + 1e-8),
        rtol=1e-9,
    )
    # Adamax: m = 0.1 g, u = |g|, p -= lr / 0.1 * m / u = lr * sign(g).
    np.testing.assert_allclose(
        one_step(optim.Adamax, [2.0, -0.5], lr=0.02), p - 0.02 * np.sign(p), rtol=1e-7
    )
    # AdamW: p shrinks by lr * wd first, then Adam's first step lr * sign(g).
    np.testing.assert_allclose(
        one_step(optim.AdamW, [2.0, -0.5], lr=0.01, weight_decay=0.5),
        p * (1 - 0.005) - 0.01 * np.sign(p),
        rtol=1e-7,
    )
    # RAdam's first steps (rho_t <= 5) are plain bias-corrected momentum: p -= lr g.
    np.testing.assert_allclose(
        one_step(optim.RAdam, [2.0, -0.5], lr=0.01), p - 0.01 * p, rtol=1e-12
    )


def test_adadelta_first_step_by_hand() -> None:
    # v = 0.1 g**2; delta = sqrt(eps) / sqrt(v + eps) * g.
    g, eps = np.array([2.0, -0.5]), 1e-6
    delta = np.sqrt(eps) / np.sqrt(0.1 * g * g + eps) * g
    np.testing.assert_allclose(
        one_step(optim.Adadelta, [2.0, -0.5]), g - delta, rtol=1e-12
    )
