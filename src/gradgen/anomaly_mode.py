"""Anomaly detection: find the forward operation behind a failing backward.

While enabled (globally, as in PyTorch), every Node records the Python stack of the
forward call that created it in ``node.metadata["traceback_"]``. When a node's
backward raises, the engine first warns "Error detected in XBackward0. Traceback of
forward call that caused the error: ..." with that stack; with `check_nan`, a node
that returns NaN raises "Function 'XBackward0' returned nan values in its Nth output.".
Off by default: recording stacks costs time on every operator call.
"""

from __future__ import annotations

import sys
import traceback
import warnings
from types import FrameType

from .grad_mode import DecoratorContext, check_bool_argument

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


def _set(mode: bool, check_nan: bool) -> None:
    global _enabled, _check_nan
    _enabled, _check_nan = mode, check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off, at once (PyTorch's `set_detect_anomaly`).

    Also a context manager: ``with set_detect_anomaly(True): ...`` restores at the
    end of the block the mode from before the call. Not a decorator (nor PyTorch's).
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        check_bool_argument("set_anomaly_enabled", "enabled", 1, mode)
        check_bool_argument("set_anomaly_enabled", "check_nan", 2, check_nan)
        self._previous = (_enabled, _check_nan)
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        _set(*self._previous)


class detect_anomaly(DecoratorContext):
    """``with gradgen.autograd.detect_anomaly(): ...``; also a decorator (gradgen's
    addition: PyTorch's is a context manager only), each call of the decorated
    function under anomaly detection and the previous mode restored after it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._previous: list[tuple[bool, bool]] = []
        warnings.warn(ENABLED_WARNING, UserWarning, stacklevel=2)

    def clone(self) -> detect_anomaly:
        # The same context without the warning again on every call.
        context = detect_anomaly.__new__(detect_anomaly)
        context.check_nan = self.check_nan
        context._previous = []
        return context

    def __enter__(self) -> None:
        self._previous.append((_enabled, _check_nan))
        _set(True, self.check_nan)

    def __exit__(self, *exc_info: object) -> None:
        _set(*self._previous.pop())


def _is_gradgen_frame(frame: FrameType) -> bool:
    """A frame of gradgen's own modules (by module name: a user's files may well sit
    in a folder called gradgen)."""
    module = str(frame.f_globals.get("__name__", ""))
    return module == "gradgen" or module.startswith("gradgen.")


def forward_stack() -> list[str]:
    """The current Python stack, outermost first, without gradgen's own frames."""
    frames: list[tuple[FrameType, int]] = []
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        frames.append((frame, frame.f_lineno))
        frame = frame.f_back
    kept = [(f, line) for f, line in frames if not _is_gradgen_frame(f)]
    return traceback.StackSummary.extract(reversed(kept or frames)).format()
