"""What the func tests share: PyTorch's answers as plain data, compared with ours."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import gradgen.nn.functional as F
from gradgen.composites._common import BATCHED

X = np.array([0.3, -0.7, 1.1])
Y = np.array([[0.5, 2.0, -1.0], [1.0, 0.2, 0.3]])
BATCH = np.linspace(-1.5, 2.0, 24).reshape(4, 3, 2)
# The composites' batched slots (linear, cross_entropy_loss, relu, ...).
BATCHED_SLOTS = tuple(type(BATCHED).__annotations__)


def plain(value: Any) -> Any:
    """Tensors as (numpy array, requires_grad); containers and errors kept."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return tuple(plain(item) for item in value)
    if hasattr(value, "detach"):
        return (np.asarray(value.detach().numpy()), bool(value.requires_grad))
    return value


def errors(calls: dict[str, Any]) -> dict[str, Exception | None]:
    """Each call's exception (None when it returns), for message comparisons."""
    found: dict[str, Exception | None] = {}
    for name, call in calls.items():
        try:
            call()
            found[name] = None
        except Exception as error:  # noqa: BLE001 - the error is the answer
            found[name] = error
    return found


def assert_same(ours: Any, theirs: Any, where: str = "") -> None:
    """Equal structure, arrays close, flags and messages equal (torch.Size spelled as
    gradgen's)."""
    if isinstance(theirs, BaseException):
        assert isinstance(
            ours, BaseException
        ), f"{where}: no error, torch raises {theirs!r}"
        assert type(ours).__name__ == type(theirs).__name__, where
        # torch.Size -> gradgen.Size, but not in pytorch.org's links nor "functorch.".
        assert str(ours) == re.sub(r"(?<![a-z])torch\.", "gradgen.", str(theirs)), where
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), where
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}.{key}")
        return
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{where}: {ours!r}"
        assert len(ours) == len(theirs), where
        for index, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{index}]")
        return
    if isinstance(theirs, np.ndarray):
        ours = np.asarray(ours)
        assert ours.shape == theirs.shape, f"{where}: {ours.shape} != {theirs.shape}"
        assert np.allclose(
            ours, theirs, rtol=1e-5, atol=1e-6
        ), f"{where}: {ours} != {theirs}"
        return
    assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


@contextmanager
def general_path() -> Iterator[None]:
    """The composites without their batched slots (every slot _BatchedComposites
    declares, so a new one is switched off too): every operator by its own rule."""
    saved = {name: getattr(BATCHED, name) for name in BATCHED_SLOTS}
    for name in BATCHED_SLOTS:
        setattr(BATCHED, name, None)
    try:
        yield
    finally:
        for name, slot in saved.items():
            setattr(BATCHED, name, slot)


def mlp(params: Any, x: Any, t: Any) -> Any:
    """A two-layer MLP's cross-entropy loss on one example (a row of x, t's class
    probabilities), the function the per-example tests take grad of."""
    w1, b1, w2, b2 = params
    hidden = F.relu(F.linear(x.unsqueeze(0), w1, b1))
    return F.cross_entropy(F.linear(hidden, w2, b2), t.unsqueeze(0))


def mlp_arrays(
    dtype: str, seed: int, sizes: tuple[int, int, int], batch: int
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Random parameters (inputs, hidden, classes = sizes), a batch of inputs and
    one-hot targets for `mlp`, in `dtype`."""
    inputs, hidden, classes = sizes
    rng = np.random.default_rng(seed)
    params = [
        rng.standard_normal((hidden, inputs)),
        rng.standard_normal(hidden),
        rng.standard_normal((classes, hidden)),
        rng.standard_normal(classes),
    ]
    x = rng.standard_normal((batch, inputs))
    target = np.eye(classes)[rng.integers(0, classes, batch)]
    return [p.astype(dtype) for p in params], x.astype(dtype), target.astype(dtype)
