"""torch.nn.AdaptiveLogSoftmaxWithLoss: the adaptive softmax (a head over the most
frequent classes plus one entry per cluster of rarer classes, each cluster with its
own low-rank projection), as a composite of Linear layers and operators."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradgen.composites._common import unbatched
from gradgen.dtypes import int64
from gradgen.factories import tensor
from gradgen.generated import ops
from gradgen.tensor import Tensor

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _check_cutoffs(cutoffs: list[Any], n_classes: int) -> None:
    if len(cutoffs) == 0:
        raise ValueError("cutoffs should be a sequence of length larger than 0")
    if (
        cutoffs != sorted(cutoffs)
        or min(cutoffs) <= 0
        or max(cutoffs) > n_classes - 1
        or len(set(cutoffs)) != len(cutoffs)
        or any(int(c) != c for c in cutoffs)
    ):
        raise ValueError(
            "cutoffs should be a sequence of unique, positive integers sorted in an "
            "increasing order, where each value is between 1 and n_classes-1"
        )


def _check_shapes(input: Tensor, target: Tensor) -> None:
    """PyTorch's checks: a 1-D target with a 2-D input of the same batch size, or a
    0-D target with a 1-D input."""
    if target.dim() == 1:
        if input.size(0) != target.size(0):
            raise RuntimeError(
                "Input and target should have the same size in the batch dimension."
            )
        if input.dim() != 2:
            raise RuntimeError(
                "1D target tensor expects 2D input tensors, but found inputs with "
                f"size {input.size()}"
            )
    elif target.dim() == 0:
        if input.dim() != 1:
            raise RuntimeError(
                "0D target tensor expects 1D input tensors, but found inputs with "
                f"size {input.size()}"
            )
    else:
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported"
        )


class AdaptiveLogSoftmaxWithLoss(Module):
    """Classes below cutoffs[0] are scored by the head directly; the classes of
    cluster i (cutoffs[i] up to the next cutoff, or n_classes) by the head's entry
    for the cluster plus a log-softmax over the cluster, computed from a projection
    to in_features // div_value^(i+1) features. forward gives each row's target
    log-probability and their negative mean."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        _check_cutoffs(cutoffs, n_classes)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, dtype=dtype),
                    Linear(hidden, size, bias=False, dtype=dtype),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:  # type: ignore[attr-defined]
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        _check_shapes(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if not unbatched(target):  # PyTorch picks each cluster's rows by nonzero
            raise RuntimeError(
                "vmap: We do not support batching operators that can output dynamic "
                "shape. Attempted to vmap over aten::nonzero. Please file an issue at "
                "https://github.com/pytorch/pytorch/issues if you need this feature."
            )
        labels = np.asarray(target.detach()._data)
        self._check_targets(labels)
        head_index = labels.copy()  # the head's column each row reads
        output = input.new_zeros(labels.shape[0])
        bounds = self.cutoffs
        for i in range(self.n_clusters):
            rows = np.flatnonzero((labels >= bounds[i]) & (labels < bounds[i + 1]))
            if rows.size == 0:
                continue
            head_index[rows] = self.shortlist_size + i
            index = tensor(rows, dtype=int64)
            cluster = F.log_softmax(self.tail[i](input.index_select(0, index)), dim=1)
            local = tensor(labels[rows] - bounds[i], dtype=int64).unsqueeze(1)
            output = ops.index_copy(
                output, 0, index, cluster.gather(1, local).squeeze(1)
            )
        head = F.log_softmax(self.head(input), dim=1)
        columns = tensor(head_index, dtype=int64).unsqueeze(1)
        output = output + head.gather(1, columns).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _check_targets(self, labels: np.ndarray) -> None:
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in "
                f"range [{labels.min()}, {labels.max()}] were found. "
            )

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """log-probabilities of all n_classes from the head's output."""
        head = F.log_softmax(head_output, dim=1)
        pieces = [head.narrow(1, 0, self.shortlist_size)]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster + head.narrow(1, self.shortlist_size + i, 1))
        return ops.cat(pieces, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """log-probabilities of every class for each row of `input`."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row (the head's argmax where it is a
        shortlist class, else the argmax over all classes)."""
        head_output = self.head(input)
        output = ops.argmax(head_output, dim=1)
        if not unbatched(output):  # vmap's data-dependent control flow error
            bool((output >= self.shortlist_size).any())
        outside = np.flatnonzero(np.asarray(output._data) >= self.shortlist_size)
        if outside.size == 0:
            return output
        index = tensor(outside, dtype=int64)
        full = self._get_full_log_prob(
            input.index_select(0, index), head_output.index_select(0, index)
        )
        return ops.index_copy(output, 0, index, ops.argmax(full, dim=1))
