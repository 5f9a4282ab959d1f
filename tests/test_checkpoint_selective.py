"""Selective activation checkpointing against torch.utils.checkpoint: with a policy
(function, bool, or list of operators) the kept operators run once (counted in the
backward's recomputation), the cache holds exactly their outputs, gradients are
PyTorch's, and a second backward, a changed cached tensor and bad policies fail with
PyTorch's messages (recorded in tests/golden/)."""

from __future__ import annotations

import functools
import gc
import tracemalloc
import weakref
from collections import Counter
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.utils import checkpoint as cp
from func.common import assert_same, errors
from torch_oracle import oracle

X = np.linspace(-1.0, 1.0, 16).reshape(4, 4)
Y = np.linspace(0.5, 2.0, 16).reshape(4, 4)
COUNTED = ("mm", "sigmoid", "sin", "exp")
POLICIES: dict[str, tuple[str, ...]] = {
    "none": (),
    "mm": ("mm",),
    "sin exp": ("sin", "exp"),
    "sigmoid": ("sigmoid",),
}


def _op(lib: Any, name: str) -> Any:
    if lib is gradgen:
        return getattr(gradgen.generated.operators, name)
    return getattr(lib.ops.aten, name).default


def _name(lib: Any, op: Any) -> str:
    return op.name if lib is gradgen else str(op).split(".")[1]


def _block(lib: Any, x: Any, y: Any) -> Any:
    return (lib.sigmoid(lib.mm(lib.mm(x, y), y)) * y).sin().exp()


def _counting_backward(lib: Any, out: Any) -> Counter[str]:
    """The operators each backward runs (its formulas and the recomputation)."""
    if lib is gradgen:
        with gradgen.autograd.profiler.profile() as prof:
            out.backward()
        return Counter(e.name.split("::")[1] for e in prof.function_events)
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.counts: Counter[str] = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            self.counts[str(func).split(".")[1]] += 1
            return func(*args, **(kwargs or {}))

    with Count() as counter:
        out.backward()
    return counter.counts


def _policy(lib: Any, ops: list[Any], kind: str) -> Any:
    """The same choice three ways: an operator list, a function returning a
    CheckpointPolicy, a function returning a bool."""
    policies = lib.utils.checkpoint.CheckpointPolicy

    def by_enum(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
        return policies.PREFER_SAVE if op in ops else policies.MUST_RECOMPUTE

    def by_bool(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
        return op in ops

    return {"list": ops, "function": by_enum, "bool": by_bool}[kind]


def _run(lib: Any, kept: tuple[str, ...], kind: str = "list") -> dict[str, Any]:
    x = lib.tensor(X, requires_grad=True)
    y = lib.tensor(Y, requires_grad=True)
    ops = [_op(lib, name) for name in kept]
    policy = _policy(lib, ops, kind)
    pairs: list[Any] = []

    def context_fn() -> Any:
        if not kept:
            return lib.utils.checkpoint.noop_context_fn()
        pairs.append(lib.utils.checkpoint.create_selective_checkpoint_contexts(policy))
        return pairs[-1]

    out = lib.utils.checkpoint.checkpoint(
        _block, lib, x, y, use_reentrant=False, context_fn=context_fn
    )
    storage = pairs[0][0].storage if pairs else {}
    cached = sorted(
        (_name(lib, op), index)
        for op, entries in storage.items()
        for index, entry in entries.items()
        if hasattr(entry, "val") or hasattr(entry, "outputs")
    )
    counts = _counting_backward(lib, out.sum())
    return {
        "counts": {name: counts[name] for name in COUNTED},
        "cached": cached,
        "grads": [x.grad.numpy(), y.grad.numpy()],
    }


@pytest.mark.parametrize("kind", ["list", "function", "bool"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_kept_operators_are_not_recomputed(policy: str, kind: str) -> None:
    """Counts of each operator run by backward (formulas plus recomputation): a kept
    operator's recomputation is skipped; the cache holds one entry per kept call."""
    kept = POLICIES[policy]
    theirs = oracle("run", lambda torch: _run(torch, kept, kind))
    ours = _run(gradgen, kept, kind)
    assert ours["counts"] == theirs["counts"]
    assert [list(c) for c in ours["cached"]] == [list(c) for c in theirs["cached"]]
    for g, t in zip(ours["grads"], theirs["grads"]):
        np.testing.assert_allclose(g, t, rtol=1e-6)


def test_the_recomputation_skips_exactly_the_kept_calls() -> None:
    """Hand count: without a policy backward runs mm 6 times (4 in MmBackward's
    formulas, 2 recomputed); keeping mm leaves the formulas' 4."""
    assert _run(gradgen, ())["counts"]["mm"] == 6
    assert _run(gradgen, ("mm",))["counts"]["mm"] == 4


def test_the_cache_keeps_the_kept_outputs_alive_and_nothing_else() -> None:
    """What the forward keeps: with sigmoid kept, sigmoid's output array survives the
    forward (held by the cache); exp's, not kept, is gone (checkpoint keeps only
    holders)."""
    arrays: dict[str, Any] = {}

    def block(x: Any) -> Any:
        s = gradgen.sigmoid(x)
        e = s.exp()
        arrays["sigmoid"] = weakref.ref(s._data)
        arrays["exp"] = weakref.ref(e._data)
        return e.sin()

    x = gradgen.tensor(X, requires_grad=True)
    context_fn = functools.partial(
        cp.create_selective_checkpoint_contexts, [gradgen.generated.operators.sigmoid]
    )
    out = cp.checkpoint(block, x, use_reentrant=False, context_fn=context_fn)
    gc.collect()
    assert arrays["sigmoid"]() is not None
    assert arrays["exp"]() is None
    out.sum().backward()
    s = 1 / (1 + np.exp(-X))
    expected = np.cos(np.exp(s)) * np.exp(s) * s * (1 - s)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_the_policy_sees_each_forward_call_once_with_its_output() -> None:
    seen: list[tuple[str, bool, tuple[int, ...]]] = []

    def policy(ctx: Any, op: Any, *args: Any) -> Any:
        seen.append((op.name, ctx.is_recompute, tuple(ctx.op_output.shape)))
        return cp.CheckpointPolicy.PREFER_SAVE if op.name == "mm" else False

    x = gradgen.tensor(X, requires_grad=True)
    y = gradgen.tensor(Y[:, :2], requires_grad=True)
    context_fn = functools.partial(cp.create_selective_checkpoint_contexts, policy)
    out = cp.checkpoint(
        lambda a, b: (a @ b).tanh(), x, y, use_reentrant=False, context_fn=context_fn
    )
    out.sum().backward()
    assert seen == [("mm", False, (4, 2)), ("tanh", False, (4, 2))]


def _second_backward(lib: Any) -> Any:
    x = lib.tensor(X, requires_grad=True)
    context_fn = functools.partial(
        lib.utils.checkpoint.create_selective_checkpoint_contexts, [_op(lib, "exp")]
    )
    out = lib.utils.checkpoint.checkpoint(
        lambda a: a.exp().sin(), x, use_reentrant=False, context_fn=context_fn
    ).sum()
    out.backward(retain_graph=True)
    out.backward()


def _mutated(lib: Any, allow: bool) -> Any:
    x = lib.tensor(X, requires_grad=True)

    def block(a: Any) -> Any:
        e = a.exp()
        out = e.sin()
        e.detach().mul_(2)  # changes the cached exp output after it was kept
        return out

    context_fn = functools.partial(
        lib.utils.checkpoint.create_selective_checkpoint_contexts,
        [_op(lib, "exp")],
        allow_cache_entry_mutation=allow,
    )
    lib.utils.checkpoint.checkpoint(
        block, x, use_reentrant=False, context_fn=context_fn
    ).sum().backward()
    return x.grad


def _error_calls(lib: Any) -> dict[str, Any]:
    make = lib.utils.checkpoint.create_selective_checkpoint_contexts
    x = lib.tensor(X, requires_grad=True)
    return {
        "second backward": lambda: _second_backward(lib),
        "mutated": lambda: _mutated(lib, False),
        "mutation allowed": lambda: _mutated(lib, True),
        "not a policy": lambda: make(3),
        "reentrant context_fn": lambda: lib.utils.checkpoint.checkpoint(
            lambda a: a.sin(),
            x,
            use_reentrant=True,
            context_fn=functools.partial(make, [_op(lib, "sin")]),
        ),
        "reentrant debug": lambda: lib.utils.checkpoint.checkpoint(
            lambda a: a.sin(), x, use_reentrant=True, debug=True
        ),
    }


def test_errors_are_torchs() -> None:
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    assert_same(errors(_error_calls(gradgen)), theirs)


def test_an_op_list_takes_operator_handles() -> None:
    with pytest.raises(ValueError, match="to be an OperatorHandle .* but got: mm"):
        cp.create_selective_checkpoint_contexts(["mm"])  # type: ignore[list-item]


def _kept_after_forward(kind: str) -> float:
    """Bytes the forward leaves alive (numpy allocations, traced), in activations."""
    rng = np.random.default_rng(0)
    weights = [
        gradgen.tensor(rng.standard_normal((256, 256)) * 0.05, requires_grad=True)
        for _ in range(4)
    ]
    x = gradgen.tensor(rng.standard_normal((128, 256)), requires_grad=True)
    activation = 128 * 256 * 8

    def block(h: Any) -> Any:
        for w in weights:
            h = gradgen.tanh(h @ w)
        return h

    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    if kind == "plain":
        out = block(x)
    elif kind == "checkpoint":
        out = cp.checkpoint(block, x, use_reentrant=False)
    else:
        kept = [getattr(gradgen.generated.operators, kind)]
        context_fn = functools.partial(cp.create_selective_checkpoint_contexts, kept)
        out = cp.checkpoint(block, x, use_reentrant=False, context_fn=context_fn)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    out.sum().backward()
    return used / activation


@pytest.mark.parametrize(
    "kind, activations",
    [
        ("plain", 4),  # tanh saves its output: 4 outputs (the last is `out`)
        ("checkpoint", 1),  # only `out`: holders instead of activations
        ("mm", 5),  # the 4 cached mm outputs, and `out`
        ("tanh", 4),  # the 4 cached tanh outputs (the last is `out`)
    ],
)
def test_memory_kept_by_the_forward(kind: str, activations: int) -> None:
    """Four layers tanh(h @ w): what each variant keeps after the forward, counted in
    activations of 128 x 256 doubles (hand count in the parameters)."""
    assert _kept_after_forward(kind) == pytest.approx(activations, abs=0.15)
