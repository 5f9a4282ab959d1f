"""gradgen.nn: PyTorch's torch.nn namespace, for the part gradgen has (functional)."""

from __future__ import annotations

from . import functional

__all__ = ["functional"]
