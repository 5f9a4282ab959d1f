"""allow_mutation_on_saved_tensors: in-place changes of tensors saved for backward are
allowed inside it; the saved value is cloned just before the change.

Two pieces, as PyTorch's:

- saved-tensor hooks: every tensor saved for backward is packed as a handle, keyed by
  (tensor, version) and grouped by storage (the numpy array at the root of its views);
- a dispatcher observer (`dispatch.observe_calls`, chained with the profiler's): before
  an operator writes to an argument (``(a!)`` in its schema), every saved tensor on
  that storage is cloned, and backward unpacks the clone.

Backward must run inside the same context: outside it, unpacking raises PyTorch's
AssertionError. Contexts do not nest.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import dispatch
from .. import graph as _graph
from ..grad_mode import no_grad
from ..tensor import Tensor

OUTSIDE = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)


class _Handle:
    """What a saved tensor is packed into."""


class AllowMutationOnSavedContext:
    """The state of one `allow_mutation_on_saved_tensors` context (cleared on exit)."""

    def __init__(self) -> None:
        self.original: dict[_Handle, Tensor] = {}
        self.cloned: dict[_Handle, Tensor] = {}
        self.by_tensor: dict[tuple[int, int], _Handle] = {}
        self.by_storage: dict[int, set[tuple[int, int]]] = {}

    def clear(self) -> None:
        self.original.clear()
        self.cloned.clear()
        self.by_tensor.clear()
        self.by_storage.clear()


class _State:
    enabled = False


_state = _State()


def _storage(tensor: Tensor) -> int:
    """The identity of the memory under `tensor`: the root array of its views."""
    array: Any = tensor._data
    while isinstance(array.base, np.ndarray):
        array = array.base
    return id(array)


@functools.cache
def _written_positions(schema: str) -> tuple[int, ...]:
    """The positions of the arguments an operator writes to (``(a!)``)."""
    inner = schema[schema.index("(") + 1 : schema.rindex(") ->")]
    parts = [p for p in inner.split(", ") if p and p != "*"]
    return tuple(i for i, part in enumerate(parts) if "!)" in part.split(" ")[0])


def _pack(ctx: AllowMutationOnSavedContext, tensor: Tensor) -> _Handle:
    key = (id(tensor), tensor._version)
    handle = ctx.by_tensor.get(key)
    if handle is None:
        handle = ctx.by_tensor[key] = _Handle()
        ctx.original[handle] = tensor
    ctx.by_storage.setdefault(_storage(tensor), set()).add(key)
    return handle


def _unpack(ctx: AllowMutationOnSavedContext, handle: _Handle) -> Tensor:
    if not _state.enabled:
        raise AssertionError(OUTSIDE)
    if handle in ctx.cloned:
        return ctx.cloned[handle]
    if handle not in ctx.original:
        raise AssertionError(OUTSIDE)
    return ctx.original[handle]


def _clone_saved(ctx: AllowMutationOnSavedContext, tensor: Tensor) -> None:
    """Clone every saved tensor on `tensor`'s storage before it changes."""
    for key in ctx.by_storage.get(_storage(tensor), ()):
        handle = ctx.by_tensor.get(key)
        if handle is None or handle in ctx.cloned or handle not in ctx.original:
            continue
        with no_grad():
            ctx.cloned[handle] = ctx.original.pop(handle).clone()


def _observer(
    ctx: AllowMutationOnSavedContext, previous: dispatch.Observer | None
) -> dispatch.Observer:
    def observe(handle: dispatch.OperatorHandle, args: tuple[Any, ...]) -> Any:
        for position in _written_positions(handle.schema):
            if position < len(args):
                written = args[position]
                for tensor in written if isinstance(written, list) else [written]:
                    if isinstance(tensor, Tensor):
                        _clone_saved(ctx, tensor)
        if previous is not None:
            return previous(handle, args)
        return handle.call_unobserved(*args)

    return observe


@contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[AllowMutationOnSavedContext]:
    """Inside it, tensors saved for backward may be changed in place: the saved value
    is cloned first. Run backward inside the same context."""
    if _state.enabled:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = AllowMutationOnSavedContext()
    previous = dispatch._observer
    _graph.push_saved_tensors_hooks(
        functools.partial(_pack, ctx), functools.partial(_unpack, ctx)
    )
    dispatch.observe_calls(_observer(ctx, previous))
    _state.enabled = True
    try:
        yield ctx
    finally:
        _state.enabled = False
        dispatch.observe_calls(previous)
        _graph.pop_saved_tensors_hooks()
        ctx.clear()
