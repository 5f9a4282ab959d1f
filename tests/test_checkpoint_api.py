"""The rest of torch.utils.checkpoint's names against PyTorch: early stop, one
recomputation per backward pass (and per GraphExecGroup), the helpers, the CPU device
functions, debug mode and the mismatch messages (recorded in tests/golden/)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradgen
from func.common import assert_same, errors, plain
from gradgen.utils import checkpoint as cp
from torch_oracle import oracle

X = np.array([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])


def _recomputations(lib: Any, early: bool | None, backwards: int, group: bool) -> Any:
    """How often the function body runs past its last saving operation, and how often
    it starts, over `backwards` backward passes."""
    calls = {"start": 0, "after": 0}

    def block(a: Any) -> Any:
        calls["start"] += 1
        out = a.exp().sin()
        calls["after"] += 1
        return out + 1  # saves nothing

    x = lib.tensor(X, requires_grad=True)
    if early is None:
        out = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=False).sum()
    else:
        with lib.utils.checkpoint.set_checkpoint_early_stop(early):
            out = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=False).sum()
    grads = []
    context = lib.utils.checkpoint.GraphExecGroup() if group else _Null()
    with context:
        for number in range(backwards):
            if group:  # disjoint uses: each backward its own output's part
                (g,) = lib.autograd.grad(out, x, retain_graph=True)
                grads.append(g)
                break
            (g,) = lib.autograd.grad(out, x, retain_graph=number + 1 < backwards)
            grads.append(g)
    return {"calls": calls, "grads": plain(grads)}


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


@pytest.mark.parametrize("early", [None, True, False])
@pytest.mark.parametrize("backwards", [1, 2])
def test_early_stop_and_one_recomputation_per_backward(
    early: bool | None, backwards: int
) -> None:
    theirs = oracle(
        "calls", lambda torch: _recomputations(torch, early, backwards, False)
    )
    assert_same(_recomputations(gradgen, early, backwards, False), theirs)


def test_graph_exec_group() -> None:
    theirs = oracle("group", lambda torch: _recomputations(torch, None, 1, True))
    assert_same(_recomputations(gradgen, None, 1, True), theirs)


def _helpers(lib: Any) -> dict[str, Any]:
    ck = lib.utils.checkpoint
    a = lib.tensor(X, requires_grad=True)
    detached = ck.detach_variable((a, 3, lib.tensor(X)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ck.check_backward_validity([lib.tensor(X), 2])
        ck.check_backward_validity([a])
    ck.set_device_states([], [])
    forward, recompute = ck.noop_context_fn()
    with forward, recompute:
        pass
    return {
        "detached": [
            (t.requires_grad, t.grad_fn is None) if hasattr(t, "grad_fn") else t
            for t in detached
        ],
        "warnings": [str(w.message) for w in caught],
        "device type": ck.DefaultDeviceType.get_device_type(),
        "device states": list(ck.get_device_states(a, X)),
        "policies": [p.name for p in ck.CheckpointPolicy],
        "all": sorted(ck.__all__),
        "context": (ck.SelectiveCheckpointContext(is_recompute=False).is_recompute),
    }


def test_helpers_match_torch() -> None:
    theirs = oracle("helpers", lambda torch: _helpers(torch))
    assert_same(_helpers(gradgen), theirs)


def _changed(lib: Any, kind: str, debug: bool = False) -> Any:
    state = {"n": 3}

    def shrinking(a: Any) -> Any:
        state["n"] -= 1
        if kind == "count" and state["n"] < 2:
            return a.sum()  # saves nothing the second time
        return (a[:, : state["n"]].exp()).sum()

    x = lib.tensor(X, requires_grad=True)
    out = lib.utils.checkpoint.checkpoint(
        shrinking, x, use_reentrant=False, debug=debug
    )
    out.backward()


def _error_calls(lib: Any) -> dict[str, Any]:
    ck = lib.utils.checkpoint
    return {
        "detach list": lambda: ck.detach_variable([lib.tensor(X)]),
        "bad check": lambda: ck.checkpoint(
            lambda a: a, lib.tensor(X), use_reentrant=False, determinism_check="all"
        ),
        "debug with context_fn": lambda: ck.checkpoint(
            lambda a: a,
            lib.tensor(X),
            use_reentrant=False,
            debug=True,
            context_fn=lambda: ck.noop_context_fn(),
        ),
        "sequential keyword": lambda: ck.checkpoint_sequential(
            [lambda a: a], 1, lib.tensor(X), use_reentrant=False, other=1
        ),
    }


def test_errors_are_torchs() -> None:
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(errors(_error_calls(gradgen)), theirs)


def _first_lines(lib: Any, kind: str) -> list[str]:
    try:
        _changed(lib, kind)
    except RuntimeError as error:
        return [type(error).__name__, *str(error).splitlines()[:4]]
    return []


@pytest.mark.parametrize("kind", ["metadata", "count"])
def test_mismatch_messages_start_as_torchs(kind: str) -> None:
    theirs = oracle(kind, lambda torch: _first_lines(torch, kind))
    ours = _first_lines(gradgen, kind)
    assert ours == [line.replace("torch.", "gradgen.") for line in theirs]


def test_debug_lists_the_operators_of_both_runs() -> None:
    with pytest.raises(cp.CheckpointError) as caught:
        _changed(gradgen, "count", debug=True)
    text = str(caught.value)
    forward = text.split("original forward:")[1].split("Operations executed")[0]
    recompute = text.split("during recomputation:")[1].split("ERROR")[0]
    assert "aten::slice" in forward and "aten::exp" in forward
    assert "aten::exp" not in recompute and "aten::sum" in recompute
    with cp.set_checkpoint_debug_enabled(True), pytest.raises(cp.CheckpointError):
        _changed(gradgen, "count")
    assert cp._switches.debug is None


def test_graph_exec_groups_do_not_nest() -> None:
    with cp.GraphExecGroup():
        with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be"):
            cp.GraphExecGroup().__enter__()


def test_device_states_on_the_cpu_only() -> None:
    with pytest.raises(RuntimeError, match="runs on the CPU only"):
        cp.set_device_states([0], [gradgen.get_rng_state()])
