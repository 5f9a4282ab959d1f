"""What the composite families share."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor(np.zeros(tuple(shape), like._data.dtype))


def _ops() -> Any:
    """The generated function namespace (imported late: it imports this module).

    `Any`: mypy does not follow gradgen.generated (see pyproject.toml)."""
    from ..generated import ops

    return ops


def _reshape(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    """PyTorch's reshape: a view when the memory allows one, else _unsafe_view of a
    clone (UnsafeViewBackward0 <- CloneBackward0, as PyTorch records it).

    `reshape` (composites.shape) views a clone instead, and gradgen's clone keeps a
    transposed or expanded layout, so that view fails; `_unsafe_view`'s kernel makes
    its input C-ordered, as PyTorch's reshape clones with contiguous memory format."""
    try:
        return self.view(shape)  # type: ignore[attr-defined,no-any-return]
    except RuntimeError:
        return _ops()._unsafe_view(self.clone(), shape)  # type: ignore[attr-defined,no-any-return]
