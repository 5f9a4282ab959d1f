"""torch.utils: data loading (`gradgen.utils.data`)."""

from __future__ import annotations

from . import data as data

__all__ = ["data"]
