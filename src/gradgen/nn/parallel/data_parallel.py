"""torch.nn.parallel.data_parallel: DataParallel and data_parallel without devices to
spread over (PyTorch's behaviour when no accelerator is available)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Holds `module` as its child `module` (state_dict keys `module.*`) and calls it
    on the whole batch: with no accelerator there is no device to scatter to, so
    `device_ids` is empty, as in PyTorch on such a machine."""

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[Any] = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Sequence[Any] | None = None,
    output_device: Any = None,
    dim: int = 0,
    module_kwargs: Any = None,
) -> Any:
    """PyTorch's functional DataParallel: it needs an accelerator's device type."""
    raise RuntimeError("device type could not be determined")
