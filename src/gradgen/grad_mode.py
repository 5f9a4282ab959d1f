"""Grad mode: whether operators record the graph, per thread.

`no_grad`, `enable_grad` and `set_grad_enabled` are context managers and decorators,
as in PyTorch. The flag lives in a `threading.local`, so a `no_grad` block in one
thread never changes what another thread records. The engine sets grad mode to
`create_graph` while it runs backward formulas, which is what makes higher-order
gradients work.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _GradModeState(threading.local):
    enabled: bool = True


_state = _GradModeState()


def is_grad_enabled() -> bool:
    return _state.enabled


def _set_enabled(mode: bool) -> None:
    _state.enabled = mode


class _GradModeContext:
    """Base of the grad-mode context managers; also usable as a decorator."""

    _mode: bool

    def __enter__(self) -> None:
        self._previous = _state.enabled
        _state.enabled = self._mode

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled = self._previous

    def __call__(self, function: F) -> F:
        mode = self._mode

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            previous = _state.enabled
            _state.enabled = mode
            try:
                return function(*args, **kwargs)
            finally:
                _state.enabled = previous

        return wrapper  # type: ignore[return-value]  # functools.wraps keeps F's signature


class no_grad(_GradModeContext):
    """Disable gradient recording: ``with gradgen.no_grad(): ...`` or ``@no_grad()``."""

    _mode = False


class enable_grad(_GradModeContext):
    """Enable gradient recording inside a `no_grad` region."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to `mode`; as a function call it takes effect at once."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._previous = _state.enabled
        _state.enabled = self._mode

    def __enter__(self) -> None:
        # The constructor already switched; entering only keeps what to restore.
        pass


class _InferenceModeState(threading.local):
    enabled: bool = False


_inference_state = _InferenceModeState()


def is_inference_mode_enabled() -> bool:
    return _inference_state.enabled


class inference_mode:
    """``with gradgen.inference_mode(): ...`` or ``@inference_mode()``: no graph is
    recorded, as under `no_grad`. PyTorch also marks the tensors made inside as
    inference tensors that autograd later refuses; gradgen does not mark them, so code
    that PyTorch accepts runs the same here. `inference_mode(False)` changes nothing."""

    def __init__(self, mode: bool = True) -> None:
        self._mode = bool(mode)
        self._previous: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self._previous.append((_state.enabled, _inference_state.enabled))
        if self._mode:
            _state.enabled = False
            _inference_state.enabled = True

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled, _inference_state.enabled = self._previous.pop()

    def __call__(self, function: F) -> F:
        mode = self._mode

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
