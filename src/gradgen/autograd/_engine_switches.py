"""torch.autograd's switches for what gradgen's engine does not have (threads per
device, gradient strides, CUDA streams), as CPU-only gradgen reads them: they keep the
setting PyTorch's API reports, and change nothing else.

- `set_multithreading_enabled(mode)`: PyTorch runs backward on device threads unless
  off; gradgen's backward always runs on the calling thread.
- `enforce_grad_layout_policy(enable)`: PyTorch makes accumulated gradients take the
  parameter's strides; numpy gradients in gradgen are laid out by numpy.
- autograd.graph's stream switches have no streams to act on; the activation memory
  budget belongs to a compiler partitioner gradgen.compile does not have, and is
  refused outside one as PyTorch refuses it in eager mode.
"""

from __future__ import annotations

import threading
from typing import Any

from ..grad_mode import DecoratorContext

__all__ = [
    "enforce_grad_layout_policy",
    "is_grad_layout_enforcement_enabled",
    "is_multithreading_enabled",
    "region_activation_memory_budget",
    "set_multithreading_enabled",
    "set_override_stale_capture_stream",
    "set_warn_on_accumulate_grad_stream_mismatch",
]


class _Settings(threading.local):
    multithreading = True
    grad_layout = True


_settings = _Settings()
_streams = {"warn_on_mismatch": True, "override_stale_capture": False}


def is_multithreading_enabled() -> bool:
    return _settings.multithreading


def is_grad_layout_enforcement_enabled() -> bool:
    return _settings.grad_layout


class set_multithreading_enabled(DecoratorContext):
    """Set whether backward may use device threads (this thread; restored on exit),
    as a call, a context manager or a decorator."""

    def __init__(self, mode: bool) -> None:
        self.prev = _settings.multithreading
        _settings.multithreading = mode
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        _settings.multithreading = self.prev

    def clone(self) -> set_multithreading_enabled:
        return type(self)(self.mode)


class enforce_grad_layout_policy(DecoratorContext):
    """Set whether accumulated gradients must follow the parameter's layout (this
    thread; restored on exit), as a call, a context manager or a decorator."""

    def __init__(self, enable: bool = True) -> None:
        self.prev = _settings.grad_layout
        _settings.grad_layout = enable
        self.mode = enable

    def __call__(self, function: Any) -> Any:
        _settings.grad_layout = self.prev  # a decorator sets it per call only
        return super().__call__(function)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        _settings.grad_layout = self.prev

    def clone(self) -> enforce_grad_layout_policy:
        return type(self)(self.mode)


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """Whether to warn when a gradient arrives on another stream (gradgen has none)."""
    _streams["warn_on_mismatch"] = bool(enabled)


def set_override_stale_capture_stream(enabled: bool) -> None:
    """How CUDA graph capture treats stale streams (gradgen has neither)."""
    _streams["override_stale_capture"] = bool(enabled)


def region_activation_memory_budget(budget: float) -> Any:
    """A compiler's activation memory budget for a region: checked as PyTorch checks
    it, then refused, as PyTorch refuses it outside torch.compile."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(
            "gradgen.autograd.graph.region_activation_memory_budget: expects a float, "
            f"got {type(budget).__name__}"
        )
    if not 0.0 <= budget <= 1.0:
        raise ValueError(
            "gradgen.autograd.graph.region_activation_memory_budget: must be in "
            f"[0, 1], got {budget}"
        )
    raise RuntimeError(
        "gradgen.autograd.graph.region_activation_memory_budget can only be used "
        "inside a gradgen.compile region; it has no effect in eager mode."
    )
