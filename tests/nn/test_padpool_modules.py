"""The padding layers (ConstantPad*, ZeroPad*, ReflectionPad*, ReplicationPad*,
CircularPad*), RMSNorm and the pooling layers of the padpool slice against torch.nn:
the same weights and input give the same output, input gradient, parameter gradients
and repr. Recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle, outcome

# name -> (lib.nn -> module, input shape)
CASES: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d((2, 1), 3.5), (2, 3, 4)),
    "ConstantPad2d": (lambda nn: nn.ConstantPad2d(1, -1.0), (3, 3, 4)),
    "ConstantPad3d": (
        lambda nn: nn.ConstantPad3d((1, 0, 2, 1, 0, 1), 2.0),
        (1, 2, 2, 3, 2),
    ),
    "ZeroPad1d": (lambda nn: nn.ZeroPad1d((0, 2)), (2, 3)),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d((1, 2, -1, 1)), (1, 2, 3, 3)),
    "ZeroPad3d": (lambda nn: nn.ZeroPad3d(1), (1, 1, 2, 2, 2)),
    "ReflectionPad1d": (lambda nn: nn.ReflectionPad1d((3, 1)), (2, 3, 4)),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d(2), (1, 2, 3, 4)),
    "ReflectionPad3d": (
        lambda nn: nn.ReflectionPad3d((1, 0, 2, 1, 1, 1)),
        (2, 3, 3, 4),
    ),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d((4, 1)), (3, 2)),
    "ReplicationPad2d": (lambda nn: nn.ReplicationPad2d((1, 2, 3, 0)), (1, 2, 3, 3)),
    "ReplicationPad3d": (lambda nn: nn.ReplicationPad3d(1), (1, 1, 2, 3, 2)),
    "CircularPad1d": (lambda nn: nn.CircularPad1d((2, 1)), (2, 3, 4)),
    "CircularPad2d": (lambda nn: nn.CircularPad2d((1, 1, 2, 0)), (1, 2, 3, 3)),
    "CircularPad3d": (lambda nn: nn.CircularPad3d(1), (1, 1, 2, 3, 2)),
    "RMSNorm": (lambda nn: nn.RMSNorm([3, 4]), (2, 3, 4)),
    "RMSNorm-eps": (lambda nn: nn.RMSNorm(4, eps=1e-2), (3, 4)),
    "RMSNorm-no-affine": (lambda nn: nn.RMSNorm(4, elementwise_affine=False), (2, 4)),
}


def _run(lib: Any, name: str) -> dict[str, Any]:
    build, shape = CASES[name]
    module = build(lib.nn).double()
    rng = np.random.default_rng(3)
    with lib.no_grad():
        for parameter in module.parameters():
            parameter.copy_(lib.tensor(rng.uniform(0.5, 1.5, tuple(parameter.shape))))
    x = lib.tensor(rng.uniform(-2, 2, shape), requires_grad=True)
    out = module(x)
    (out * lib.tensor(rng.uniform(-1, 1, tuple(out.shape)))).sum().backward()
    return {
        "repr": repr(module),
        "out": out.detach().numpy(),
        "grads": [x.grad.numpy()] + [p.grad.numpy() for p in module.parameters()],
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_torch(name: str) -> None:
    expected = oracle("layer", lambda torch: _run(torch, name))
    got = _run(gradgen, name)
    assert got["repr"] == expected["repr"]
    np.testing.assert_allclose(got["out"], expected["out"], rtol=1e-12, atol=1e-12)
    assert len(got["grads"]) == len(expected["grads"])
    for mine, theirs in zip(got["grads"], expected["grads"]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_rms_norm_default_eps_is_the_dtype_epsilon() -> None:
    x = gradgen.tensor([[1e-4, -1e-4]], dtype=gradgen.float32)
    expected = 1e-4 / np.sqrt(1e-8 + np.finfo(np.float32).eps)
    got = gradgen.nn.functional.rms_norm(x, (2,))
    np.testing.assert_allclose(got.numpy(), [[expected, -expected]], rtol=1e-5)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "circular-dims": lambda lib: lib.nn.CircularPad2d(1)(lib.zeros(3, 3)),
    "rms-shape": lambda lib: lib.rms_norm(lib.zeros(2, 3, 4), (5,)),
    "rms-empty": lambda lib: lib.rms_norm(lib.zeros(2, 3), ()),
    "rms-weight": lambda lib: lib.rms_norm(lib.zeros(2, 4), (4,), lib.ones(3)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case: str) -> None:
    expected = oracle("error", lambda torch: outcome(lambda: ERRORS[case](torch)))
    assert isinstance(expected, Exception)
    with pytest.raises(type(expected)) as got:
        ERRORS[case](gradgen)
    assert str(got.value) == str(expected)
