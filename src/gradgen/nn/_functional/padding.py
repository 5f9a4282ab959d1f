"""torch.nn.functional.pad's non-constant modes ('reflect', 'replicate', 'circular'),
one padded dimension at a time: a cat of the input and slices of it (flipped for
reflect, expanded for replicate) or, when an amount is negative (a crop), one
index_select whose positions say which input element each output element copies. Either
way the gradient sums what each input element gave to its border copies, as PyTorch's
padding backward kernels do."""

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


def _reflect(positions: np.ndarray, size: int) -> np.ndarray:
    if size == 1:
        return np.zeros_like(positions)
    folded = np.mod(positions, 2 * size - 2)
    mirrored: np.ndarray = np.where(folded < size, folded, 2 * size - 2 - folded)
    return mirrored


def _replicate(positions: np.ndarray, size: int) -> np.ndarray:
    clipped: np.ndarray = np.clip(positions, 0, size - 1)
    return clipped


def _circular(positions: np.ndarray, size: int) -> np.ndarray:
    """A negative amount crops first, then the kept part wraps around (PyTorch's
    order), so a border copies the part that stays."""
    first = max(-int(positions[0]), 0)  # the amount padded before
    start, stop = max(int(positions[0]), 0), min(int(positions[-1]) + 1, size)
    kept = stop - start
    wrapped: np.ndarray = np.mod(np.arange(-first, len(positions) - first), kept)
    return wrapped + start


_SOURCES: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "reflect": _reflect,
    "replicate": _replicate,
    "circular": _circular,
}


def _check(input: Tensor, pad: Sequence[int], mode: str) -> None:
    """PyTorch's checks: whole (before, after) pairs, 1 to 3 padded dimensions on an
    input with one or two more, amounts the mode can read from the input."""
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
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(
                "Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({before}, {after}) at dimension {dim} of input "
                f"{list(input.shape)}"
            )
        if mode == "circular" and (before > size or after > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and size == 0:
            raise RuntimeError(
                f"padding: input dimension {dim} of size 0 cannot be replicated"
            )


def _borders(input: Tensor, dim: int, before: int, after: int, mode: str) -> Tensor:
    """The common case (no cropping) as a cat of slices of the input: views and a
    copy, whose gradients are slices too (faster than index_select's index_add)."""
    size = input.shape[dim]
    if mode == "reflect":
        left = ops.narrow(input, dim, 1, before).flip(dim)
        right = ops.narrow(input, dim, size - 1 - after, after).flip(dim)
    elif mode == "circular":
        left = ops.narrow(input, dim, size - before, before)
        right = ops.narrow(input, dim, 0, after)
    else:  # replicate
        edge = list(input.shape)
        edge[dim] = before
        left = ops.narrow(input, dim, 0, 1).expand(edge)
        edge[dim] = after
        right = ops.narrow(input, dim, size - 1, 1).expand(edge)
    return ops.cat([left, input, right], dim)


def pad_by_mode(input: Tensor, pad: Sequence[int], mode: str) -> Tensor:
    """`input` padded (negative amounts crop) in its last len(pad) // 2 dimensions,
    the last first, the border values read from the input as `mode` says."""
    pad = [int(amount) for amount in pad]
    _check(input, pad, mode)
    result = input
    for pair in range(len(pad) // 2):
        dim = input.dim() - 1 - pair
        before, after = pad[2 * pair], pad[2 * pair + 1]
        if before == 0 and after == 0:
            continue
        if before >= 0 and after >= 0:
            result = _borders(result, dim, before, after, mode)
            continue
        size = input.shape[dim]
        positions = np.arange(-before, size + after)
        source = _SOURCES[mode](positions, size).astype(np.int64)
        result = ops.index_select(result, dim, Tensor(source))
    return result
