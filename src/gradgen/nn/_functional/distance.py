"""torch.nn.functional's distances: cosine_similarity, pairwise_distance (and the
p-norm along a dimension that they and normalize use)."""

from __future__ import annotations

import math

import numpy as np

from gradgen.generated import ops
from gradgen.numpy_kernels import broadcast_shape_error
from gradgen.composites._common import unbatched
from gradgen.tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def _vector_norm(input: Tensor, p: float, dim: int) -> Tensor:
    """The p-norm of `input` along `dim`, kept as a dimension of size 1. A zero norm
    gets a zero gradient (not the 0 * inf of pow's derivative), as PyTorch's norm
    backward gives."""
    magnitude = input.abs()
    if p == math.inf:
        return magnitude.amax(dim, True)
    if p == -math.inf:
        return magnitude.amin(dim, True)
    if p == 0:
        count = (magnitude != 0).sum(dim, True)
        return count.to(magnitude.dtype)
    if p == 1:
        return magnitude.sum(dim, True)
    total = magnitude.pow(p).sum(dim, True)
    positive = Tensor(total._data > 0) if unbatched(total) else total > 0
    safe = ops.where(positive, total, 1.0)
    return ops.where(positive, safe.pow(1.0 / p), 0.0)


def _expanded(x1: Tensor, x2: Tensor) -> tuple[Tensor, Tensor]:
    """Both tensors expanded to their broadcast shape."""
    try:
        shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    except ValueError:
        raise broadcast_shape_error(tuple(x1.shape), tuple(x2.shape)) from None
    return x1.expand(shape), x2.expand(shape)


def cosine_similarity(
    x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8
) -> Tensor:
    """sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along `dim` (the inputs
    broadcast first), as ATen computes it: each input divided by its norm."""
    x1, x2 = _expanded(x1, x2)
    norm1 = _vector_norm(x1, 2, dim).clamp_min(eps)
    norm2 = _vector_norm(x2, 2, dim).clamp_min(eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """||x1 - x2 + eps||_p along the last dimension."""
    output_dim = max(x1.dim(), x2.dim())
    difference = x1 - x2 + eps
    if output_dim == 0:
        return difference.abs()
    norm = _vector_norm(difference, p, -1)
    return norm if keepdim else norm.squeeze(-1)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between every pair of rows of a 2-D input, the pairs
    (i, j) with i < j in row-major order (PdistBackward0)."""
    return ops.pdist(input, p)
