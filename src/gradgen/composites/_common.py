"""What the composite families share."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..generated import ops as _generated_ops
from ..tensor import Tensor


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor(np.zeros(tuple(shape), like._data.dtype))


def _ops() -> Any:
    """The generated function namespace. It imports the composites (the documented
    generated <-> composites tie), so it may be only partly run when this module is
    imported: the module object is taken here and its functions read at call time.

    `Any`: mypy does not follow gradgen.generated (see pyproject.toml)."""
    return _generated_ops
