"""torch.nn.functional's margin and embedding losses, written with gradgen's
operators as ATen writes them (margin_ranking_loss, hinge_embedding_loss,
cosine_embedding_loss, triplet_margin_loss), or calling the operator of their name
(soft_margin_loss, multi_margin_loss, multilabel_margin_loss)."""

from __future__ import annotations

from collections.abc import Callable

from gradgen.generated import ops
from gradgen.tensor import Tensor

from .._reduction import get_enum, legacy_get_string
from .distance import pairwise_distance

__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_with_distance_loss",
]


def _reduced(
    loss: Tensor, reduction: str, size_average: bool | None, reduce: bool | None
) -> Tensor:
    """`loss` reduced as `reduction` (or the legacy flags) says."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but "
            f"got sizes: input1: {input1.size()}, input2: {input2.size()}, "
            f"target: {target.size()} "
        )
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduced(loss, reduction, size_average, reduce)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """input where target is 1, max(0, margin - input) where target is -1."""
    margin_part = ops.where(target != 1, (margin - input).clamp_min(0), 0.0)
    self_part = ops.where(target != -1, input, 0.0)
    return _reduced(margin_part + self_part, reduction, size_average, reduce)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-target * input)) (SoftMarginLossBackward0)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    return ops.soft_margin_loss(input, target, get_enum(reduction))


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is
    -1 (cos over the last dimension, each squared norm plus 1e-12 as ATen's)."""
    dim = target.dim()
    if dim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    if dim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    epsilon = 1e-12
    product = (input1 * input2).sum(dim)
    squares1 = (input1 * input1).sum(dim) + epsilon
    squares2 = (input2 * input2).sum(dim) + epsilon
    cos = product / ops.sqrt(squares1 * squares2)
    positive = ops.where(target == 1, 1 - cos, 0.0)
    negative = ops.where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduced(positive + negative, reduction, size_average, reduce)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise
    p-distance; with swap, d(anchor, negative) is min'ed with d(positive,
    negative)."""
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same "
            f"number of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, "
            f"and negative {dims[2]}D inputs"
        )
    distance_positive = pairwise_distance(anchor, positive, p, eps)
    distance_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        distance_swap = pairwise_distance(positive, negative, p, eps)
        distance_negative = ops.minimum(distance_negative, distance_swap)
    loss = (margin + distance_positive - distance_negative).clamp_min(0)
    return _reduced(loss, reduction, size_average, reduce)


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: sum over j != y of max(0, margin - x[y] + x[j]) ** p
    / C (MultiMarginLossBackward0)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return ops.multi_margin_loss(input, target, p, margin, weight, get_enum(reduction))


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss: sum over target j and non-target k of
    max(0, 1 - x[j] + x[k]) / C (MultilabelMarginLossBackward0)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    return ops.multilabel_margin_loss(input, target, get_enum(reduction))


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """triplet_margin_loss with any distance (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same "
            f"number of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, "
            f"and negative {dims[2]}D inputs"
        )
    distance = pairwise_distance if distance_function is None else distance_function
    distance_positive = distance(anchor, positive)
    distance_negative = distance(anchor, negative)
    if swap:
        distance_negative = ops.minimum(distance_negative, distance(positive, negative))
    loss = (margin + distance_positive - distance_negative).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss
