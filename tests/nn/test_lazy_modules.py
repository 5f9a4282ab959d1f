"""The lazy modules (LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d,
LazyInstanceNorm*d) with UninitializedParameter / UninitializedBuffer, against
PyTorch: reprs and state_dict before and after the first call, the shapes inferred,
the class they become, values and gradients once their parameters are set to the same
numbers, load_state_dict into a lazy module, and PyTorch's errors. PyTorch's answers
are recorded in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle, outcome

# name -> (builder from the library's nn, input shape)
LAZY: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "LazyLinear": (lambda nn: nn.LazyLinear(3), (2, 4, 5)),
    "LazyLinear no bias": (lambda nn: nn.LazyLinear(2, bias=False), (3, 4)),
    "LazyConv1d": (lambda nn: nn.LazyConv1d(4, 3, padding=1), (2, 3, 6)),
    "LazyConv1d unbatched": (lambda nn: nn.LazyConv1d(2, 2), (3, 5)),
    "LazyConv2d": (lambda nn: nn.LazyConv2d(4, 3, groups=2, bias=False), (2, 6, 5, 5)),
    "LazyConv3d": (lambda nn: nn.LazyConv3d(2, 2, stride=2), (1, 2, 4, 4, 4)),
    "LazyConvTranspose1d": (lambda nn: nn.LazyConvTranspose1d(4, 3), (2, 3, 5)),
    "LazyConvTranspose2d": (
        lambda nn: nn.LazyConvTranspose2d(2, 3, stride=2, groups=2),
        (1, 4, 3, 3),
    ),
    "LazyConvTranspose3d": (lambda nn: nn.LazyConvTranspose3d(2, 2), (2, 3, 3, 3)),
    "LazyBatchNorm1d": (lambda nn: nn.LazyBatchNorm1d(), (5, 3)),
    "LazyBatchNorm2d": (lambda nn: nn.LazyBatchNorm2d(momentum=None), (2, 3, 4, 4)),
    "LazyBatchNorm3d": (lambda nn: nn.LazyBatchNorm3d(affine=False), (2, 2, 3, 3, 3)),
    "LazyInstanceNorm1d": (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 6)),
    "LazyInstanceNorm2d": (
        lambda nn: nn.LazyInstanceNorm2d(track_running_stats=False),
        (2, 3, 4, 4),
    ),
    "LazyInstanceNorm3d": (
        lambda nn: nn.LazyInstanceNorm3d(bias=False),
        (1, 2, 3, 3, 3),
    ),
}


def _numbers(shape: tuple[int, ...], salt: int) -> np.ndarray:
    """Fixed numbers of `shape` (the same for both libraries)."""
    size = int(np.prod(shape))
    return np.cos(np.arange(size) * 0.7 + salt).reshape(shape) * 0.5


def _state_text(module: Any) -> list[tuple[str, str]]:
    """state_dict's keys with the repr of each uninitialized value (else 'tensor')."""
    return [
        (key, repr(v) if type(v).__name__.startswith("Uninit") else "tensor")
        for key, v in module.state_dict().items()
    ]


def _lifecycle(lib: Any, name: str) -> dict[str, Any]:
    """Before and after the first call; then values and gradients with the
    parameters set to fixed numbers."""
    build, shape = LAZY[name]
    module = build(lib.nn)
    before = {"repr": repr(module), "state": _state_text(module)}
    module(lib.tensor(_numbers(shape, 1), dtype=lib.float32))  # the dry run
    params = dict(module.named_parameters())
    with lib.no_grad():
        for salt, (key, param) in enumerate(params.items()):
            param.copy_(lib.tensor(_numbers(tuple(param.shape), salt + 2)))
    module.double()
    x = lib.tensor(_numbers(shape, 9), requires_grad=True)
    out = module(x)
    upstream = lib.tensor(_numbers(tuple(out.shape), 5))
    (out * upstream).sum().backward()
    return {
        "before": before,
        "class": type(module).__name__,
        "repr": repr(module),
        "state": _state_text(module),
        "shapes": {k: list(v.shape) for k, v in module.state_dict().items()},
        "out": out.detach().numpy(),
        "grad input": x.grad.numpy(),
        "grads": {k: p.grad.numpy() for k, p in params.items()},
        "buffers": {k: b.numpy() for k, b in module.named_buffers()},
    }


@pytest.mark.parametrize("name", list(LAZY))
def test_lazy_module_initialises_from_its_first_input_as_pytorch(name: str) -> None:
    theirs = oracle("lifecycle", lambda torch: _lifecycle(torch, name))
    ours = _lifecycle(gradgen, name)
    for key in ("before", "class", "repr", "state", "shapes"):
        assert ours[key] == theirs[key], key
    for key in ("out", "grad input"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)
    for group in ("grads", "buffers"):
        assert ours[group].keys() == theirs[group].keys()
        for key in ours[group]:
            np.testing.assert_allclose(
                ours[group][key], theirs[group][key], rtol=1e-5, atol=1e-5
            )


def test_the_forward_pre_hook_goes_after_the_first_call() -> None:
    module = gradgen.nn.LazyLinear(2)
    assert len(module._forward_pre_hooks) == 1
    module(gradgen.ones(1, 3))
    assert type(module) is gradgen.nn.Linear
    assert len(module._forward_pre_hooks) == 0
    assert not hasattr(module, "_initialize_hook")
    assert type(module.weight) is gradgen.nn.Parameter
    assert module.weight.requires_grad


def _errors(lib: Any) -> dict[str, Any]:
    nn = lib.nn

    def shape() -> Any:
        return nn.LazyLinear(2).weight.shape

    def share() -> Any:
        return nn.UninitializedParameter().share_memory_()

    def groups() -> Any:
        return nn.LazyConv1d(4, 3, groups=2)(lib.ones(1, 3, 5))

    def rank() -> Any:
        return nn.LazyConv2d(4, 3)(lib.ones(5, 5))

    def uninitialized_into_initialized() -> Any:
        return nn.Linear(3, 2).load_state_dict(nn.LazyLinear(2).state_dict())

    class NoInit(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def forward(self, x: Any) -> Any:
            return x

    class HalfInit(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.UninitializedParameter()

        def initialize_parameters(self, x: Any) -> None:
            pass

        def forward(self, x: Any) -> Any:
            return x

    def loaded_then_wrong_input() -> Any:
        lazy = nn.LazyLinear(2)
        lazy.load_state_dict(nn.Linear(3, 2).state_dict())
        return lazy(lib.ones(1, 4))

    def batchnorm_rank() -> Any:
        return nn.LazyBatchNorm2d()(lib.ones(2, 3))

    return {
        name: outcome(call)
        for name, call in {
            "shape": shape,
            "share_memory_": share,
            "groups": groups,
            "rank": rank,
            "uninitialized into initialized": uninitialized_into_initialized,
            "loaded weight, other input": loaded_then_wrong_input,
            "no initialize_parameters": lambda: NoInit()(lib.ones(2)),
            "not fully initialized": lambda: HalfInit()(lib.ones(2)),
            "batchnorm rank": batchnorm_rank,
            # PyTorch takes num_features from dimension 1, unbatched input too
            "unbatched instance norm": lambda: nn.LazyInstanceNorm1d()(lib.ones(2, 5)),
        }.items()
    }


def test_errors_before_initialisation_are_pytorchs() -> None:
    theirs = oracle("errors", _errors)
    ours = _errors(gradgen)
    assert ours.keys() == theirs.keys()
    for key, expected in theirs.items():
        got = ours[key]
        assert isinstance(expected, Exception), key
        assert type(got).__name__ == type(expected).__name__, (key, got)
        assert str(got) == str(expected).replace("torch.Size", "gradgen.Size"), key


def _load_into_lazy(lib: Any) -> dict[str, Any]:
    """A lazy module loads an initialized state (its class stays lazy until the
    first call), and a lazy state into a lazy module leaves it uninitialized."""
    nn = lib.nn
    full = nn.Linear(3, 2)
    with lib.no_grad():
        full.weight.copy_(lib.tensor(_numbers((2, 3), 1), dtype=lib.float32))
        full.bias.copy_(lib.tensor(_numbers((2,), 2), dtype=lib.float32))
    lazy = nn.LazyLinear(2)
    result = lazy.load_state_dict(full.state_dict())
    loaded = {
        "keys": [list(result.missing_keys), list(result.unexpected_keys)],
        "class": type(lazy).__name__,
        "weight": lazy.weight.detach().numpy(),
        "out": lazy(lib.tensor(_numbers((4, 3), 3), dtype=lib.float32))
        .detach()
        .numpy(),
        "class after": type(lazy).__name__,
        "repr after": repr(lazy),
    }
    still = nn.LazyLinear(2)
    still.load_state_dict(nn.LazyLinear(2).state_dict())
    loaded["lazy into lazy"] = _state_text(still)
    return loaded


def test_load_state_dict_materializes_a_lazy_module() -> None:
    theirs = oracle("load", _load_into_lazy)
    ours = _load_into_lazy(gradgen)
    for key in ("keys", "class", "class after", "repr after", "lazy into lazy"):
        assert ours[key] == theirs[key], key
    np.testing.assert_allclose(ours["weight"], theirs["weight"], rtol=1e-6)
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=1e-5, atol=1e-6)


def _conversions(lib: Any) -> dict[str, Any]:
    """dtype conversions before the first call carry over to the materialized
    entries; a deep copy of a lazy module is lazy."""
    module = lib.nn.LazyBatchNorm1d().double()
    # (PyTorch's UninitializedBuffer cannot be deep-copied: a LazyLinear is.)
    copied = copy.deepcopy(lib.nn.LazyLinear(2))
    before = [str(module.weight.dtype), str(module.running_mean.dtype)]
    module(lib.ones(3, 2, dtype=lib.float64))
    return {
        "before": [d.replace("torch.", "") for d in before],
        "after": [
            str(module.weight.dtype).replace("torch.", ""),
            str(module.running_mean.dtype).replace("torch.", ""),
        ],
        "copy": [type(copied).__name__, _state_text(copied)],
        "size": list(lib.nn.UninitializedParameter().size()),
        "buffer": [
            repr(lib.nn.UninitializedBuffer()),
            lib.nn.UninitializedBuffer().requires_grad,
        ],
    }


def test_conversions_and_copies_before_initialisation() -> None:
    theirs = oracle("conversions", _conversions)
    ours = _conversions(gradgen)
    ours["before"] = [d.replace("gradgen.", "") for d in ours["before"]]
    ours["after"] = [d.replace("gradgen.", "") for d in ours["after"]]
    assert ours == theirs


def _softmax2d(lib: Any, shape: tuple[int, ...]) -> Any:
    x = lib.tensor(_numbers(shape, 4), requires_grad=True)
    out = lib.nn.Softmax2d()(x)
    (out * lib.tensor(_numbers(shape, 6))).sum().backward()
    return {
        "out": out.detach().numpy(),
        "grad": x.grad.numpy(),
        "repr": repr(lib.nn.Softmax2d()),
    }


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 2, 2), (3, 4), (1, 2, 3, 4, 5)])
def test_softmax2d_as_pytorch(shape: tuple[int, ...]) -> None:
    theirs = oracle(
        "softmax2d", lambda torch: outcome(lambda: _softmax2d(torch, shape))
    )
    ours = outcome(lambda: _softmax2d(gradgen, shape))
    if isinstance(theirs, Exception):
        assert (type(ours), str(ours)) == (type(theirs), str(theirs))
        return
    assert ours["repr"] == theirs["repr"]
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=1e-12)
    np.testing.assert_allclose(ours["grad"], theirs["grad"], rtol=1e-10, atol=1e-14)


def test_nllloss2d_is_nllloss_under_its_old_name() -> None:
    def run(lib: Any) -> Any:
        with pytest.warns(FutureWarning) as record:
            loss = lib.nn.NLLLoss2d(ignore_index=1, reduction="sum")
        x = lib.tensor(_numbers((2, 3, 2, 2), 1), requires_grad=True)
        target = lib.tensor(np.array([[[0, 1], [2, 2]], [[1, 0], [0, 2]]]))
        value = loss(x.log_softmax(1), target)
        value.backward()
        return {
            "value": value.detach().numpy(),
            "grad": x.grad.numpy(),
            "nll": isinstance(loss, lib.nn.NLLLoss),
            "repr": repr(loss),
            "warning": str(record[0].message),
        }

    theirs = oracle("nllloss2d", run)
    ours = run(gradgen)
    for key in ("nll", "repr", "warning"):
        assert ours[key] == theirs[key], key
    np.testing.assert_allclose(ours["value"], theirs["value"], rtol=1e-12)
    np.testing.assert_allclose(ours["grad"], theirs["grad"], rtol=1e-10, atol=1e-14)


def test_container_warns_and_holds_its_keyword_modules() -> None:
    def run(lib: Any) -> Any:
        with pytest.warns(FutureWarning) as record:
            container = lib.nn.Container(first=lib.nn.ReLU(), second=lib.nn.Tanh())
        return {
            "warning": str(record[0].message),
            "children": [n for n, _ in container.named_children()],
            "repr": repr(container),
        }

    assert run(gradgen) == oracle("container", run)
