"""Anomaly detection: find the forward operation behind a failing backward.

While enabled (globally, as in PyTorch), every Node records the Python stack of the
forward call that created it in ``node.metadata["traceback_"]``. When a node's
backward raises, the engine first warns "Error detected in XBackward0. Traceback of
forward call that caused the error: ..." with that stack; with `check_nan`, a node
that returns NaN raises "Function 'XBackward0' returned nan values in its Nth output.".
Off by default: recording stacks costs time on every operator call.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

_enabled = False
_check_nan = True

ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should "
    "only be enabled for debugging."
)


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


def set_detect_anomaly(mode: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (also usable as a context manager, as PyTorch)."""
    global _enabled, _check_nan
    _enabled, _check_nan = bool(mode), bool(check_nan)


class detect_anomaly:
    """``with gradgen.autograd.detect_anomaly(): ...`` or as a decorator."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn(ENABLED_WARNING, UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self._previous = (_enabled, _check_nan)
        set_detect_anomaly(True, self.check_nan)

    def __exit__(self, *exc_info: object) -> None:
        set_detect_anomaly(*self._previous)

    def __call__(self, function: _F) -> _F:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]  # takes and returns what F does


def forward_stack() -> list[str]:
    """The current Python stack, outermost first, without gradgen's own frames."""
    frames = traceback.extract_stack()
    kept = [f for f in frames if "/gradgen/" not in f.filename.replace("\\", "/")]
    return traceback.format_list(kept or frames)
