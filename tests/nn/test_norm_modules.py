"""The normalization layers (BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, GroupNorm,
LocalResponseNorm) against torch.nn: with the same weights and inputs, several
training steps give the same outputs, gradients, running statistics and
num_batches_tracked, then the same evaluation output and state_dict; the same repr
and PyTorch's messages for bad input. Recorded in tests/golden/ (see torch_oracle.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle, outcome

# name -> (lib.nn -> module, input shape)
CASES: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "BatchNorm1d-2d": (lambda nn: nn.BatchNorm1d(3), (5, 3)),
    "BatchNorm1d-3d": (lambda nn: nn.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    "BatchNorm2d-cumulative": (
        lambda nn: nn.BatchNorm2d(3, momentum=None),
        (2, 3, 3, 4),
    ),
    "BatchNorm2d-untracked": (
        lambda nn: nn.BatchNorm2d(3, track_running_stats=False),
        (2, 3, 2, 3),
    ),
    "BatchNorm2d-no-bias": (lambda nn: nn.BatchNorm2d(3, bias=False), (2, 3, 2, 2)),
    "BatchNorm3d-no-affine": (
        lambda nn: nn.BatchNorm3d(2, affine=False, eps=1e-3),
        (2, 2, 2, 3, 2),
    ),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(3), (2, 3, 5)),
    "InstanceNorm1d-unbatched": (lambda nn: nn.InstanceNorm1d(3, affine=True), (3, 5)),
    "InstanceNorm2d-tracked": (
        lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
        (2, 3, 3, 3),
    ),
    "InstanceNorm3d": (lambda nn: nn.InstanceNorm3d(2, affine=True), (2, 2, 2, 2, 3)),
    "GroupNorm": (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
    "GroupNorm-no-affine": (lambda nn: nn.GroupNorm(3, 6, affine=False), (2, 6, 2, 2)),
    "LocalResponseNorm": (lambda nn: nn.LocalResponseNorm(3, k=2.0), (2, 5, 3, 2)),
}


def _set_parameters(module: Any, lib: Any) -> None:
    """Deterministic, non-trivial weights (the same in both libraries)."""
    rng = np.random.default_rng(5)
    with lib.no_grad():
        for _, parameter in module.named_parameters():
            values = rng.uniform(0.5, 1.5, tuple(parameter.shape))
            parameter.copy_(lib.tensor(values))


def _numpy(value: Any) -> Any:
    return value.detach().numpy()


def _train(lib: Any, name: str, steps: int = 3) -> dict[str, Any]:
    """`steps` training steps (a weighted sum as loss, SGD by hand), then evaluation."""
    build, shape = CASES[name]
    module = build(lib.nn).double()
    _set_parameters(module, lib)
    rng = np.random.default_rng(21)
    record: dict[str, Any] = {"outputs": [], "grads": []}
    for _ in range(steps):
        x = lib.tensor(rng.uniform(-2, 2, shape), requires_grad=True)
        out = module(x)
        (out * lib.tensor(rng.uniform(-1, 1, shape))).sum().backward()
        record["outputs"].append(_numpy(out))
        record["grads"].append([_numpy(x.grad)])
        with lib.no_grad():
            for _, parameter in module.named_parameters():
                record["grads"][-1].append(_numpy(parameter.grad))
                parameter -= 0.1 * parameter.grad
                parameter.grad = None
    module.eval()
    record["evaluated"] = _numpy(module(lib.tensor(rng.uniform(-2, 2, shape))))
    record["state"] = {k: _numpy(v) for k, v in module.state_dict().items()}
    record["state_keys"] = list(module.state_dict())  # (a golden sorts dict keys)
    record["training"] = module.training
    return record


@pytest.mark.parametrize("name", sorted(CASES))
def test_training_steps_then_evaluation_match_torch(name: str) -> None:
    got = _train(gradgen, name)
    expected = oracle("trained", lambda torch: _train(torch, name))
    for key in ("outputs", "evaluated"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-10, atol=1e-12)
    for ours, theirs in zip(got["grads"], expected["grads"], strict=True):
        for g, w in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    assert got["state_keys"] == expected["state_keys"]
    for key, value in got["state"].items():
        assert value.dtype == expected["state"][key].dtype, key
        np.testing.assert_allclose(
            value, expected["state"][key], rtol=1e-10, atol=1e-12
        )
    assert got["training"] is False


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_torch(name: str) -> None:
    build, _ = CASES[name]
    assert repr(build(gradgen.nn)) == oracle(
        "repr", lambda torch: repr(build(torch.nn))
    )


def test_batch_norm_buffers() -> None:
    """running_mean zeros, running_var ones, num_batches_tracked a long 0 counting the
    training calls (not the evaluation ones); reset_running_stats restores them."""
    bn = gradgen.nn.BatchNorm1d(2)
    assert bn.num_batches_tracked is not None and bn.running_var is not None
    assert bn.num_batches_tracked.dtype == gradgen.int64
    assert bn.running_var.tolist() == [1.0, 1.0]
    x = gradgen.tensor([[1.0, 2.0], [3.0, 5.0]])
    bn(x)
    bn(x)
    bn.eval()
    bn(x)
    assert bn.num_batches_tracked.item() == 2
    assert bn.running_mean is not None and bn.running_mean.tolist() != [0.0, 0.0]
    bn.reset_running_stats()
    assert bn.running_mean.tolist() == [0.0, 0.0]
    assert bn.num_batches_tracked.item() == 0
    assert [n for n, _ in bn.named_buffers()] == [
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]
    untracked = gradgen.nn.BatchNorm1d(2, track_running_stats=False)
    assert untracked.running_mean is None and list(untracked.state_dict()) == [
        "weight",
        "bias",
    ]


def test_evaluation_without_running_statistics_uses_the_batch() -> None:
    """track_running_stats=False: evaluation normalizes with the batch statistics."""
    bn = gradgen.nn.BatchNorm1d(2, affine=False, track_running_stats=False).eval()
    x = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, -1.0]])
    out = bn(gradgen.tensor(x)).numpy()
    np.testing.assert_allclose(out, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5))


def test_load_state_dict_from_torch_numbers() -> None:
    """A state_dict of plain numbers (as PyTorch would save) loads, buffers included."""
    bn = gradgen.nn.BatchNorm1d(2)
    state = {
        "weight": gradgen.tensor([2.0, 3.0]),
        "bias": gradgen.tensor([0.5, -0.5]),
        "running_mean": gradgen.tensor([1.0, -1.0]),
        "running_var": gradgen.tensor([4.0, 9.0]),
        "num_batches_tracked": gradgen.tensor(7),
    }
    bn.load_state_dict(state)
    bn.eval()
    out = bn(gradgen.tensor([[3.0, 2.0]])).detach().numpy()
    expected = (np.array([3.0, 2.0]) - [1.0, -1.0]) / np.sqrt(
        np.array([4.0, 9.0]) + 1e-5
    )
    np.testing.assert_allclose(out, [expected * [2.0, 3.0] + [0.5, -0.5]], rtol=1e-6)
    assert bn.num_batches_tracked is not None
    assert bn.num_batches_tracked.item() == 7


ERROR_CASES: dict[str, Callable[[Any], Callable[[], Any]]] = {
    "BatchNorm1d-4d": lambda lib: lambda: lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 4, 5)),
    "BatchNorm2d-3d": lambda lib: lambda: lib.nn.BatchNorm2d(3)(lib.ones(2, 3, 4)),
    "BatchNorm3d-4d": lambda lib: lambda: lib.nn.BatchNorm3d(3)(lib.ones(2, 3, 4, 4)),
    "BatchNorm1d-one-value": lambda lib: lambda: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)),
    "InstanceNorm1d-4d": lambda lib: lambda: lib.nn.InstanceNorm1d(3)(
        lib.ones(2, 3, 4, 5)
    ),
    "InstanceNorm2d-2d": lambda lib: lambda: lib.nn.InstanceNorm2d(3)(lib.ones(3, 4)),
    "InstanceNorm2d-affine-channels": lambda lib: lambda: lib.nn.InstanceNorm2d(
        3, affine=True
    )(lib.ones(2, 4, 3, 3)),
    "GroupNorm-divisible": lambda lib: lambda: lib.nn.GroupNorm(3, 4),
    "GroupNorm-channels": lambda lib: lambda: lib.nn.GroupNorm(2, 4)(lib.ones(2, 6, 3)),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch(name: str) -> None:
    make = ERROR_CASES[name]
    expected = oracle("error", lambda torch: outcome(make(torch)))
    assert isinstance(expected, Exception), f"torch raised nothing: {expected!r}"
    with pytest.raises(type(expected)) as got:
        make(gradgen)()
    assert str(got.value) == str(expected).replace("torch.Size", "gradgen.Size")


def test_instance_norm_warns_when_channels_differ_without_affine() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradgen.nn.InstanceNorm1d(3)(gradgen.ones(2, 4, 5))
    assert any("does not match num_features" in str(w.message) for w in caught)
