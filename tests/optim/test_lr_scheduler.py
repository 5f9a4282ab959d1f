"""gradgen.optim.lr_scheduler against torch.optim.lr_scheduler: the rates (and cycled
momenta) of two param groups over 30 steps equal to 1e-12, state dicts with PyTorch's
keys, resuming from a state dict, the closed forms of step(epoch), warnings and
errors (recorded in tests/golden/optim/, see torch_oracle.py)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.optim import lr_scheduler
from torch_oracle import oracle, outcome

STEPS = 30
# Name -> the scheduler over an optimizer (lr_scheduler module S, optimizer o).
SCHEDULERS: dict[str, Callable[[Any, Any], Any]] = {
    "StepLR": lambda S, o: S.StepLR(o, 4, gamma=0.3),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [3, 7, 7, 12], gamma=0.5),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.93),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001
    ),
    "LambdaLR": lambda S, o: S.LambdaLR(o, [lambda e: 0.9**e, lambda e: 1 / (1 + e)]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "LinearLR": lambda S, o: S.LinearLR(o, 0.2, 0.9, total_iters=10),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.4, total_iters=6),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=12, power=2.0),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=31),
    "OneCycleLR-three-phase": lambda S, o: S.OneCycleLR(
        o, 1.0, epochs=3, steps_per_epoch=11, three_phase=True, anneal_strategy="linear"
    ),
    "CyclicLR": lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=4, step_size_down=3, mode="triangular2"
    ),
    "CyclicLR-exp-range": lambda S, o: S.CyclicLR(
        o, [0.01, 0.02], 0.1, step_size_up=5, mode="exp_range", gamma=0.97
    ),
    "CyclicLR-scale-fn": lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, 3, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"
    ),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o,
        [S.LinearLR(o, 0.1, total_iters=5), S.ExponentialLR(o, 0.9), S.StepLR(o, 3)],
        milestones=[5, 12],
    ),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, 0.5, total_iters=4), S.ExponentialLR(o, 0.9), S.StepLR(o, 3)]
    ),
    "ReduceLROnPlateau": lambda S, o: S.ReduceLROnPlateau(
        o, patience=2, factor=0.5, cooldown=1, min_lr=[0.0, 0.1]
    ),
    "ReduceLROnPlateau-max-abs": lambda S, o: S.ReduceLROnPlateau(
        o, mode="max", threshold=0.5, threshold_mode="abs", patience=1
    ),
}
METRICS = [5.0, 4.0, 4.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.1, 3.2] * 3


def optimizer_for(lib: Any, name: str) -> Any:
    """Two groups; SGD with momentum for the schedulers that cycle momentum, Adam
    (whose beta1 they cycle) for the rest."""
    p = lib.tensor([1.0], requires_grad=True)
    q = lib.tensor([2.0], requires_grad=True)
    groups = [{"params": [p]}, {"params": [q], "lr": 0.5}]
    if name.startswith("Cyclic"):
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


def momenta(optimizer: Any) -> list[float]:
    return [
        group["momentum"] if "momentum" in group else group["betas"][0]
        for group in optimizer.param_groups
    ]


def schedule(lib: Any, name: str) -> Any:
    optimizer = optimizer_for(lib, name)
    return optimizer, SCHEDULERS[name](lib.optim.lr_scheduler, optimizer)


def advance(optimizer: Any, scheduler: Any, step: int, name: str) -> None:
    optimizer.step()
    if name.startswith("ReduceLROnPlateau"):
        scheduler.step(METRICS[step])
    else:
        scheduler.step()


def sequence(lib: Any, name: str) -> np.ndarray:
    """Per step: the rates get_last_lr gives, then the groups' momenta."""
    optimizer, scheduler = schedule(lib, name)
    rows = [list(scheduler.get_last_lr()) + momenta(optimizer)]
    for step in range(STEPS):
        advance(optimizer, scheduler, step, name)
        rows.append(list(scheduler.get_last_lr()) + momenta(optimizer))
    return np.array(rows, dtype=np.float64)


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_rates_match_torch(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "optimizer.step() before" warning
        ours = sequence(gradgen, name)
        theirs = oracle("rates", lambda torch: sequence(torch, name))
    assert len(np.unique(ours[:, 0])) > 1  # the rate changed
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def state_keys(lib: Any, name: str) -> list[str]:
    optimizer, scheduler = schedule(lib, name)
    for step in range(3):
        advance(optimizer, scheduler, step, name)
    return sorted(scheduler.state_dict())


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_state_dict_keys_match_torch(name: str) -> None:
    ours = state_keys(gradgen, name)
    assert ours == oracle("keys", lambda torch: state_keys(torch, name))


def first_steps(lib: Any) -> list[float]:
    """The steps PyTorch's state dict tests take: a scheduler saved mid-way."""
    optimizer, scheduler = schedule(lib, "StepLR")
    for step in range(5):
        advance(optimizer, scheduler, step, "StepLR")
    state = scheduler.state_dict()
    counters = [state["last_epoch"], state["_step_count"]]
    return counters + state["base_lrs"] + state["_last_lr"]


def test_state_dict_values_match_torch() -> None:
    assert first_steps(gradgen) == oracle("values", first_steps)


@pytest.mark.parametrize(
    "name",
    ["StepLR", "CosineAnnealingLR", "OneCycleLR", "CyclicLR", "SequentialLR"]
    + ["ChainedScheduler", "ReduceLROnPlateau", "LambdaLR"],
)
def test_resuming_from_a_state_dict_continues_the_sequence(name: str) -> None:
    full = sequence(gradgen, name)
    optimizer, scheduler = schedule(gradgen, name)
    for step in range(10):
        advance(optimizer, scheduler, step, name)
    saved_optimizer, saved = optimizer.state_dict(), scheduler.state_dict()
    optimizer, scheduler = schedule(gradgen, name)
    optimizer.load_state_dict(saved_optimizer)
    scheduler.load_state_dict(saved)
    assert scheduler.get_last_lr() == list(full[10, :2])
    for step in range(10, STEPS):
        advance(optimizer, scheduler, step, name)
        np.testing.assert_array_equal(scheduler.get_last_lr(), full[step + 1, :2])


CLOSED_FORM = ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"]
CLOSED_FORM += ["LinearLR", "ConstantLR", "PolynomialLR", "CosineAnnealingWarmRestarts"]


def jumps(lib: Any, name: str) -> list[list[float]]:
    """step(epoch) (deprecated): the closed form at epochs out of order."""
    optimizer, scheduler = schedule(lib, name)
    rates = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in [3, 11, 2, 7, 20, 5.5 if "Warm" in name else 5]:
            optimizer.step()
            scheduler.step(epoch)
            rates.append(list(scheduler.get_last_lr()))
    return rates


@pytest.mark.parametrize("name", CLOSED_FORM)
def test_step_with_an_epoch_uses_the_closed_form(name: str) -> None:
    ours = jumps(gradgen, name)
    np.testing.assert_allclose(
        ours, oracle("rates", lambda torch: jumps(torch, name)), rtol=0, atol=1e-12
    )


# -- warnings and errors ---------------------------------------------------------------


def test_warnings_as_pytorch() -> None:
    p = gradgen.tensor([1.0], requires_grad=True)
    optimizer = gradgen.optim.SGD([p], lr=0.1)
    scheduler = lr_scheduler.StepLR(optimizer, 2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)`"):
        scheduler.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        scheduler.get_lr()
    with pytest.warns(
        UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"
    ):
        scheduler.step(4)
    optimizer = gradgen.optim.SGD([p], lr=0.1)
    scheduler = lr_scheduler.ExponentialLR(optimizer, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimizer.step()  # in the right order: no warning
        scheduler.step()
    assert scheduler.get_last_lr() == [0.05] and scheduler.last_epoch == 1


def construction_errors(lib: Any) -> list[Any]:
    S = lib.optim.lr_scheduler
    p = lib.tensor([1.0], requires_grad=True)
    o = lib.optim.SGD([p], lr=0.1)
    plain = lib.optim.Adagrad([p])
    attempts: list[Callable[[], Any]] = [
        lambda: S.StepLR("not an optimizer", 3),
        lambda: S.StepLR(lib.optim.SGD([p], lr=0.1), 3, last_epoch=4),
        lambda: S.ConstantLR(o, factor=1.5),
        lambda: S.LinearLR(o, start_factor=0),
        lambda: S.LinearLR(o, end_factor=2),
        lambda: S.LambdaLR(o, [lambda e: 1.0, lambda e: 2.0]),
        lambda: S.MultiplicativeLR(o, [3]),
        lambda: S.CosineAnnealingWarmRestarts(o, T_0=0),
        lambda: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
        lambda: S.CyclicLR(o, 0.1, 1.0, mode="sawtooth"),
        lambda: S.CyclicLR(plain, 0.1, 1.0),
        lambda: S.CyclicLR(o, [0.1, 0.2], 1.0),
        lambda: S.OneCycleLR(o, 1.0),
        lambda: S.OneCycleLR(o, 1.0, total_steps=0),
        lambda: S.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=-1),
        lambda: S.OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5),
        lambda: S.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="step"),
        lambda: S.ReduceLROnPlateau(o, factor=1.0),
        lambda: S.ReduceLROnPlateau(o, mode="middle"),
        lambda: S.ReduceLROnPlateau(o, threshold_mode="log"),
        lambda: S.ReduceLROnPlateau(o, min_lr=[0.1, 0.2]),
        lambda: S.SequentialLR(o, [], milestones=[]),
        lambda: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]),
        lambda: S.SequentialLR(o, [S.ReduceLROnPlateau(o)], milestones=[]),
        lambda: S.ChainedScheduler([]),
    ]
    return [outcome(attempt) for attempt in attempts]


def test_construction_errors_match_torch() -> None:
    ours = construction_errors(gradgen)
    theirs = oracle("errors", construction_errors)
    for index, (mine, torchs) in enumerate(zip(ours, theirs)):
        assert isinstance(torchs, Exception), index
        assert type(mine).__name__ == type(torchs).__name__, (index, mine, torchs)
        # (a recorded KeyError holds str() of PyTorch's, which quotes the message)
        expected = torchs.args[0] if isinstance(torchs, KeyError) else str(torchs)
        assert str(mine) == expected, index


def test_one_cycle_past_its_end_and_mismatched_optimizers() -> None:
    p = gradgen.tensor([1.0], requires_grad=True)
    optimizer = gradgen.optim.SGD([p], lr=0.1, momentum=0.9)
    scheduler = lr_scheduler.OneCycleLR(optimizer, 1.0, total_steps=2)
    optimizer.step()
    scheduler.step()
    scheduler.step()
    with pytest.raises(
        ValueError,
        match="Tried to step 3 times. The specified number of total steps is 2",
    ):
        scheduler.step()
    other = gradgen.optim.SGD([gradgen.tensor([1.0], requires_grad=True)], lr=0.1)
    with pytest.raises(
        ValueError, match="expects all schedulers to belong to the same"
    ):
        lr_scheduler.ChainedScheduler(
            [lr_scheduler.StepLR(optimizer, 2), lr_scheduler.StepLR(other, 2)]
        )


def test_a_tensor_lr_is_filled_in_place() -> None:
    p = gradgen.tensor([1.0], requires_grad=True)
    lr = gradgen.tensor(0.5)
    optimizer = gradgen.optim.SGD([p], lr=lr)
    scheduler = lr_scheduler.ExponentialLR(optimizer, 0.5)
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] is lr and lr.item() == 0.25
    assert float(scheduler.get_last_lr()[0]) == 0.25


def test_a_custom_scheduler_on_the_old_base_name() -> None:
    class Halving(lr_scheduler._LRScheduler):
        def get_lr(self) -> list[float]:
            return [base / 2**self.last_epoch for base in self.base_lrs]

    p = gradgen.tensor([1.0], requires_grad=True)
    optimizer = gradgen.optim.SGD([p], lr=0.8)
    scheduler = Halving(optimizer)
    for _ in range(3):
        optimizer.step()
        scheduler.step()
    assert scheduler.get_last_lr() == [0.1] and optimizer.param_groups[0]["lr"] == 0.1
    assert isinstance(scheduler, lr_scheduler.LRScheduler)
