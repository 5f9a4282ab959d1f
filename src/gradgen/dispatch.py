"""The dispatcher: one OperatorHandle per operator, kernels per dispatch key.

A call enters at the highest key and each kernel may pass the call down with
`redispatch(handle, keyset_without_me, ...)`, as PyTorch's dispatcher does:

    Batched          gradgen.func's vmap: batching rules (only while vmap runs)
    Autograd         generated VariableType kernel: records the graph
    ADInplaceOrView  generated: view bookkeeping and version bumps (views, in-place)
    NumPy            generated backend kernel: runs the numpy expression from the YAML

A key with no kernel for an operator falls through to the next lower one. The lookup
is a table indexed by the keyset (a small int bitmask), built at registration, so a
dispatch is one list index.

A call enters with every key, except when the Autograd kernel could do nothing but pass
the call down: grad mode is off (no_grad, or backward without create_graph) and no
forward-AD level is open. Then the call enters below Autograd and skips that layer,
which is what makes backward formulas and no_grad code cheap.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from .grad_mode import _state as _grad_mode_state


class DispatchKey(enum.IntEnum):
    """Dispatch keys, lowest first: a call goes to the highest one it has."""

    NumPy = 0
    ADInplaceOrView = 1
    Autograd = 2
    # Above Autograd, as functorch's FuncTorchBatched: entered only while a vmap level
    # is open (gradgen.func registers its kernel for every operator).
    Batched = 3


def keyset(*keys: DispatchKey) -> int:
    bits = 0
    for key in keys:
        bits |= 1 << key
    return bits


# The keys a call enters with when no vmap level is open.
ALL_KEYS = keyset(DispatchKey.Autograd, DispatchKey.ADInplaceOrView, DispatchKey.NumPy)
BATCHED_KEYSET = keyset(DispatchKey.Batched)
_TABLE_SIZE = keyset(*DispatchKey) + 1
AFTER_AUTOGRAD_KEYSET = keyset(DispatchKey.ADInplaceOrView, DispatchKey.NumPy)
AFTER_AD_INPLACE_OR_VIEW_KEYSET = keyset(DispatchKey.NumPy)

Kernel = Callable[..., Any]


class _ForwardADLevels:
    """How many forward-AD levels are open (in any thread); kept by autograd.forward_ad."""

    # A slot, not a class attribute: every recorded op reads it (5 ns rather than 13).
    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


forward_ad_levels = _ForwardADLevels()

# The profiler's hook: `observer(handle, args)` runs every top-level call when set (see
# `observe_calls`).
Observer = Callable[["OperatorHandle", tuple[Any, ...]], Any]
_observer: Observer | None = None


class _BatchedLevels:
    """How many vmap levels are open (in any thread); kept through enter_batched and
    exit_batched by gradgen.func.batching."""

    open = 0


batched_levels = _BatchedLevels()


def _unobserved(handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
    return handle.call_unobserved(*args)


# What `OperatorHandle.call` hands every call to instead of its inlined body: the
# observer, or `call_unobserved` while vmap runs (which adds the Batched key). None, the
# usual case, costs each call one global lookup.
_detour: Observer | None = None


def _update_detour() -> None:
    global _detour
    _detour = _observer or (_unobserved if batched_levels.open else None)


def observe_calls(observer: Observer | None) -> None:
    """Route every `OperatorHandle.call` through `observer(handle, args)`, which calls
    `handle.call_unobserved(*args)` itself; None puts the direct call back."""
    global _observer
    _observer = observer
    _update_detour()


def enter_batched() -> None:
    """A vmap level opens: calls go through `call_unobserved`, which adds Batched."""
    batched_levels.open += 1
    _update_detour()


def exit_batched() -> None:
    batched_levels.open -= 1
    _update_detour()


class OperatorHandle:
    """An operator known to the dispatcher, e.g. ``add.Tensor``."""

    __slots__ = ("name", "schema", "_kernels", "_table", "fast")

    def __init__(self, name: str, schema: str) -> None:
        self.name = name
        self.schema = schema
        self._kernels: dict[DispatchKey, Kernel] = {}
        self._table: list[Kernel | None] = [None] * _TABLE_SIZE
        # What the operator's bindings call: `call` itself, or the operator's generated
        # fast path (variable_type.py's `fast_NAME`), which does the common case (no
        # detour, no forward-AD level) in one frame and hands every other call to `call`.
        self.fast: Kernel = self.call

    def register(self, key: DispatchKey, kernel: Kernel) -> None:
        if key in self._kernels:
            raise RuntimeError(f"{self.name} already has a {key.name} kernel")
        self._kernels[key] = kernel
        for bits in range(_TABLE_SIZE):
            self._table[bits] = next(
                (
                    self._kernels[k]
                    for k in sorted(self._kernels, reverse=True)
                    if bits & (1 << k)
                ),
                None,
            )

    def kernel_for(self, keys: int) -> Kernel:
        kernel = self._table[keys]
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self.name}' with the keys "
                f"{[k.name for k in DispatchKey if keys & (1 << k)]}: no kernel is "
                "registered for them"
            )
        return kernel

    def call(self, *args: Any) -> Any:
        """Enter the dispatcher at the top (below Autograd when it has nothing to do)."""
        if _detour is not None:
            return _detour(self, args)
        # The body of call_unobserved, inlined, without its Batched check (vmap
        # detours): this is every operator's hot path.
        if _grad_mode_state.enabled or forward_ad_levels.count:
            keys = ALL_KEYS
        else:
            keys = AFTER_AUTOGRAD_KEYSET
        kernel = self._table[keys]
        if kernel is None:
            kernel = self.kernel_for(keys)
        return kernel(keys, *args)

    def call_unobserved(self, *args: Any) -> Any:
        """`call` past the observer: how the observer itself runs the operator."""
        if _grad_mode_state.enabled or forward_ad_levels.count:
            keys = ALL_KEYS
        else:
            keys = AFTER_AUTOGRAD_KEYSET
        if batched_levels.open:
            keys |= BATCHED_KEYSET
        kernel = self._table[keys]
        if kernel is None:
            kernel = self.kernel_for(keys)
        return kernel(keys, *args)

    def __repr__(self) -> str:
        return f"OperatorHandle({self.name!r})"


def redispatch(handle: OperatorHandle, keys: int, *args: Any) -> Any:
    """Call the kernel of the highest key in `keys` (below the caller's key)."""
    kernel = handle._table[keys]
    if kernel is None:
        kernel = handle.kernel_for(keys)
    return kernel(keys, *args)
