"""What the composite families share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor(np.zeros(tuple(shape), like._data.dtype))


class _BatchedComposites:
    """Composites that run on a whole batch as one call inside vmap. gradgen.func
    (floors above) fills these slots when it loads; a composite called with a
    tensor that is not a plain Tensor (a BatchedTensor) asks its slot first, which
    returns NotImplemented when the call is not one it takes."""

    # (input, weight, bias) of linear's addmm case.
    linear: Callable[[Tensor, Tensor, Tensor], Any] | None = None
    # (self, target, weight, reduction, ignore_index, label_smoothing).
    cross_entropy_loss: Callable[..., Any] | None = None
    # (input,) of nn.functional.relu: relu's batching rule without the dispatcher.
    relu: Callable[[Tensor], Any] | None = None


BATCHED = _BatchedComposites()
