"""Selective activation checkpointing (SAC), as torch.utils.checkpoint's: a policy picks,
operator call by operator call, which outputs the checkpointed forward keeps (and
backward's recomputation takes from the cache instead of running the operator again).

PyTorch sees the calls with a TorchDispatchMode; gradgen with a dispatcher observer
(`dispatch.observe_calls`, chained with the profiler's), which sees every
`OperatorHandle` call above Autograd. Calls an operator makes itself (a composite's
inner calls run by the operator's kernel) are the operator's: only the outermost call
is a policy decision.

Because the observer sits above Autograd, a cached call in the recomputation records no
node. The tensors that call's node saved in the forward are therefore noted when it
runs (which argument or output each one was) and handed to the recomputation's pack
hook in the same order, so the recomputation saves what the forward saved.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import dispatch
from .. import graph as _graph
from .. import grad_mode
from ..dispatch import OperatorHandle
from ..tensor import Tensor

__all__ = [
    "CheckpointPolicy",
    "SAC_IGNORED_OPS",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
]


class SelectiveCheckpointContext:
    """What a policy function gets besides the operator and its arguments."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Per operator call: keep its output (SAVE) or run it again in backward
    (RECOMPUTE). MUST_ and PREFER_ differ only for compilers; CPU_OFFLOAD keeps it
    (gradgen has no device to offload from)."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVED = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)

# Calls checkpointing itself makes a different number of times in the forward and the
# recomputation, which the policy never sees. PyTorch lists detach (and metadata
# queries); in gradgen those are no operator calls, so the set starts empty.
SAC_IGNORED_OPS: set[OperatorHandle] = set()

_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = (
    "This can happen if the operations in the checkpointed region are "
    "nondeterministic or depend on global state that changed between forward and "
    "backward."
)

Policy = Callable[..., Any]


def _flat_tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _flat_tensors(item)]
    return []


def _rebuild(value: Any, tensors: list[Tensor]) -> Any:
    """`value` with its tensors replaced, in order, by `tensors` (consumed)."""
    if isinstance(value, Tensor):
        return tensors.pop(0)
    if isinstance(value, (tuple, list)):
        return type(value)(_rebuild(item, tensors) for item in value)
    return value


@dataclass
class _Cached:
    """A kept call: its outputs (detached), whether each required grad, the version
    each had, and where each tensor its node saved came from: ("out", i),
    ("arg", i) or ("kept", tensor)."""

    output: Any
    outputs: list[Tensor]
    requires_grad: list[bool]
    versions: list[int]
    saved: list[tuple[str, Any]]


class _Observing:
    """A dispatcher observer for the span of a `with` block, chained with the one
    before it; calls made while an observed call runs pass straight through."""

    def __init__(self) -> None:
        self._previous: dispatch.Observer | None = None
        self._depth = 0

    def __enter__(self) -> _Observing:
        self._previous = dispatch._observer
        dispatch.observe_calls(self._observe)
        return self

    def __exit__(self, *args: object) -> None:
        dispatch.observe_calls(self._previous)

    def _pass(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        self._depth += 1
        try:
            if self._previous is not None:
                return self._previous(handle, args)
            return handle.call_unobserved(*args)
        finally:
            self._depth -= 1

    def _observe(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        if self._depth or handle in SAC_IGNORED_OPS:
            return self._pass(handle, args)
        return self.observed(handle, args)

    def observed(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        raise NotImplementedError


def _saved_sources(
    saved: list[Tensor], args: tuple[Any, ...], outputs: list[Tensor]
) -> list[tuple[str, Any]]:
    inputs = _flat_tensors(args)
    sources: list[tuple[str, Any]] = []
    for tensor in saved:
        if any(tensor is out for out in outputs):
            sources.append(
                ("out", next(i for i, o in enumerate(outputs) if o is tensor))
            )
        elif any(tensor is arg for arg in inputs):
            sources.append(
                ("arg", next(i for i, a in enumerate(inputs) if a is tensor))
            )
        else:
            sources.append(("kept", tensor.detach()))
    return sources


class _CachingContext(_Observing):
    """The forward's context: run each call, ask the policy, keep what it says."""

    def __init__(self, policy_fn: Policy, storage: dict[Any, dict[int, Any]]) -> None:
        super().__init__()
        self.policy_fn = policy_fn
        self.storage = storage
        self.counter: dict[Any, int] = defaultdict(int)

    def observed(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        saved: list[Tensor] = []
        recording = bool(_graph.SAVED_TENSORS_HOOKS.stack)
        if recording:
            pack, unpack = _graph.SAVED_TENSORS_HOOKS.stack[-1]

            def record(tensor: Tensor) -> Any:
                saved.append(tensor)
                return pack(tensor)

            _graph.push_saved_tensors_hooks(record, unpack)
        try:
            out = self._pass(handle, args)
        finally:
            if recording:
                _graph.pop_saved_tensors_hooks()
        index = self.counter[handle]
        self.counter[handle] += 1
        context = SelectiveCheckpointContext(is_recompute=False, op_output=out)
        policy = self.policy_fn(context, handle, *args)
        if isinstance(policy, bool):
            policy = (
                CheckpointPolicy.MUST_SAVE
                if policy
                else CheckpointPolicy.PREFER_RECOMPUTE
            )
        if policy in _SAVED:
            outputs = _flat_tensors(out)
            self.storage[handle][index] = _Cached(
                out,
                [t.detach() for t in outputs],
                [t.requires_grad for t in outputs],
                [t._version for t in outputs],
                _saved_sources(saved, args, outputs),
            )
        else:
            self.storage[handle][index] = _RECOMPUTE
        return out


class _CachedContext(_Observing):
    """The recomputation's context: kept calls come from the cache, once."""

    def __init__(
        self, storage: dict[Any, dict[int, Any]], allow_cache_entry_mutation: bool
    ) -> None:
        super().__init__()
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.counter: dict[Any, int] = defaultdict(int)

    def __enter__(self) -> _CachedContext:
        self.counter.clear()  # a second backward finds consumed entries, not none
        super().__enter__()
        return self

    def observed(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        index = self.counter[handle]
        self.counter[handle] += 1
        entries = self.storage.get(handle)
        if entries is None:
            raise RuntimeError(
                f"{handle} encountered during backward but not found in storage. "
                f"{_MISMATCH}"
            )
        entry = entries.get(index)
        if entry is None:
            raise RuntimeError(
                f"{handle} invocation index {index} encountered during backward but "
                f"not found in storage. {_MISMATCH}"
            )
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward "
                "once on any region computed under selective activation checkpoint."
            )
        if entry is _RECOMPUTE:
            return self._pass(handle, args)
        entries[index] = _CONSUMED
        return self._replay(entry, args)

    def _replay(self, entry: _Cached, args: tuple[Any, ...]) -> Any:
        if not self.allow_cache_entry_mutation:
            for tensor, version in zip(entry.outputs, entry.versions):
                if tensor._version != version:
                    raise RuntimeError(
                        "Tensor cached during selective activation checkpoint has been "
                        "mutated"
                    )
        outputs = [
            t.detach().requires_grad_(flag) if flag else t.detach()
            for t, flag in zip(entry.outputs, entry.requires_grad)
        ]
        self._pack_as_the_node_did(entry, args, outputs)
        return _rebuild(entry.output, list(outputs))

    @staticmethod
    def _pack_as_the_node_did(
        entry: _Cached, args: tuple[Any, ...], outputs: list[Tensor]
    ) -> None:
        if not entry.saved or not _graph.SAVED_TENSORS_HOOKS.stack:
            return
        pack = _graph.SAVED_TENSORS_HOOKS.stack[-1][0]
        inputs = _flat_tensors(args)
        with grad_mode.no_grad():
            for kind, where in entry.saved:
                if kind == "out":
                    pack(outputs[where])
                elif kind == "arg":
                    pack(inputs[where])
                else:
                    pack(where)


def create_selective_checkpoint_contexts(
    policy_fn_or_list: Policy | list[OperatorHandle],
    allow_cache_entry_mutation: bool = False,
) -> tuple[_CachingContext, _CachedContext]:
    """The (forward, recomputation) context pair for `checkpoint(context_fn=...)`:
    `policy_fn(ctx, op, *args)` returns a CheckpointPolicy (or a bool: True saves), or a
    list of operators (`gradgen.generated.operators.mm`, ...) whose outputs are kept."""
    if isinstance(policy_fn_or_list, list):
        ops = policy_fn_or_list
        for op in ops:
            if not isinstance(op, OperatorHandle):
                raise ValueError(
                    "Expected op in `op_list` to be an OperatorHandle (gradgen's "
                    f"OpOverload, e.g. gradgen.generated.operators.mm) but got: {op} of "
                    f"type {type(op)}. "
                )

        def policy_fn(ctx: SelectiveCheckpointContext, op: Any, *args: Any) -> Any:
            if op in ops:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE

    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict[Any, dict[int, Any]] = defaultdict(dict)
    return (
        _CachingContext(policy_fn, storage),
        _CachedContext(storage, allow_cache_entry_mutation),
    )
