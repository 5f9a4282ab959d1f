"""Composites of the loss family: nll_loss (any rank), cross_entropy, l1_loss, kl_div."""

from __future__ import annotations

from ..dtypes import Reduction, spelling
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)
from ._common import BATCHED, unbatched
from .shape import reshape as _reshape

__all__ = [
    "nll_loss",
    "nll_loss2d",
    "nll_loss_nd",
    "cross_entropy_loss",
    "l1_loss",
    "kl_div",
    "multilabel_margin_loss",
]


def nll_loss(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = Reduction.MEAN,
    ignore_index: int = -100,
) -> Tensor:
    """The loss output of nll_loss_forward."""
    return ops.nll_loss_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss2d(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = Reduction.MEAN,
    ignore_index: int = -100,
) -> Tensor:
    """The loss output of nll_loss2d_forward."""
    return ops.nll_loss2d_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss_nd(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = Reduction.MEAN,
    ignore_index: int = -100,
) -> Tensor:
    """nll_loss for inputs of any rank >= 1, class dimension 1 (PyTorch's nll_loss_nd:
    (C,) and (N, C) go to nll_loss, the rest to nll_loss2d)."""
    ndim = self.dim()
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    # PyTorch reads size 0 for the batch of a 0-d target.
    target_batch = target.shape[0] if target.dim() > 0 else 0
    if ndim != 1 and self.shape[0] != target_batch:
        raise ValueError(
            f"Expected input batch_size ({self.shape[0]}) to match target batch_size "
            f"({target_batch})."
        )
    if ndim in (1, 2):
        return ops.nll_loss(self, target, weight, reduction, ignore_index)
    if ndim == 4:
        return ops.nll_loss2d(self, target, weight, reduction, ignore_index)
    n, c = self.shape[0], self.shape[1]
    out_size = (n,) + tuple(self.shape[2:])
    if tuple(target.shape[1:]) != tuple(self.shape[2:]):
        raise RuntimeError(
            f"Expected target size {list(out_size)}, got {list(target.shape)}"
        )
    # PyTorch: contiguous() then view(). gradgen's contiguous() clones keeping a
    # transposed layout, which view() cannot take: reshape instead (the same for a
    # contiguous input; UnsafeViewBackward0 <- CloneBackward0 for another).
    input_ = _reshape(self, (n, c, 1, -1) if self.numel() > 0 else (n, c, 0, 0))
    target_ = _reshape(target, (n, 1, -1) if target.numel() > 0 else (n, 0, 0))
    out = ops.nll_loss2d(input_, target_, weight, reduction, ignore_index)
    if reduction != Reduction.NONE:
        return out
    return out.view(out_size)


def cross_entropy_loss(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = Reduction.MEAN,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class dimension, then nll_loss_nd; or, for a target of
    class probabilities (the input's shape), -sum(target * log_softmax(input))
    (PyTorch's cross_entropy_loss, with its label smoothing)."""
    if self.__class__ is not Tensor and BATCHED.cross_entropy_loss is not None:
        result = BATCHED.cross_entropy_loss(  # inside vmap
            self, target, weight, reduction, ignore_index, label_smoothing
        )
        if result is not NotImplemented:
            return result  # type: ignore[no-any-return]
    if tuple(self.shape) == tuple(target.shape):
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                + spelling(target).scalar_type
            )
        if ignore_index >= 0:
            raise RuntimeError(
                "ignore_index is not supported for floating point target"
            )
        return _cross_entropy_loss_prob_target(
            self, target, weight, reduction, label_smoothing
        )
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        return _cross_entropy_loss_label_smoothing(
            self, target, weight, reduction, ignore_index, label_smoothing
        )
    class_dim = 0 if self.dim() == 1 else 1
    log_probabilities = self.log_softmax(class_dim)
    return ops.nll_loss_nd(log_probabilities, target, weight, reduction, ignore_index)


def _check_label_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}"
        )


def _class_weight(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """The class weights viewed to broadcast along `class_dim` of an ndim-d input."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(tuple(shape))


def _cross_entropy_loss_prob_target(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    label_smoothing: float,
) -> Tensor:
    class_dim = 0 if self.dim() == 1 else 1
    n_classes = self.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} "
            "classes or no classes but got weight tensor of shape: "
            f"{list(weight.shape)}"
        )
    input = self.log_softmax(class_dim)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    terms = input * target
    if weight is not None:
        terms = terms * _class_weight(weight, input.dim(), 1)
    if reduction == Reduction.MEAN:
        if input.numel() == 0:
            return -terms.sum() * float("nan")
        return -terms.sum() * (1.0 / (input.numel() // n_classes))  # type: ignore[no-any-return]
    if reduction == Reduction.SUM:
        return -terms.sum()
    if reduction == Reduction.NONE:
        return -terms.sum(class_dim)
    raise RuntimeError(
        f"Invalid reduction type encountered in cross_entropy: {reduction}"
    )


def _cross_entropy_loss_label_smoothing(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    label_smoothing: float,
) -> Tensor:
    """(1 - s) * nll_loss + s / C * (the loss against uniform targets), ignored targets
    contributing nothing: masked_fill'ed to 0, as PyTorch does (so a mean over no
    target is 0 / 0, nan, with gradient 0, not the nan a 0/1 factor would pass on).
    By tensor operations (not the target's array), so that under vmap each example
    counts its own targets, with PyTorch's errors where torch.func refuses."""
    class_dim = 0 if self.dim() == 1 else 1
    input = self.log_softmax(class_dim)
    nll = ops.nll_loss_nd(input, target, weight, reduction, ignore_index)
    n_classes = input.shape[class_dim]
    if weight is not None:
        smooth_loss = -(input * _class_weight(weight, input.dim(), class_dim)).sum(
            class_dim
        )
    else:
        smooth_loss = -input.sum(class_dim)
    ignored = target == ignore_index
    if unbatched(smooth_loss) and not unbatched(ignored):  # PyTorch's masked_fill_
        raise RuntimeError(_INPLACE_BATCHED_OTHER)
    smooth_loss = smooth_loss.masked_fill(ignored, 0.0)
    if reduction == Reduction.MEAN:
        if weight is None:
            denominator = ignored.logical_not().sum()
        else:
            if unbatched(weight) and not unbatched(ignored):  # PyTorch's masked_select
                raise RuntimeError(_MASKED_SELECT_BATCHED_MASK)
            # the weights of the targets counted (an ignored one's index replaced)
            classes = target.masked_fill(ignored, 0).reshape(-1)
            counted = weight.index_select(0, classes).masked_fill(
                ignored.reshape(-1), 0
            )
            denominator = counted.sum()
        ret = smooth_loss.sum() / denominator
    elif reduction == Reduction.SUM:
        ret = smooth_loss.sum()
    elif reduction == Reduction.NONE:
        ret = smooth_loss
    else:
        raise RuntimeError(
            f"Invalid reduction type encountered in cross_entropy: {reduction}"
        )
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)  # type: ignore[no-any-return]


_INPLACE_BATCHED_OTHER = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there "
    "exists a Tensor `other` in extra_args that has more elements than `self`. "
    "This happened due to `other` being vmapped over but `self` not being "
    "vmapped over in a vmap. Please try to use out-of-place operators instead "
    "of inplace arithmetic. If said operator is being called inside the "
    "PyTorch framework, please file a bug report instead."
)
_MASKED_SELECT_BATCHED_MASK = (
    "vmap: Attempted to vmap over `mask` in gradgen.masked_select(self, mask) "
    "We cannot support this because for each batch this would return a "
    "differently shaped Tensor. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues if you need this feature."
)


def l1_loss(self: Tensor, target: Tensor, reduction: int = Reduction.MEAN) -> Tensor:
    """|self - target|, averaged, summed or unreduced (PyTorch's l1_loss: the nodes
    are SubBackward0, AbsBackward0 and MeanBackward0 or SumBackward0)."""
    loss = (self - target).abs()
    if reduction == Reduction.MEAN:
        return loss.mean()
    if reduction == Reduction.SUM:
        return loss.sum()
    return loss


def kl_div(
    self: Tensor,
    target: Tensor,
    reduction: int = Reduction.MEAN,
    log_target: bool = False,
) -> Tensor:
    """The pointwise KL divergence of log-probabilities `self` from `target`:
    exp(target) * (target - self) for log_target, else xlogy(target, target) -
    target * self (0 * log 0 taken as 0), then reduced."""
    if self.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not self.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        output = target.exp() * (target - self)
    else:
        # xlogy(target, target), which gradgen lacks: where(target == 0, 0, t * log t).
        xlogy = ops.where(target == 0, 0.0, target * target.log())
        output = xlogy - target * self
    if reduction == Reduction.MEAN:
        return output.mean()
    if reduction == Reduction.SUM:
        return output.sum()
    return output


def multilabel_margin_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    """The loss of multilabel_margin_loss_forward (MultilabelMarginLossBackward0)."""
    return ops.multilabel_margin_loss_forward(self, target, reduction)[0]
