"""What the composite families share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor(np.zeros(tuple(shape), like._data.dtype))


def unbatched(tensor: Tensor) -> bool:
    """Not a BatchedTensor (vmap's, whose array is example 0's only): its array holds
    its values, which a composite may read."""
    return tensor.__class__ is Tensor or not hasattr(tensor, "_level")


def whole_array(tensor: Tensor) -> np.ndarray:
    """The values of every example: a BatchedTensor's whole batch (the batches first,
    the outermost first), as vmap's batching rules see it; else the tensor's array."""
    while not unbatched(tensor):
        tensor = tensor._value  # type: ignore[attr-defined]
    return tensor._data


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
    # (name, function, args): the function once per example of vmap's innermost
    # level among the args, results stacked (for steps that read the values).
    per_example: Callable[[str, Callable[..., Any], tuple[Any, ...]], Any] | None = None


BATCHED = _BatchedComposites()
