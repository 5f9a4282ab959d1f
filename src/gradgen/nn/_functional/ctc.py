"""torch.nn.functional.ctc_loss as a composite: the connectionist temporal
classification loss by the forward (alpha) recursion in log space over the targets
with blanks between their labels, one step per time frame, differentiated by
autograd."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradgen.dtypes import int64
from gradgen.factories import full, tensor
from gradgen.composites._common import BATCHED, unbatched
from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = ["ctc_loss"]

# log(0) stand-in: finite, so that logsumexp's gradient at unreachable states is 0
# (exp(-1e30 - x)), not exp(-inf + inf) = NaN.
_LOG_ZERO = -1e30
_REDUCTIONS = ("none", "mean", "sum")


def _lengths(values: Tensor | Sequence[int] | int, name: str, batch: int) -> np.ndarray:
    array = np.asarray(values._data if isinstance(values, Tensor) else values)
    array = array.reshape(-1).astype(np.int64)
    if array.shape[0] != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return array


def _padded_targets(
    targets: Tensor, target_lengths: np.ndarray, batched: bool
) -> np.ndarray:
    """The targets as a (N, S_max) array: a padded 2-D targets as it is, a 1-D one
    cut at the lengths (PyTorch's concatenated form)."""
    labels = np.asarray(targets._data).astype(np.int64)
    longest = int(target_lengths.max(initial=0))
    if not batched:
        labels = labels.reshape(1, -1)
    if labels.ndim == 2:
        if labels.shape[1] < longest:
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, but "
                f"got size {labels.shape[1]} for argument #2 'targets' (while checking "
                "arguments for ctc_loss_allocate_outputs)"
            )
        return labels
    padded = np.zeros((len(target_lengths), max(longest, 1)), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
    for row, (start, length) in enumerate(zip(starts, target_lengths)):
        padded[row, :length] = labels[start : start + length]
    return padded


def _alpha_steps(
    emissions: Tensor, skip: np.ndarray, input_lengths: np.ndarray
) -> Tensor:
    """The log-probabilities alpha (N, L) of the extended-label prefixes after each
    sequence's last frame: from a state s one reaches s, s + 1 and, where `skip`,
    s + 2; a sequence stops at its input length."""
    frames, batch, states = emissions.shape
    floor = full((batch, 2), _LOG_ZERO, dtype=emissions.dtype)
    start = np.full((batch, states), _LOG_ZERO)
    start[:, :2] = 0.0
    alpha = emissions[0] + tensor(start, dtype=emissions.dtype)
    skips = tensor(skip)
    for t in range(1, frames):
        shifted = ops.cat([floor, alpha], 1)
        stay, step = alpha, shifted.narrow(1, 1, states)
        jump = ops.where(skips, shifted.narrow(1, 0, states), _LOG_ZERO)
        moved = ops.logsumexp(ops.stack([stay, step, jump]), 0) + emissions[t]
        running = tensor((t < input_lengths).reshape(-1, 1))
        alpha = ops.where(running, moved, alpha)
    return alpha


def _check(log_probs: Tensor, blank: int, input_lengths: np.ndarray) -> None:
    classes = log_probs.shape[-1]
    if blank < 0 or blank >= classes:
        raise RuntimeError("blank must be in label range")
    frames = log_probs.shape[0]
    if input_lengths.size and input_lengths.max() > frames:
        raise RuntimeError(
            f"Expected input_lengths to have value at most {frames}, but got value "
            f"{input_lengths.max()} (while checking arguments for "
            "ctc_loss_allocate_outputs)"
        )


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """-log of the probability of each target summed over its alignments to the
    (T, N, C) or unbatched (T, C) log_probs; infinite where no alignment fits (0
    with zero_infinity); 'mean' divides each by its target length first."""
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    read = (targets, input_lengths, target_lengths)  # as arrays: each example's own
    if not all(unbatched(t) for t in read if isinstance(t, Tensor)):
        assert BATCHED.per_example is not None  # a BatchedTensor: gradgen.func loaded
        return BATCHED.per_example(  # type: ignore[no-any-return]
            "ctc_loss",
            lambda p, t, i, o: ctc_loss(p, t, i, o, blank, reduction, zero_infinity),
            (log_probs, *read),
        )
    batched = log_probs.dim() == 3
    emitted = log_probs if batched else log_probs.unsqueeze(1)
    batch = emitted.shape[1]
    in_lengths = _lengths(input_lengths, "input_lengths", batch)
    out_lengths = _lengths(target_lengths, "target_lengths", batch)
    _check(log_probs, blank, in_lengths)
    labels = _padded_targets(targets, out_lengths, batched)
    states = 2 * labels.shape[1] + 1
    extended = np.full((batch, states), blank, dtype=np.int64)
    extended[:, 1::2] = labels
    skip = np.zeros((batch, states), dtype=bool)
    skip[:, 3::2] = extended[:, 3::2] != extended[:, 1:-2:2]
    index = tensor(extended, dtype=int64).unsqueeze(0).expand(emitted.shape[0], -1, -1)
    alpha = _alpha_steps(emitted.gather(2, index), skip, in_lengths)
    last = tensor(2 * out_lengths, dtype=int64).unsqueeze(1)
    before = tensor(np.maximum(2 * out_lengths - 1, 0), dtype=int64).unsqueeze(1)
    ends = ops.stack([alpha.gather(1, last), alpha.gather(1, before)])
    if not (out_lengths > 0).all():  # an empty target ends on its one blank only
        has_label = tensor((out_lengths > 0).reshape(1, -1, 1))
        ends = ops.where(has_label, ends, ops.cat([ends[:1], ends[:1] * 0 + _LOG_ZERO]))
    likelihood = ops.logsumexp(ends, 0).squeeze(1)
    impossible = likelihood < _LOG_ZERO / 2
    loss = ops.where(impossible, 0.0 if zero_infinity else float("inf"), -likelihood)
    if reduction == "mean":
        divisor = tensor(np.maximum(out_lengths, 1), dtype=loss.dtype)
        return (loss / divisor).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss.squeeze(0)
