"""Operator-table lines of the indexing family of native_functions.yaml."""

from __future__ import annotations

from .common import Line, _mask

LINES: dict[str, Line] = {
    "index_select": Line(
        lambda lib, a: lib.index_select(a, 0, lib.tensor([2, 0, 2]))
        * a.index_select(1, lib.tensor([1, 1])),
        ((3, 2),),
    ),
    "index_select_backward": Line(
        lambda lib, g: lib.index_select_backward(g, (3, 2), 0, lib.tensor([2, 0, 2]))
        * 2.0,
        ((3, 2),),
        compare=False,  # not in torch's Python API
    ),
    "index_add": Line(
        lambda lib, a, s: lib.index_add(a, 1, lib.tensor([0, 2, 0]), s * s, alpha=1.5),
        ((2, 3), (2, 3)),
    ),
    "gather": Line(
        lambda lib, a: lib.gather(a, 1, lib.tensor([[0, 0, 2], [1, 0, 1]])) * a,
        ((2, 3),),
    ),
    "gather_backward": Line(
        lambda lib, g: lib.gather_backward(
            g,
            lib.zeros(2, 3, dtype=lib.float64),
            1,
            lib.tensor([[0, 2], [1, 1]]),
            False,
        )
        * 2.0,
        ((2, 2),),
        compare=False,  # not in torch's Python API
    ),
    "scatter.src": Line(
        lambda lib, a, s: lib.scatter(a, 1, lib.tensor([[2, 0], [1, 2]]), s * s),
        ((2, 3), (2, 2)),
    ),
    "scatter.value": Line(
        lambda lib, a: a.scatter(0, lib.tensor([[1, 0, 1]]), 2.5) * a, ((2, 3),)
    ),
    "scatter_add": Line(
        lambda lib, a, s: lib.scatter_add(a, 0, lib.tensor([[1, 0, 1], [1, 1, 0]]), s)
        * a,
        ((2, 3), (2, 3)),
    ),
    "masked_fill.Scalar": Line(
        lambda lib, a: lib.masked_fill(a, lib.tensor([[True], [False]]), 2.5) * a,
        ((2, 3),),
    ),
    "masked_fill.Tensor": Line(
        lambda lib, a, v: a.masked_fill(lib.tensor([True, False, True]), v * v) * a,
        ((2, 3), ()),
    ),
    "index.Tensor": Line(
        lambda lib, a: a[lib.tensor([2, 0, 2])]
        * a[:, lib.tensor([True, False, True])].sum(),
        ((3, 3),),
    ),
    "index_put": Line(
        lambda lib, a, b: lib.index_put(a, (lib.tensor([0, 2, 0]),), b * b, True),
        ((3, 2), (3, 2)),
    ),
    "index_put_": Line(
        lambda lib, a, b: (a * 1.0).index_put_((lib.tensor([2, 0]),), b * 2.0),
        ((3, 2), (2,)),
    ),
    "masked_fill_.Scalar": Line(
        lambda lib, a: (a * 1.0).masked_fill_(_mask(lib), 2.5) * a, ((2, 3),)
    ),
    "masked_fill_.Tensor": Line(
        lambda lib, a, v: (a * a).masked_fill_(_mask(lib), v * v) * a,
        ((2, 3), ()),
    ),
}
