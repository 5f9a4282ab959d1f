"""functional_call and stack_module_state against torch.func: a module run with other
parameters and buffers (dicts, tuples of dicts, tied weights, strict), ensembles by
vmap over stacked states, per-example gradients of a module's loss, and the errors
(recorded in tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradgen
from torch_oracle import oracle

from .common import assert_same, errors, plain

DATA = np.linspace(-1.0, 1.0, 24).reshape(4, 6)


def _models(lib: Any, count: int) -> list[Any]:
    models = []
    for index in range(count):
        model = lib.nn.Sequential(
            lib.nn.Linear(6, 3), lib.nn.Tanh(), lib.nn.BatchNorm1d(3)
        )
        with lib.no_grad():
            for number, p in enumerate(model.parameters()):
                values = np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape))
                p.copy_(lib.tensor(values * (index + number + 1), dtype=lib.float32))
        models.append(model.eval())
    return models


class _Tied:
    @staticmethod
    def build(lib: Any) -> Any:
        class Tied(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = self.a

            def forward(self, v: Any) -> Any:
                return self.b(self.a(v))

        return Tied()


def _calls(lib: Any) -> dict[str, Any]:
    F = lib.func
    x = lib.tensor(DATA, dtype=lib.float32)
    model = _models(lib, 1)[0]
    params = {k: v.detach() * 2 for k, v in model.named_parameters()}
    buffers = {k: v + 1 for k, v in model.named_buffers()}
    stacked_params, stacked_buffers = F.stack_module_state(_models(lib, 3))

    def loss(p: Any, a: Any) -> Any:
        return (F.functional_call(model, p, (a.unsqueeze(0),)) ** 2).sum()

    tied = _Tied.build(lib)
    ones = lib.ones(2, 2)
    return {
        "params": F.functional_call(model, params, (x,)),
        "params and buffers": F.functional_call(model, (params, buffers), x),
        "kwargs": F.functional_call(
            lib.nn.Linear(6, 3), params_of(lib, 0), (), {"input": x}
        ),
        "stacked": (stacked_params, stacked_buffers),
        "ensemble": F.vmap(
            lambda p, b, a: F.functional_call(model, (p, b), (a,)), in_dims=(0, 0, None)
        )(stacked_params, stacked_buffers, x),
        "per-example grads": F.vmap(F.grad(loss), in_dims=(None, 0))(params, x),
        "originals back": [v.detach() for v in model.parameters()],
        "tied": F.functional_call(tied, {"a.weight": ones}, (lib.ones(2),)),
        "untied": F.functional_call(
            tied, {"a.weight": ones * 2}, (lib.ones(2),), tie_weights=False
        ),
    }


def params_of(lib: Any, index: int) -> dict[str, Any]:
    model = _models(lib, index + 1)[index][0]
    return {k: v.detach() for k, v in model.named_parameters()}


def test_functional_call_and_stacked_states_match_torch_func() -> None:
    ours = plain(_calls(gradgen))
    theirs = oracle("calls", lambda torch: plain(_calls(torch)))
    assert_same(ours, theirs)


def _error_calls(lib: Any) -> dict[str, Any]:
    F = lib.func
    x = lib.tensor(DATA, dtype=lib.float32)
    model = _models(lib, 1)[0]
    weight = {"0.weight": lib.zeros(3, 6)}
    tied = _Tied.build(lib)
    other = lib.nn.Linear(6, 3).eval()
    trained = _models(lib, 1)[0].train()
    return {
        "strict": lambda: F.functional_call(model, weight, (x,), strict=True),
        "unexpected": lambda: F.functional_call(
            model, {**weight, "nope": lib.zeros(1)}, (x,), strict=True
        ),
        "repeated keys": lambda: F.functional_call(model, (weight, weight), (x,)),
        "not a dict": lambda: F.functional_call(model, [1], (x,)),
        "wrong type": lambda: F.functional_call(model, 1, (x,)),
        "tied twice": lambda: F.functional_call(
            tied,
            {"a.weight": lib.ones(2, 2), "b.weight": lib.zeros(2, 2)},
            (lib.ones(2),),
        ),
        "no models": lambda: F.stack_module_state([]),
        "modes": lambda: F.stack_module_state([model, trained]),
        "classes": lambda: F.stack_module_state([model, other]),
    }


def test_errors_match_torch_func() -> None:
    ours = errors(_error_calls(gradgen))
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(ours, theirs)


def test_the_module_gets_its_tensors_back_after_an_error() -> None:
    model = gradgen.nn.Linear(2, 2)
    weight = model.weight

    def broken(v: Any) -> Any:
        raise ValueError("boom")

    model.forward = broken  # type: ignore[method-assign]
    try:
        gradgen.func.functional_call(model, {"weight": gradgen.zeros(2, 2)}, (1,))
    except ValueError:
        pass
    assert model.weight is weight


def _batch_norm_free(lib: Any) -> Any:
    model = lib.nn.Sequential(lib.nn.Linear(6, 3), lib.nn.BatchNorm1d(3))
    lib.func.replace_all_batch_norm_modules_(model)
    norm = model[1]
    x = lib.tensor(DATA.reshape(2, 2, 6), dtype=lib.float32)
    params = {k: v.detach() for k, v in model.named_parameters()}
    run = lib.func.vmap(lambda a: lib.func.functional_call(model, params, (a,)))
    return {
        "stats": [norm.running_mean, norm.running_var, norm.track_running_stats],
        "vmap": run(x).shape[:1] + tuple(run(x).shape[1:]),
    }


def test_replace_all_batch_norm_modules_matches_torch_func() -> None:
    ours = plain(_batch_norm_free(gradgen))
    theirs = oracle("batch norm", lambda torch: plain(_batch_norm_free(torch)))
    assert_same(ours, theirs)
