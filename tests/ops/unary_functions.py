"""PyTorch's unary functions of `lib` (gradgen or torch), shared by the unary tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _nn(lib: Any, name: str) -> Callable[..., Any]:
    return getattr(lib._C._nn if lib.__name__ == "torch" else lib, name)


def _aten(lib: Any, name: str) -> Callable[..., Any]:
    return getattr(lib.ops.aten if lib.__name__ == "torch" else lib, name)
