"""torch.autograd's engine switches that CPU-only gradgen keeps as settings
(multithreading, gradient layout, CUDA streams) and the activation memory budget a
compiler would read, against PyTorch (recorded in tests/golden/)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradgen
from func.common import assert_same, errors
from torch_oracle import oracle


def _flags(lib: Any) -> dict[str, Any]:
    autograd = lib.autograd
    seen = {"start": autograd.is_multithreading_enabled()}
    with autograd.set_multithreading_enabled(False):
        seen["inside"] = autograd.is_multithreading_enabled()
    seen["after"] = autograd.is_multithreading_enabled()
    switch = autograd.set_multithreading_enabled(False)  # as a call: set at once
    seen["called"] = autograd.is_multithreading_enabled()
    switch.__exit__(None, None, None)
    seen["restored"] = autograd.is_multithreading_enabled()

    @autograd.set_multithreading_enabled(False)
    def decorated() -> bool:
        return bool(autograd.is_multithreading_enabled())

    seen["decorated"] = decorated()
    seen["after decorated"] = autograd.is_multithreading_enabled()
    p = lib.tensor(np.ones((2, 3)), requires_grad=True)
    with autograd.enforce_grad_layout_policy(False):
        (p * 2).sum().backward()
    seen["grad"] = p.grad.numpy().tolist()
    seen["streams"] = [
        autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(False),
        autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(True),
        autograd.graph.set_override_stale_capture_stream(False),
    ]
    seen["modules"] = [
        autograd.grad_mode.no_grad is lib.no_grad,
        hasattr(autograd.anomaly_mode, "detect_anomaly"),
    ]
    return seen


def test_switches_behave_as_torchs() -> None:
    theirs = oracle("flags", lambda torch: _flags(torch))
    assert _flags(gradgen) == theirs


def _error_calls(lib: Any) -> dict[str, Any]:
    budget = lib.autograd.graph.region_activation_memory_budget
    return {
        "eager": lambda: budget(0.5),
        "bool": lambda: budget(True),
        "text": lambda: budget("0.5"),
        "range": lambda: budget(1.5),
    }


def test_memory_budget_refused_outside_a_compiler_as_torch() -> None:
    theirs = oracle("budget", lambda torch: errors(_error_calls(torch)))
    ours = errors(_error_calls(gradgen))
    for name in ("bool", "text", "range"):
        assert_same(ours[name], theirs[name], name)
    assert type(ours["eager"]).__name__ == type(theirs["eager"]).__name__
    assert str(ours["eager"]) == str(theirs["eager"]).replace(
        "torch.compile", "gradgen.compile"
    ).replace("torch.", "gradgen.")
