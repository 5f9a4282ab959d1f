"""Operator-table lines of the sparse family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

from .common import Line, _f


def _embedding_bag(lib: Any, w: Any, psw: Any) -> Any:
    """The three modes (sum with per_sample_weights, mean, max) over bags of
    [3, 1, 3], [], [0, 4, 1, 1]."""
    bag = _f("embedding_bag")(lib)
    indices, offsets = lib.tensor([3, 1, 3, 0, 4, 1, 1]), lib.tensor([0, 3, 3])
    total = bag(w, indices, offsets, False, 0, False, psw * psw)[0]
    mean = bag(w, indices, offsets, False, 1)[0]
    largest = bag(w * w, indices, offsets, False, 2)[0]
    return total + mean * largest


def _embedding_bag_padding_idx(lib: Any, w: Any, psw: Any) -> Any:
    """padding_idx 1 left out of sums and means; include_last_offset (scale_grad_by_freq
    is in tests/nn/test_embedding.py: its gradient is not the derivative)."""
    bag = _f("embedding_bag")(lib)
    indices, offsets = lib.tensor([3, 1, 3, 0, 4, 1, 1]), lib.tensor([0, 2, 3, 7])
    total = bag(w, indices, offsets, False, 0, False, psw * psw, True, 1)[0]
    mean = bag(w, indices, offsets, False, 1, False, None, True, -4)[0]
    largest = bag(w, indices, offsets, False, 2, False, None, True, 1)[0]
    return total * mean + largest


LINES: dict[str, Line] = {
    "embedding": Line(
        lambda lib, w: _f("embedding")(lib)(w, lib.tensor([[0, 2], [3, 0]]), 1) * w[0],
        ((4, 3),),
    ),
    "embedding_backward": Line(
        lambda lib, g: _f("embedding_backward")(lib)(
            g * g, lib.tensor([[0, 1], [3, 1]]), 5, 1, False, False
        ),
        ((2, 2, 3),),
    ),
    # scale_grad_by_freq=True is in tests/ops/test_sparse.py: PyTorch's double backward
    # ignores it, so gradients against torch only agree without it.
    "embedding_dense_backward": Line(
        lambda lib, g: _f("embedding_dense_backward")(lib)(
            g * g, lib.tensor([[0, 1], [3, 1]]), 5, 3, False
        ),
        ((2, 2, 3),),
    ),
    "embedding_bag": Line(_embedding_bag, ((5, 3), (7,))),
    "embedding_bag.padding_idx": Line(_embedding_bag_padding_idx, ((5, 3), (7,))),
    "one_hot": Line(
        lambda lib, a: a * _f("one_hot")(lib)(lib.tensor([0, 2, 1]), 3), ((3, 3),)
    ),
}
