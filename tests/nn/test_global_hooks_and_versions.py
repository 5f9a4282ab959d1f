"""Hooks for every module (nn.modules.module.register_module_*), and state dicts with
versions: `_load_from_state_dict` (overridable), BatchNorm's old checkpoints without
num_batches_tracked, all against PyTorch."""

from __future__ import annotations

import io
from collections import OrderedDict
from typing import Any

import numpy as np

import gradgen
from gradgen.nn.modules import hooks as hooks_module
from torch_oracle import oracle, require_torch


def _model(lib: Any) -> Any:
    model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
    with lib.no_grad():  # the same weights in both libraries
        model[0].weight.copy_(lib.tensor([[0.5, -1.0], [0.25, 0.75], [-0.5, 1.5]]))
        model[0].bias.copy_(lib.tensor([0.1, -0.2, 0.3]))
    return model


def _order(lib: Any) -> list[Any]:
    module = lib.nn.modules.module
    seen: list[Any] = []
    handles = [
        module.register_module_forward_pre_hook(
            lambda m, a: seen.append(["pre", type(m).__name__, len(a)])
        ),
        module.register_module_forward_hook(
            lambda m, a, o: seen.append(["post", type(m).__name__, list(o.shape)])
        ),
        module.register_module_full_backward_pre_hook(
            lambda m, go: seen.append(["bwd_pre", type(m).__name__, len(go)])
        ),
        module.register_module_full_backward_hook(
            lambda m, gi, go: seen.append(["bwd", type(m).__name__, len(gi), len(go)])
        ),
    ]
    model = _model(lib)
    model[0].register_forward_hook(lambda m, a, o: seen.append(["own", "Linear"]))
    model(lib.ones(1, 2, requires_grad=True)).sum().backward()
    for handle in handles:
        handle.remove()
    model(lib.ones(1, 2))
    return seen


def test_global_hooks_run_for_every_module_in_pytorchs_order() -> None:
    ours = _order(gradgen)
    assert ours == oracle("order", _order)
    assert ours[:3] == [
        ["pre", "Sequential", 1],
        ["pre", "Linear", 1],
        ["post", "Linear", [1, 3]],
    ]
    assert ours[3] == ["own", "Linear"]  # a module's own hooks after the global ones
    assert not hooks_module.any_global_hooks()


def _replacing(lib: Any) -> list[Any]:
    module = lib.nn.modules.module
    pre = module.register_module_forward_pre_hook(
        lambda m, a: (a[0] * 2,) if isinstance(m, lib.nn.Linear) else None
    )
    post = module.register_module_forward_hook(
        lambda m, a, k, o: o + 1 if isinstance(m, lib.nn.ReLU) else None,
        with_kwargs=True,
    )
    try:
        out = _model(lib)(lib.ones(1, 2))
    finally:
        pre.remove()
        post.remove()
    return [out.detach().numpy(), _model(lib)(lib.ones(1, 2)).detach().numpy()]


def test_global_hooks_may_replace_arguments_and_results() -> None:
    ours = _replacing(gradgen)
    theirs = oracle("replaced", _replacing)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert not np.allclose(ours[0], ours[1])


def _batch_norm_checkpoints(lib: Any) -> list[str]:
    outcomes = []

    def attempt(module: Any, state: Any, strict: bool = True) -> None:
        try:
            outcomes.append(str(module.load_state_dict(state, strict=strict)))
        except RuntimeError as error:
            outcomes.append(str(error))

    seq = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
    state = seq.state_dict()
    del state["1.num_batches_tracked"]
    attempt(seq, state)  # saved at version 2: the key is missing
    attempt(seq, state, strict=False)
    state._metadata["1"]["version"] = 1  # an old checkpoint: loads
    attempt(seq, state)
    attempt(seq, dict(state))  # no versions at all: loads
    seq[1].num_batches_tracked.fill_(5)
    attempt(seq, dict(state))  # and keeps the module's count
    outcomes.append(str(seq[1].num_batches_tracked.item()))
    return outcomes


def test_batch_norm_loads_old_checkpoints_as_pytorch_does() -> None:
    ours = _batch_norm_checkpoints(gradgen)
    assert ours == oracle("outcomes", _batch_norm_checkpoints)
    assert ours[0].startswith("Error(s) in loading state_dict for Sequential")
    assert ours[-1] == "5"


def test_a_torch_checkpoint_keeps_its_versions() -> None:
    torch = require_torch()
    old = torch.nn.BatchNorm2d(4).state_dict()
    del old["num_batches_tracked"]
    old._metadata[""]["version"] = 1
    buffer = io.BytesIO()
    torch.save(old, buffer)
    buffer.seek(0)
    loaded = gradgen.load(buffer)
    assert loaded._metadata == OrderedDict({"": {"version": 1}})
    module = gradgen.nn.BatchNorm2d(4)
    assert str(module.load_state_dict(loaded)) == "<All keys matched successfully>"


class _Renamed:
    """A module whose checkpoints once called its weight `w` (a common override)."""

    @staticmethod
    def make(lib: Any) -> Any:
        class Scale(lib.nn.Module):
            _version = 2

            def __init__(self) -> None:
                super().__init__()
                self.weight = lib.nn.Parameter(lib.ones(3))

            def _load_from_state_dict(
                self,
                state_dict: Any,
                prefix: str,
                local_metadata: Any,
                strict: bool,
                missing: Any,
                unexpected: Any,
                errors: Any,
            ) -> None:
                if local_metadata.get("version", 1) < 2 and prefix + "w" in state_dict:
                    state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
                super()._load_from_state_dict(
                    state_dict,
                    prefix,
                    local_metadata,
                    strict,
                    missing,
                    unexpected,
                    errors,
                )

        return Scale


def _renamed(lib: Any) -> list[Any]:
    scale = _Renamed.make(lib)
    model = lib.nn.Sequential(scale())
    old = {"0.w": lib.tensor([1.0, 2.0, 3.0])}
    result = str(model.load_state_dict(old))
    return [result, model[0].weight.detach().numpy(), list(old)]


def test_subclasses_may_override_load_from_state_dict() -> None:
    ours = _renamed(gradgen)
    theirs = oracle("renamed", _renamed)
    assert ours[0] == theirs[0] == "<All keys matched successfully>"
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[2] == theirs[2] == ["0.w"]  # the caller's dict is not changed
