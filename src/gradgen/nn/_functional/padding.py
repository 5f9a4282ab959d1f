"""torch.nn.functional.pad's non-constant modes ('reflect', 'replicate', 'circular'):
reflect and replicate are PyTorch's reflection_pad{n}d / replication_pad{n}d operators;
circular (PyTorch's composite _pad_circular) is here, one padded dimension at a time: a
cat of the input and slices of it or, when an amount is negative (a crop), one
index_select whose positions say which input element each output element copies."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = ["pad_by_mode"]

_SUPPORTED = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def _circular(positions: np.ndarray, size: int) -> np.ndarray:
    """A negative amount crops first, then the kept part wraps around (PyTorch's
    order), so a border copies the part that stays."""
    first = max(-int(positions[0]), 0)  # the amount padded before
    start, stop = max(int(positions[0]), 0), min(int(positions[-1]) + 1, size)
    kept = stop - start
    wrapped: np.ndarray = np.mod(np.arange(-first, len(positions) - first), kept)
    return wrapped + start


def _check(input: Tensor, pad: Sequence[int], mode: str) -> None:
    """PyTorch's checks: whole (before, after) pairs, 1 to 3 padded dimensions on an
    input with one or two more, circular amounts that wrap at most once."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    padded, ndim = len(pad) // 2, input.dim()
    if padded not in (1, 2, 3) or ndim not in (padded + 1, padded + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            + _SUPPORTED
        )
    for pair in range(padded):
        dim = ndim - 1 - pair
        before, after = pad[2 * pair], pad[2 * pair + 1]
        size = input.shape[dim]
        if mode == "circular" and (before > size or after > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")


def _circular_borders(input: Tensor, dim: int, before: int, after: int) -> Tensor:
    """The common case (no cropping) as a cat of slices of the input: views and a
    copy, whose gradients are slices too (faster than index_select's index_add)."""
    size = input.shape[dim]
    left = ops.narrow(input, dim, size - before, before)
    right = ops.narrow(input, dim, 0, after)
    return ops.cat([left, input, right], dim)


# PyTorch's operators for the modes that have one: reflection_pad{n}d and
# replication_pad{n}d for n padded dimensions (their own checks and messages).
_OPERATORS: dict[tuple[str, int], Callable[[Tensor, list[int]], Tensor]] = {
    ("reflect", 1): ops.reflection_pad1d,
    ("reflect", 2): ops.reflection_pad2d,
    ("reflect", 3): ops.reflection_pad3d,
    ("replicate", 1): ops.replication_pad1d,
    ("replicate", 2): ops.replication_pad2d,
    ("replicate", 3): ops.replication_pad3d,
}


def pad_by_mode(input: Tensor, pad: Sequence[int], mode: str) -> Tensor:
    """`input` padded (negative amounts crop) in its last len(pad) // 2 dimensions,
    the last first, the border values read from the input as `mode` says."""
    pad = [int(amount) for amount in pad]
    operator = _OPERATORS.get((mode, len(pad) // 2))
    if operator is not None and len(pad) % 2 == 0:
        if input.dim() not in (len(pad) // 2 + 1, len(pad) // 2 + 2):
            _check(input, pad, mode)  # PyTorch's message for an unsupported size
        return operator(input, pad)
    _check(input, pad, mode)
    result = input
    for pair in range(len(pad) // 2):
        dim = input.dim() - 1 - pair
        before, after = pad[2 * pair], pad[2 * pair + 1]
        if before == 0 and after == 0:
            continue
        if before >= 0 and after >= 0:
            result = _circular_borders(result, dim, before, after)
            continue
        size = input.shape[dim]
        positions = np.arange(-before, size + after)
        source = _circular(positions, size).astype(np.int64)
        result = ops.index_select(result, dim, Tensor(source))
    return result
