"""Operator-table lines of the sparse family of native_functions.yaml."""

from __future__ import annotations

from .common import Line, _f

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
    "one_hot": Line(
        lambda lib, a: a * _f("one_hot")(lib)(lib.tensor([0, 2, 1]), 3), ((3, 3),)
    ),
}
