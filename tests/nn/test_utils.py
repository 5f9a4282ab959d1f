"""gradgen.nn.utils against torch.nn.utils: clip_grad_norm_ (every norm type,
error_if_nonfinite), clip_grad_value_, parameters_to_vector / vector_to_parameters;
recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

GRADS = [
    np.array([[3.0, -4.0], [1.0, 0.5]], dtype=np.float32),
    np.array([-2.0, 6.0, 0.25], dtype=np.float32),
]


def _parameters(lib: Any, grads: list[np.ndarray]) -> list[Any]:
    params = []
    for grad in grads:
        param = lib.nn.Parameter(lib.zeros(*grad.shape))
        param.grad = lib.tensor(grad)
        params.append(param)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, math.inf, 0.5])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_matches_torch(norm_type: float, max_norm: float) -> None:
    def run(lib: Any) -> Any:
        params = _parameters(lib, GRADS)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        return total.item(), [p.grad.numpy() for p in params]

    ours, theirs = run(gradgen), oracle("clipped", run)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-6)
    for mine, expected in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(mine, expected, rtol=1e-6)


def test_clip_grad_norm_by_hand() -> None:
    params = _parameters(gradgen, GRADS)
    total = gradgen.nn.utils.clip_grad_norm_(params, 2.0, foreach=True)
    norm = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in GRADS))
    assert total.item() == pytest.approx(norm, rel=1e-6)
    scale = 2.0 / (norm + 1e-6)
    np.testing.assert_allclose(params[1].grad.numpy(), GRADS[1] * scale, rtol=1e-6)
    single = _parameters(gradgen, GRADS[:1])[0]
    assert gradgen.nn.utils.clip_grad_norm_(single, 10.0).item() == pytest.approx(
        math.sqrt(9 + 16 + 1 + 0.25)
    )
    assert (
        gradgen.nn.utils.clip_grad_norm_(
            [gradgen.nn.Parameter(gradgen.ones(2))], 1.0
        ).item()
        == 0.0
    )


def test_clip_grad_norm_non_finite_matches_torch() -> None:
    def run(lib: Any) -> Any:
        grads = [GRADS[0], np.array([np.inf, 1.0], dtype=np.float32)]
        params = _parameters(lib, grads)
        try:
            lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
            message = None
        except RuntimeError as error:
            message = str(error)
        total = lib.nn.utils.clip_grad_norm_(params, 1.0, norm_type="inf")
        return message, total.item(), [p.grad.numpy() for p in params]

    ours, theirs = run(gradgen), oracle("non-finite", run)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    for mine, expected in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(mine, expected)


def test_clip_grad_value_matches_torch() -> None:
    def run(lib: Any) -> Any:
        params = _parameters(lib, GRADS)
        result = lib.nn.utils.clip_grad_value_(params, 1.5)
        return result, [p.grad.numpy() for p in params]

    ours, theirs = run(gradgen), oracle("clamped", run)
    assert ours[0] is None and theirs[0] is None
    for mine, expected in zip(ours[1], theirs[1]):
        np.testing.assert_array_equal(mine, expected)


def test_parameters_to_vector_and_back_match_torch() -> None:
    def run(lib: Any) -> Any:
        net = lib.nn.Linear(3, 2)
        with lib.no_grad():
            net.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
            net.bias.copy_(lib.tensor([7.0, 8.0]))
        vector = lib.nn.utils.parameters_to_vector(net.parameters())
        (vector * lib.arange(8.0)).sum().backward()
        lib.nn.utils.vector_to_parameters(lib.arange(8.0) * 10, net.parameters())
        try:
            lib.nn.utils.vector_to_parameters([1.0], net.parameters())
            message = None
        except TypeError as error:
            message = str(error)
        return [
            vector.tolist(),
            vector.requires_grad,
            net.weight.grad.tolist(),
            net.bias.grad.tolist(),
            net.weight.tolist(),
            net.bias.tolist(),
            net.weight.requires_grad,
            message,
        ]

    assert run(gradgen) == oracle("vector", run)
