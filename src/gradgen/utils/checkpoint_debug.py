"""checkpoint(debug=True): the operators the forward and the recomputation ran, listed
in the CheckpointError that a mismatch raises (PyTorch logs them with a
LoggingTensorMode; gradgen with a dispatcher observer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from ..dispatch import OperatorHandle
from .checkpoint_frame import CheckpointError
from .checkpoint_selective import _Observing

__all__ = ["debug_context_and_callback"]

TEMPLATE = """\
An error happened while unpacking tensors; debug mode lists the operators of both runs.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

ERROR: Detected non-determinism while running activation checkpointing; compare the
two lists to find where the runs part.
"""


class _OperatorLog(_Observing):
    """Names every operator call made inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def observed(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        self.names.append(f"aten::{handle.name}")
        return self._pass(handle, args)


def debug_context_and_callback() -> tuple[
    Callable[[], tuple[_OperatorLog, _OperatorLog]],
    Callable[[CheckpointError], NoReturn],
]:
    """checkpoint's `context_fn` that logs both runs, and the unpack error callback
    that raises a CheckpointError listing them."""
    forward, recompute = _OperatorLog(), _OperatorLog()

    def context_fn() -> tuple[_OperatorLog, _OperatorLog]:
        return forward, recompute

    def callback(error: CheckpointError) -> NoReturn:
        raise CheckpointError(
            TEMPLATE.format(
                forward_ops="\n".join(forward.names),
                recompute_ops="\n".join(recompute.names),
            )
        ) from error

    return context_fn, callback
