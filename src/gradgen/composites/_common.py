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
