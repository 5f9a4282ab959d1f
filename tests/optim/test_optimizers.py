"""gradgen.optim: SGD and Adam against updates worked out by hand (and in closed
form), and against torch.optim (recorded in tests/golden/, see torch_oracle.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen import nn
from gradgen.optim import SGD, Adam, Optimizer
from torch_oracle import oracle


def leaf(values: list[float]) -> gradgen.Tensor:
    return gradgen.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def half_square_step(optimizer: Optimizer, p: gradgen.Tensor) -> None:
    """One step on loss = sum(p**2) / 2, whose gradient is p."""
    optimizer.zero_grad()
    (p * p).sum().mul(0.5).backward()
    optimizer.step()


# -- SGD -------------------------------------------------------------------------------


def test_sgd_plain_steps() -> None:
    p = leaf([1.0, -2.0])
    optimizer = SGD([p], lr=0.1)
    for _ in range(3):
        half_square_step(optimizer, p)
    # p <- p - 0.1 p three times.
    np.testing.assert_allclose(p.detach().numpy(), [0.729, -1.458], rtol=1e-12)
    assert p.is_leaf and p.requires_grad


def test_sgd_momentum_by_hand() -> None:
    p = leaf([1.0, -2.0])
    optimizer = SGD([p], lr=0.1, momentum=0.9)
    expected = [
        [0.9, -1.8],  # buf = g = [1, -2]
        [0.72, -1.44],  # buf = 0.9 [1, -2] + [0.9, -1.8] = [1.8, -3.6]
        [0.486, -0.972],  # buf = 0.9 [1.8, -3.6] + [0.72, -1.44] = [2.34, -4.68]
    ]
    for values in expected:
        half_square_step(optimizer, p)
        np.testing.assert_allclose(p.detach().numpy(), values, rtol=1e-12)
    np.testing.assert_allclose(
        optimizer.state[p]["momentum_buffer"].numpy(), [2.34, -4.68], rtol=1e-12
    )


def test_sgd_weight_decay_dampening_nesterov_by_hand() -> None:
    p = leaf([1.0])
    optimizer = SGD([p], lr=0.5, weight_decay=0.1)
    half_square_step(optimizer, p)
    assert p.item() == pytest.approx(1 - 0.5 * 1.1)  # g = p + 0.1 p

    p = leaf([1.0])
    optimizer = SGD([p], lr=0.1, momentum=0.5, dampening=0.5)
    half_square_step(optimizer, p)  # buf = 1 (the first step is not dampened)
    assert p.item() == pytest.approx(0.9)
    half_square_step(optimizer, p)  # buf = 0.5 * 1 + 0.5 * 0.9 = 0.95
    assert p.item() == pytest.approx(0.9 - 0.095)

    p = leaf([1.0])
    optimizer = SGD([p], lr=0.1, momentum=0.5, nesterov=True)
    half_square_step(optimizer, p)  # buf = 1, step along g + 0.5 buf = 1.5
    assert p.item() == pytest.approx(0.85)


def test_sgd_maximize() -> None:
    p = leaf([1.0, -2.0])
    optimizer = SGD([p], lr=0.1, maximize=True)
    half_square_step(optimizer, p)
    np.testing.assert_allclose(p.detach().numpy(), [1.1, -2.2], rtol=1e-12)


# -- Adam ------------------------------------------------------------------------------


def test_adam_constant_gradient_closed_form() -> None:
    # With a constant gradient g the bias-corrected moments are g and g**2, so each
    # step moves p by lr * g / (|g| + eps), whatever the betas.
    g = np.array([2.0, -0.5, 1e-3])
    p = leaf([0.0, 0.0, 0.0])
    optimizer = Adam([p], lr=0.1, betas=(0.8, 0.99), eps=1e-3)
    for step in range(1, 4):
        optimizer.zero_grad()
        (p * gradgen.tensor(g)).sum().backward()
        optimizer.step()
        np.testing.assert_allclose(
            p.detach().numpy(), -step * 0.1 * g / (np.abs(g) + 1e-3), rtol=1e-12
        )
    assert optimizer.state[p]["step"] == 3


def test_adam_steps_as_in_the_paper() -> None:
    # Kingma & Ba's algorithm 1, written out here in numpy.
    lr, beta1, beta2, eps = 0.05, 0.9, 0.999, 1e-8
    values = np.array([1.0, -2.0, 0.5])
    m = np.zeros(3)
    v = np.zeros(3)
    p = leaf(values.tolist())
    optimizer = Adam([p], lr=lr)
    for t in range(1, 6):
        grad = values  # loss = sum(p**2) / 2
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        m_hat = m / (1 - beta1**t)
        v_hat = v / (1 - beta2**t)
        values = values - lr * m_hat / (np.sqrt(v_hat) + eps)
        half_square_step(optimizer, p)
        np.testing.assert_allclose(p.detach().numpy(), values, rtol=1e-10)
    np.testing.assert_allclose(optimizer.state[p]["exp_avg"].numpy(), m, rtol=1e-10)
    np.testing.assert_allclose(optimizer.state[p]["exp_avg_sq"].numpy(), v, rtol=1e-10)


def test_adam_weight_decay_first_step() -> None:
    # The first step moves every coordinate by lr * sign(g + wd * p) (up to eps).
    p = leaf([1.0, -3.0])
    optimizer = Adam([p], lr=0.01, weight_decay=0.5)
    half_square_step(optimizer, p)
    np.testing.assert_allclose(p.detach().numpy(), [0.99, -2.99], rtol=1e-7)


# -- with torch.optim ------------------------------------------------------------------

CONFIGS = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.5, 0.9), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, amsgrad=True)),
    ("Adam", dict(lr=0.02, maximize=True)),
]


@pytest.mark.parametrize(("name", "options"), CONFIGS)
def test_optimizers_match_torch(name: str, options: dict[str, Any]) -> None:
    rng = np.random.default_rng(0)
    weight0 = rng.standard_normal((4, 3))
    bias0 = rng.standard_normal(4)
    x = rng.standard_normal((6, 3))
    target = rng.standard_normal((6, 4))

    def run(lib: Any) -> tuple[np.ndarray, np.ndarray]:
        weight = lib.tensor(weight0, requires_grad=True)
        bias = lib.tensor(bias0, requires_grad=True)
        optimizer = getattr(lib.optim, name)([weight, bias], **options)
        for _ in range(6):
            optimizer.zero_grad()
            out = (lib.tensor(x) @ weight.t() + bias).tanh()
            ((out - lib.tensor(target)) ** 2).sum().backward()
            optimizer.step()
        return weight.detach().numpy(), bias.detach().numpy()

    (w_ours, b_ours), (w_theirs, b_theirs) = run(gradgen), oracle("weights", run)
    assert not np.allclose(w_ours, weight0)
    np.testing.assert_allclose(w_ours, w_theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b_ours, b_theirs, rtol=1e-10, atol=1e-12)


def test_param_groups_match_torch() -> None:
    rng = np.random.default_rng(3)
    w0, b0 = rng.standard_normal((2, 2)), rng.standard_normal(2)

    def run(lib: Any) -> tuple[list[float], np.ndarray]:
        w = lib.tensor(w0, requires_grad=True)
        b = lib.tensor(b0, requires_grad=True)
        optimizer = lib.optim.SGD(
            [{"params": [w]}, {"params": [b], "lr": 0.5, "momentum": 0.5}], lr=0.1
        )
        rates = [g["lr"] for g in optimizer.param_groups]
        for _ in range(3):
            optimizer.zero_grad()
            ((w @ b).sin() ** 2).sum().backward()
            optimizer.step()
        return rates, np.concatenate([w.detach().numpy().ravel(), b.detach().numpy()])

    ours, theirs = run(gradgen), oracle("rates and weights", run)
    assert ours[0] == theirs[0] == [0.1, 0.5]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)


# -- the Optimizer protocol ------------------------------------------------------------


def test_updates_are_in_place_without_history() -> None:
    model = nn.Linear(3, 2)
    weight = model.weight
    for optimizer in (SGD(model.parameters(), lr=0.1), Adam(model.parameters())):
        version = weight._version
        model(gradgen.randn(4, 3)).sum().backward()
        optimizer.step()
        assert model.weight is weight
        assert weight.is_leaf and weight.grad_fn is None and weight.requires_grad
        assert weight._version > version


def test_zero_grad() -> None:
    p = leaf([1.0, 2.0])
    optimizer = SGD([p], lr=0.1)
    (p * p).sum().backward()
    grad = p.grad
    optimizer.zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.tolist() == [0.0, 0.0]
    optimizer.zero_grad()
    assert p.grad is None


def test_parameters_without_gradient_are_skipped() -> None:
    used, unused = leaf([1.0]), leaf([5.0])
    for optimizer in (SGD([used, unused], lr=0.1, momentum=0.9), Adam([used, unused])):
        (used * 2).sum().backward()
        optimizer.step()
        assert unused.item() == 5.0 and unused not in optimizer.state
        optimizer.zero_grad()


def test_closure_is_evaluated_with_grad_enabled() -> None:
    p = leaf([2.0])
    optimizer = SGD([p], lr=0.25)

    def closure() -> gradgen.Tensor:
        optimizer.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with gradgen.no_grad():
        loss = optimizer.step(closure)
    assert loss is not None and loss.item() == 4.0
    assert p.item() == pytest.approx(2.0 - 0.25 * 4.0)


def test_bad_arguments() -> None:
    p = leaf([1.0])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid momentum value: -0.5"):
        SGD([p], lr=0.1, momentum=-0.5)
    with pytest.raises(
        ValueError, match="Nesterov momentum requires a momentum and zero dampening"
    ):
        SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        Adam([p], eps=-1e-8)
    with pytest.raises(ValueError, match="Invalid weight_decay value"):
        Adam([p], weight_decay=-1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        Adam([])
    with pytest.raises(
        TypeError,
        match="should be an iterable of Tensors or dicts, but got gradgen.DoubleTensor",
    ):
        Adam(p)
    with pytest.raises(
        TypeError,
        match="optimizer can only optimize Tensors, but one of the params is list",
    ):
        Adam([[1.0]])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        Adam([p * 2])
    with pytest.raises(ValueError, match="more than one parameter group"):
        SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
