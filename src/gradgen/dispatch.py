"""The dispatcher: one OperatorHandle per operator, kernels per dispatch key.

A call enters at the highest key and each kernel may pass the call down with
`redispatch(handle, keyset_without_me, ...)`, as PyTorch's dispatcher does:

    Autograd         generated VariableType kernel: records the graph
    ADInplaceOrView  generated: view bookkeeping and version bumps (views, in-place)
    NumPy            generated backend kernel: runs the numpy expression from the YAML

A key with no kernel for an operator falls through to the next lower one. The lookup
is a table indexed by the keyset (a small int bitmask), built at registration, so a
dispatch is one list index.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any


class DispatchKey(enum.IntEnum):
    """Dispatch keys, lowest first: a call goes to the highest one it has."""

    NumPy = 0
    ADInplaceOrView = 1
    Autograd = 2


def keyset(*keys: DispatchKey) -> int:
    bits = 0
    for key in keys:
        bits |= 1 << key
    return bits


ALL_KEYS = keyset(*DispatchKey)
AFTER_AUTOGRAD_KEYSET = keyset(DispatchKey.ADInplaceOrView, DispatchKey.NumPy)
AFTER_AD_INPLACE_OR_VIEW_KEYSET = keyset(DispatchKey.NumPy)

Kernel = Callable[..., Any]


class OperatorHandle:
    """An operator known to the dispatcher, e.g. ``add.Tensor``."""

    __slots__ = ("name", "schema", "_kernels", "_table")

    def __init__(self, name: str, schema: str) -> None:
        self.name = name
        self.schema = schema
        self._kernels: dict[DispatchKey, Kernel] = {}
        self._table: list[Kernel | None] = [None] * (ALL_KEYS + 1)

    def register(self, key: DispatchKey, kernel: Kernel) -> None:
        if key in self._kernels:
            raise RuntimeError(f"{self.name} already has a {key.name} kernel")
        self._kernels[key] = kernel
        for bits in range(ALL_KEYS + 1):
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
        """Enter the dispatcher at the top."""
        kernel = self._table[ALL_KEYS]
        if kernel is None:
            kernel = self.kernel_for(ALL_KEYS)
        return kernel(ALL_KEYS, *args)

    def __repr__(self) -> str:
        return f"OperatorHandle({self.name!r})"


def redispatch(handle: OperatorHandle, keys: int, *args: Any) -> Any:
    """Call the kernel of the highest key in `keys` (below the caller's key)."""
    kernel = handle._table[keys]
    if kernel is None:
        kernel = handle.kernel_for(keys)
    return kernel(keys, *args)
