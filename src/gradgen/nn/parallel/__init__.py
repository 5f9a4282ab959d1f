"""torch.nn.parallel for a machine without accelerators (gradgen runs on the CPU):
DataParallel wraps a module and calls it, as PyTorch's does when no device type is
available; data_parallel refuses, as PyTorch's."""

from __future__ import annotations

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
