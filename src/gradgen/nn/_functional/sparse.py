"""torch.nn.functional's embedding helpers over operators of the sparse family:
embedding_bag, and the max_norm renormalisation embedding and embedding_bag share."""

from __future__ import annotations

import warnings

import numpy as np

from gradgen.composites._common import BATCHED, unbatched
from gradgen.generated import ops
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor
from gradgen.variable_type_utils import copy_into, increment_version

__all__ = ["embedding_bag"]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _no_grad_embedding_renorm_(
    weight: Tensor, input: Tensor, max_norm: float, norm_type: float
) -> None:
    """Scale, in place and outside autograd, the rows of `weight` that `input` picks and
    whose norm exceeds max_norm, to norm max_norm (PyTorch's embedding_renorm_).
    Under vmap, each example of a batched weight by its own rows; a weight that is not
    batched cannot take the rows of a batched input (PyTorch's error)."""
    if not (unbatched(input) and unbatched(weight)):
        if unbatched(weight):
            raise RuntimeError(
                "vmap: aten::embedding_renorm_(self, *extra_args) is not possible "
                "because there exists a Tensor `other` in extra_args that has more "
                "elements than `self`. This happened due to `other` being vmapped over "
                f"but `self` not being vmapped over at level {input._level}. Please "  # type: ignore[attr-defined]
                "try to use out-of-place operators instead of aten::embedding_renorm_. "
                "If said operator is being called inside the PyTorch framework, please "
                "file a bug report instead."
            )
        assert BATCHED.per_example is not None  # a BatchedTensor: gradgen.func loaded
        BATCHED.per_example(
            "embedding_renorm_",
            lambda w, i: _no_grad_embedding_renorm_(w, i, max_norm, norm_type),
            (weight, input),
        )
        return
    with no_grad():
        rows = np.unique(input._data.reshape(-1))
        if rows.size == 0:
            return
        if rows.min() < 0 or rows.max() >= weight.shape[0]:
            raise IndexError("index out of range in self")
        data = weight._data.copy()
        picked = data[rows]
        norms = np.linalg.norm(picked.reshape(rows.size, -1), ord=norm_type, axis=1)
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        data[rows] = picked * scale.reshape((-1,) + (1,) * (picked.ndim - 1))
        copy_into(weight, data)
        increment_version(weight)


def _bag_layout(
    input: Tensor,
    offsets: Tensor | None,
    per_sample_weights: Tensor | None,
    include_last_offset: bool,
) -> tuple[Tensor, Tensor, Tensor | None, bool]:
    """1-D indices with their offsets: a 2-D input is one bag per row (offsets must
    then be None)."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        rows, length = int(input.shape[0]), int(input.shape[1])
        starts = np.arange(0, rows * length, max(length, 1), dtype=np.int64)
        starts = starts.astype(input._data.dtype)
        flat_weights = None
        if per_sample_weights is not None:
            flat_weights = per_sample_weights.reshape(-1)
        return input.reshape(-1), Tensor(starts[:rows]), flat_weights, False
    if input.dim() != 1:
        raise ValueError(
            "input has to be 1D or 2D Tensor, but got Tensor of dimension "
            f"{input.dim()}"
        )
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    return input, offsets, per_sample_weights, include_last_offset


def _mode_number(mode: str, scale_grad_by_freq: bool, sparse: bool) -> int:
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError(
            "max mode does not support scaling the gradient by the frequency"
        )
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    return _MODES[mode]


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of embedding rows: the bags are the rows of a
    2-D input, or the runs of a 1-D input that `offsets` start. per_sample_weights
    (sum mode) weigh each row; padding_idx's rows are left out; max_norm
    renormalises the rows used, in place."""
    if weight.dtype.name == "int64" and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape!r}) is "
            f"not None, then it must have the same shape as the input "
            f"({input.shape!r})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    input, offsets, per_sample_weights, include_last_offset = _bag_layout(
        input, offsets, per_sample_weights, include_last_offset
    )
    mode_number = _mode_number(mode, scale_grad_by_freq, sparse)
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is "
            f"only supported for mode='sum' (got mode='{mode}'). Please open a "
            "feature request on GitHub."
        )
    output, _, _, _ = ops.embedding_bag(
        weight,
        input,
        offsets,
        scale_grad_by_freq,
        mode_number,
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )
    return output
