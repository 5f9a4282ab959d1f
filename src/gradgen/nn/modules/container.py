"""torch.nn's containers: Sequential."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .module import Module

__all__ = ["Sequential"]


class Sequential(Module):
    """Modules applied one after the other; children are named "0", "1", ..."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for index, module in enumerate(modules):
            self.add_module(str(index), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            if module is not None:
                input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(*[m for m in items[index] if m is not None])
        if not -len(items) <= index < len(items):
            raise IndexError(f"index {index} is out of range")
        return items[index]

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self
