"""torch.utils: data loading (`gradgen.utils.data`) and activation checkpointing
(`gradgen.utils.checkpoint`)."""

from __future__ import annotations

from . import checkpoint as checkpoint, data as data

__all__ = ["checkpoint", "data"]
