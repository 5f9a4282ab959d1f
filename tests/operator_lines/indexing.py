"""Operator-table lines of the indexing family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

from .common import Line, _aten, _mask


def _c(lib: Any) -> Any:
    """A constant (2, 3) float64 tensor, fresh each call."""
    return lib.arange(1.0, 7.0, dtype=lib.float64).reshape(2, 3)


def _index_reduce(lib: Any, a: Any, s: Any) -> Any:
    """Every reduction of index_reduce, with and without self, an index repeated."""
    total = 0
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            total = total + lib.index_reduce(
                a,
                1,
                lib.tensor([0, 2, 0, 2]),
                s * 1.5,
                reduce,
                include_self=include_self,
            )
    return total


def _scatter_reduce(lib: Any, a: Any, s: Any) -> Any:
    """Every reduction, with and without self, duplicates in the index (a position
    scattered twice) and a position no index names."""
    index = lib.tensor([[0, 0, 2], [1, 0, 1]])
    total = 0
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            total = total + lib.scatter_reduce(
                a, 1, index, s * 1.5, reduce, include_self=include_self
            )
    return total + a.scatter_reduce(0, lib.tensor([[1, 0, 1]]), s[:1], "sum")


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
    "scatter_reduce.two": Line(_scatter_reduce, ((2, 3), (2, 3))),
    "index_copy": Line(
        lambda lib, a, s: lib.index_copy(a, 1, lib.tensor([2, 0]), s * s)
        + a.index_copy(0, lib.tensor([1]), a[:1] * 2.0),
        ((2, 3), (2, 2)),
    ),
    "index_fill.int_Scalar": Line(
        lambda lib, a: lib.index_fill(a, 1, lib.tensor([2, 0, -1]), 1.5) * a,
        ((2, 3),),
    ),
    "index_fill.int_Tensor": Line(
        lambda lib, a, v: a.index_fill(0, lib.tensor([1]), v * v) * a
        + lib.index_fill(a, -1, lib.tensor([0, 2]), v),
        ((2, 3), ()),
    ),
    "masked_scatter": Line(
        lambda lib, a, s: lib.masked_scatter(a, _mask(lib), s * s) * a
        + a[0].masked_scatter(lib.tensor([[True], [False]]), s[:3]),
        ((2, 3), (5,)),
    ),
    "masked_select": Line(
        lambda lib, a: lib.masked_select(a, _mask(lib)) * a.masked_select(_mask(lib))
        + a[0].masked_select(lib.tensor([[True], [False]])).sum(),
        ((2, 3),),
    ),
    "take": Line(
        lambda lib, a: lib.take(a, lib.tensor([[5, 0], [-1, 5]]))
        * a.take(lib.tensor(2)),
        ((2, 3),),
    ),
    "take_along_dim": Line(
        lambda lib, a: lib.take_along_dim(a, lib.tensor([[2], [0]]), 1) * a
        + a.take_along_dim(lib.tensor([5, 0, 5])).sum(),
        ((2, 3),),
    ),
    "put": Line(
        lambda lib, a, s: lib.put(a, lib.tensor([4, 0, -1]), s * s)
        + a.put(lib.tensor([[1, 1]]), s[:2], accumulate=True) * a,
        ((2, 3), (3,)),
    ),
    "scatter_.src": Line(
        lambda lib, a, s: (a * 1.0).scatter_(1, lib.tensor([[2, 0], [1, 2]]), s * s),
        ((2, 3), (2, 2)),
    ),
    "scatter_.value": Line(
        lambda lib, a: (a * a).scatter_(0, lib.tensor([[1, 0, 1]]), 2.5), ((2, 3),)
    ),
    "scatter_add_": Line(
        lambda lib, a, s: (a * a).scatter_add_(
            0, lib.tensor([[1, 0, 1], [1, 1, 0]]), s
        ),
        ((2, 3), (2, 3)),
    ),
    "scatter_reduce_.two": Line(
        lambda lib, a, s: (a * 1.0).scatter_reduce_(
            1, lib.tensor([[0, 0, 2], [1, 1, 1]]), s * s, "mean", include_self=False
        ),
        ((2, 3), (2, 3)),
    ),
    "index_add_": Line(
        lambda lib, a, s: (a * a).index_add_(1, lib.tensor([0, 2, 0]), s, alpha=2.0),
        ((2, 3), (2, 3)),
    ),
    "index_copy_": Line(
        lambda lib, a, s: (a * 1.0).index_copy_(1, lib.tensor([2, 0]), s * s),
        ((2, 3), (2, 2)),
    ),
    "index_fill_.int_Scalar": Line(
        lambda lib, a: (a * a).index_fill_(1, lib.tensor([1]), -1.0), ((2, 3),)
    ),
    "index_fill_.int_Tensor": Line(
        lambda lib, a, v: (a * 1.0).index_fill_(0, lib.tensor([1]), v * v),
        ((2, 3), ()),
    ),
    "masked_scatter_": Line(
        lambda lib, a, s: (a * 1.0).masked_scatter_(_mask(lib), s * s),
        ((2, 3), (4,)),
    ),
    "put_": Line(
        lambda lib, a, s: (a * a).put_(lib.tensor([4, 0, 4]), s, accumulate=True),
        ((2, 3), (3,)),
    ),
    "index_reduce": Line(_index_reduce, ((2, 3), (2, 4)), forward=False),
    "index_reduce_": Line(
        lambda lib, a, s: (a * 1.0).index_reduce_(
            0, lib.tensor([1, 1]), s * s, "prod", include_self=False
        ),
        ((2, 3), (2, 3)),
        forward=False,
    ),
    "masked_scatter_backward": Line(
        lambda lib, g: _aten(lib, "masked_scatter_backward")(g * 2.0, _mask(lib), [5])
        + _aten(lib, "masked_scatter_backward")(g, _mask(lib), [3]).sum(),
        ((2, 3),),
    ),
    "slice_scatter": Line(
        lambda lib, a, s: lib.slice_scatter(a, s * s, 1, 0, None, 2)
        + a.slice_scatter(s[:, :1], dim=-1, start=-1),
        ((2, 4), (2, 2)),
    ),
    "select_scatter": Line(
        lambda lib, a, s: lib.select_scatter(a, s * s, 0, -1) * a
        + a.select_scatter(s[:2], 1, 2),
        ((2, 3), (3,)),
    ),
    "diagonal_scatter": Line(
        lambda lib, a, s: lib.diagonal_scatter(a, s * s) * a
        + a.diagonal_scatter(s[:2], 1, 0, 1),
        ((3, 3), (3,)),
    ),
    "_unsafe_index.Tensor": Line(
        lambda lib, a: _aten(lib, "_unsafe_index")(a, [lib.tensor([2, 0, 2])]) * 2.0,
        ((3, 2),),
    ),
    "_unsafe_index_put": Line(
        lambda lib, a, b: _aten(lib, "_unsafe_index_put")(
            a, [lib.tensor([0, 2, 0])], b * b, True
        )
        + _aten(lib, "_unsafe_index_put")(a, [None, lib.tensor([1])], b[:, :1]),
        ((3, 2), (3, 2)),
    ),
    "_index_put_impl_": Line(
        lambda lib, a, b: _aten(lib, "_index_put_impl_")(
            a * 1.0, [lib.tensor([2, 0])], b * 2.0, True, False
        ),
        ((3, 2), (2,)),
        forward=False,
    ),
    # No derivative (as in PyTorch): the operators run on constants, times the input.
    "scatter.reduce": Line(
        lambda lib, a: a
        * lib.scatter(
            _c(lib), 1, lib.tensor([[0, 0], [2, 2]]), _c(lib), reduce="multiply"
        )
        + a * _c(lib).scatter(0, lib.tensor([[1, 1, 0]]), _c(lib), reduce="add"),
        ((2, 3),),
    ),
    "scatter.value_reduce": Line(
        lambda lib, a: a
        * _c(lib).scatter(0, lib.tensor([[1, 0, 1]]), 2.5, reduce="multiply"),
        ((2, 3),),
    ),
    "scatter_.reduce": Line(
        lambda lib, a: a
        * _c(lib).scatter_(1, lib.tensor([[2, 2], [0, 1]]), _c(lib), reduce="add"),
        ((2, 3),),
    ),
    "scatter_.value_reduce": Line(
        lambda lib, a: a
        * _c(lib).scatter_(1, lib.tensor([[2, 2]]), 3.0, reduce="multiply"),
        ((2, 3),),
    ),
}
