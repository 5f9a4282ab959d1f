"""Operator-table lines of the reduction family of native_functions.yaml."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .common import Line, _aten, _dispatcher


def _mode(lib: Any, a: Any) -> Any:
    """mode over rows with repeated values (read twice through index_select), so the
    most frequent value and its last occurrence decide."""
    repeated = a.index_select(1, lib.tensor([0, 1, 0, 2, 1, 0]))
    return lib.mode(repeated, 1, True).values * a.mode(0)[0]


def _pair(
    name: str, arguments: Callable[..., tuple[Any, ...]], keywords: Any = None
) -> Callable[..., Any]:
    """std_mean / var_mean: both outputs, joined into one differentiable result."""

    def line(lib: Any, a: Any) -> Any:
        first, second = getattr(lib, name)(*arguments(lib, a), **(keywords or {}))
        return first * 2.0 + second * first

    return line


def _segment_reductions(lib: Any, a: Any) -> Any:
    """segment_reduce with every reduction, by lengths and by offsets, along both
    axes (an empty segment where its value is finite)."""
    lengths = lib.tensor([[2, 0, 3, 1], [1, 1, 0, 4]])
    offsets = lib.tensor([[0, 2, 6], [0, 3, 6]])
    total = lib.segment_reduce(a, "sum", lengths=lengths, axis=1)
    for reduce in ("max", "min", "prod"):
        total = total + lib.segment_reduce(
            a, reduce, lengths=lengths, axis=1, initial=2.0
        )
    mean = lib.segment_reduce(a, "mean", offsets=offsets, axis=1)
    columns = lib.segment_reduce(a, "mean", lengths=lib.tensor([1, 1]), axis=0)
    return total.sum(-1, True) * mean + columns.sum()


LINES: dict[str, Line] = {
    "sum": Line(lambda lib, a: lib.sum(a) * a.sum(), ((3, 2),)),
    "sum.dim_IntList": Line(
        lambda lib, a: lib.sum(a, (0, -1), keepdim=True) * a.sum(1, keepdim=True),
        ((2, 3, 4),),
    ),
    "mean": Line(lambda lib, a: lib.mean(a) * a, ((3, 2),)),
    "mean.dim": Line(lambda lib, a: lib.mean(a, -1, True) * a.mean(0), ((3, 3),)),
    "prod": Line(lambda lib, a: lib.prod(a) * a, ((2, 3),), complex=True),
    "prod.dim_int": Line(
        lambda lib, a: lib.prod(a, 1, keepdim=True) * a.prod(-2), ((2, 3),)
    ),
    "max.dim": Line(
        lambda lib, a: lib.max(a, 1).values * a.max(0, keepdim=True)[0], ((3, 3),)
    ),
    "max": Line(lambda lib, a: lib.max(a) * a.max(), ((2, 3),)),
    "min.dim": Line(
        lambda lib, a: lib.min(a, -1, True).values * a.min(dim=0).values, ((3, 3),)
    ),
    "min": Line(lambda lib, a: lib.min(a) * a, ((2, 3),)),
    "amax": Line(
        lambda lib, a: lib.amax(a, (0, 2)) * a.amax(-1, keepdim=True), ((2, 3, 3),)
    ),
    "amin": Line(lambda lib, a: lib.amin(a) * a.amin(1), ((2, 3),)),
    "argmax": Line(
        lambda lib, a: a * lib.argmax(a, 1, keepdim=True) + a.argmax(), ((2, 3),)
    ),
    "argmin": Line(lambda lib, a: a * lib.argmin(a, 0) + a.argmin(), ((2, 3),)),
    "logsumexp": Line(
        lambda lib, a: lib.logsumexp(a, (0, 2), True) * a.logsumexp(0), ((2, 3, 3),)
    ),
    "var": Line(lambda lib, a: lib.var(a) * a.var(unbiased=False), ((2, 3),)),
    "var.dim": Line(lambda lib, a: lib.var(a, 1, False, True) * a, ((2, 3),)),
    "var.correction": Line(
        lambda lib, a: a.var((0, 1), correction=2, keepdim=True) + lib.var(a, 0),
        ((3, 2),),
        complex=True,
    ),
    "std": Line(lambda lib, a: lib.std(a) * a.std(False), ((2, 3),)),
    "std.dim": Line(lambda lib, a: lib.std(a, [0], keepdim=True) * a, ((2, 3),)),
    "std.correction": Line(
        lambda lib, a: a.std(1, correction=0) + lib.std(a, correction=1.5),
        ((2, 3),),
        complex=True,
    ),
    "cumsum": Line(lambda lib, a: lib.cumsum(a, 1) * a, ((2, 3),), complex=True),
    "cumprod": Line(lambda lib, a: lib.cumprod(a, 0) * 2.0, ((3, 2),), complex=True),
    "value_selecting_reduction_backward": Line(
        lambda lib, g: lib.value_selecting_reduction_backward(
            g, 1, lib.tensor([2, 0]), (2, 3), False
        )
        * 2.0,
        ((2,),),
        compare=False,  # not in torch's Python API
    ),
    # Methods only (gradgen.any and gradgen.all wait for a generator fix, see
    # native_functions.yaml).
    "any": Line(lambda lib, a: a * (a > 1.5).any() + a.any(), ((2, 3),)),
    "any.dim": Line(
        lambda lib, a: a * (a > 0).any(1, keepdim=True) + a * a.any(dim=0),
        ((2, 3),),
    ),
    "any.dims": Line(
        lambda lib, a: a * (a > 0).any((0,), True) + a * a.any(dim=None),
        ((2, 3),),
    ),
    "all": Line(lambda lib, a: a * (a > -1.5).all() + a.all(), ((2, 3),)),
    "all.dim": Line(
        lambda lib, a: a * (a > 0).all(1, keepdim=True) + a * a.all(dim=0),
        ((2, 3),),
    ),
    "all.dims": Line(
        lambda lib, a: a * (a > -1).all((0, 1), True) + a * a.all(dim=None),
        ((2, 3),),
    ),
    "allclose": Line(
        lambda lib, a, b: a * lib.allclose(a, a * 1.0) + b * a.allclose(b),
        ((2, 3), (2, 3)),
    ),
    "equal": Line(
        lambda lib, a, b: a * lib.equal(a, a * 1.0) + b * a.equal(b),
        ((2, 3), (2, 3)),
    ),
    "sort": Line(
        lambda lib, a: lib.sort(a, 1).values * a.sort(0, descending=True)[0],
        ((3, 3),),
    ),
    "sort.stable": Line(
        lambda lib, a: lib.sort(a, stable=True, dim=0).values * 2.0
        + a.sort(stable=False, descending=True)[0],
        ((3, 3),),
    ),
    "topk": Line(
        lambda lib, a: lib.topk(a, 2, 1).values * a.topk(2, 1, largest=False)[0],
        ((3, 4),),
    ),
    "logcumsumexp": Line(
        lambda lib, a: lib.logcumsumexp(a, 1) * a.logcumsumexp(0)
        + a[0, 0].logcumsumexp(0),
        ((3, 3),),
    ),
    "cummax": Line(lambda lib, a: lib.cummax(a, 1).values * a.cummax(0)[0], ((3, 3),)),
    "cummin": Line(
        lambda lib, a: lib.cummin(a, -1).values + a.cummin(0).values * a, ((3, 3),)
    ),
    "argsort": Line(
        lambda lib, a: a * lib.argsort(a, 1) + a.argsort(dim=0, descending=True),
        ((3, 3),),
    ),
    "argsort.stable": Line(
        lambda lib, a: a * lib.argsort(a, stable=True, dim=0)
        + a.argsort(stable=True, descending=True),
        ((3, 3),),
    ),
    "msort": Line(lambda lib, a: lib.msort(a) * a.msort(), ((3, 2),)),
    "kthvalue": Line(
        lambda lib, a: lib.kthvalue(a, 2, 1).values * a.kthvalue(1, 0, True)[0],
        ((3, 3),),
    ),
    "median": Line(lambda lib, a: lib.median(a) * a + a[:2, :2].median(), ((3, 3),)),
    "median.dim": Line(
        lambda lib, a: lib.median(a, 1, True).values + a.median(0)[0] * a,
        ((3, 4),),
    ),
    "nanmedian": Line(
        lambda lib, a: lib.nanmedian(a) * a + a[:2, :2].nanmedian(), ((3, 3),)
    ),
    "nanmedian.dim": Line(
        lambda lib, a: lib.nanmedian(a, 1, True).values + a.nanmedian(0)[0] * a,
        ((3, 4),),
    ),
    "mode": Line(_mode, ((2, 3),)),
    "aminmax": Line(
        lambda lib, a: lib.aminmax(a, dim=1).min * a.aminmax(dim=0, keepdim=True).max
        + a.aminmax().max,
        ((3, 3),),
    ),
    "nansum": Line(
        lambda lib, a: lib.nansum(a, 1) * a.nansum() + a.nansum((0, 1), True), ((2, 3),)
    ),
    "nanmean": Line(lambda lib, a: lib.nanmean(a, (0,), True) * a.nanmean(), ((2, 3),)),
    "std_mean": Line(_pair("std_mean", lambda lib, a: (a,)), ((2, 3),)),
    "std_mean.dim": Line(
        _pair("std_mean", lambda lib, a: (a, [1], False, True)), ((2, 3),)
    ),
    "std_mean.correction": Line(
        _pair("std_mean", lambda lib, a: (a, 0), {"correction": 0}), ((2, 3),)
    ),
    "var_mean": Line(_pair("var_mean", lambda lib, a: (a, False)), ((2, 3),)),
    "var_mean.dim": Line(
        _pair("var_mean", lambda lib, a: (a, (0, 1), True)), ((2, 3),)
    ),
    "var_mean.correction": Line(
        _pair("var_mean", lambda lib, a: (a, None), {"correction": 2, "keepdim": True}),
        ((2, 3),),
    ),
    "diff": Line(
        lambda lib, a, b: lib.diff(a, 2, 0, prepend=b, append=a[:1] * 2.0)
        + a.diff().sum(),
        ((3, 3), (1, 3)),
    ),
    "searchsorted.Tensor": Line(
        lambda lib, a: a
        * lib.searchsorted(lib.tensor([-1.0, 0.0, 1.0], dtype=lib.float64), a)
        + a * lib.searchsorted(a.sort().values, a.detach(), right=True),
        ((2, 3),),
    ),
    "searchsorted.Scalar": Line(
        lambda lib, a: a * lib.searchsorted(a.sort()[0], 0.5, side="right"), ((4,),)
    ),
    "bucketize.Tensor": Line(
        lambda lib, a: a
        * lib.bucketize(a, lib.tensor([-1.0, 0.0, 1.0], dtype=lib.float64), right=True),
        ((2, 3),),
    ),
    "bucketize.Scalar": Line(
        lambda lib, a: a * lib.bucketize(0.5, a.sort()[0], out_int32=True), ((4,),)
    ),
    "_unique2": Line(
        lambda lib, a: a
        * lib._unique2(lib.tensor([3, 1, 3, 2]), True, True, True)[1].sum(),
        ((4,),),
    ),
    "unique_dim": Line(
        lambda lib, a: a
        * _dispatcher(lib, "unique_dim")(
            lib.tensor([[3, 1], [0, 2], [3, 1]]), 0, True, True, False
        )[1],
        ((3,),),
    ),
    "unique_consecutive": Line(
        lambda lib, a: a
        * _dispatcher(lib, "unique_consecutive")(
            lib.tensor([3, 3, 1, 3]), True, True, None
        )[2].sum(),
        ((4,),),
    ),
    "nonzero": Line(
        lambda lib, a: a * lib.nonzero(a > 0).sum() + a.nonzero().sum(), ((2, 3),)
    ),
    "histc": Line(
        lambda lib, a: a * lib.histc(a, 4, -2, 2).sum() + a.histc(3), ((3,),)
    ),
    "bincount": Line(
        lambda lib, a: a * lib.bincount(lib.tensor([0, 2, 2]), minlength=4)
        + lib.tensor([1, 3]).bincount(lib.tensor([0.5, 2.0], dtype=lib.float64), 1),
        ((4,),),
    ),
    "count_nonzero.dim_IntList": Line(
        lambda lib, a: a * lib.count_nonzero(a > 0, [0, 1])
        + a * a.count_nonzero([1]).unsqueeze(1),
        ((2, 3),),
    ),
    "count_nonzero": Line(
        lambda lib, a: a * lib.count_nonzero(a > 0)
        + a * a.count_nonzero(dim=1).unsqueeze(1),
        ((2, 3),),
    ),
    "_unique": Line(
        lambda lib, a: a * lib._unique(lib.tensor([3, 1, 3, 2]), True, True)[1].sum(),
        ((4,),),
    ),
    "unique_dim_consecutive": Line(
        lambda lib, a: a
        * _aten(lib, "unique_dim_consecutive")(
            lib.tensor([[3, 3], [1, 1]]), 1, True, True
        )[2].sum(),
        ((4,),),
    ),
    "nonzero_numpy": Line(
        lambda lib, a: a * _aten(lib, "nonzero_numpy")(a > 0)[1].sum()
        + a * _aten(lib, "nonzero_numpy")(a)[0].sum(),
        ((2, 3),),
    ),
    "argwhere": Line(
        lambda lib, a: a * lib.argwhere(a > 0).sum() + a * a.argwhere().sum(), ((2, 3),)
    ),
    "cumsum_": Line(lambda lib, a: (a * a).cumsum_(1) * a, ((2, 3),)),
    "cumprod_": Line(
        lambda lib, a: (a * 1.0).cumprod_(-1, dtype=lib.float64), ((2, 3),)
    ),
    "quantile": Line(
        lambda lib, a, q: lib.quantile(a, q * 0.2 + 0.5, dim=1, keepdim=True)
        + a.quantile(q * 0.1 + 0.5).sum(),
        ((2, 5), (2,)),
    ),
    "quantile.scalar": Line(
        lambda lib, a: lib.quantile(a, 0.3) * a
        + a.quantile(0.6, 0, interpolation="midpoint").sum(),
        ((3, 4),),
    ),
    "nanquantile": Line(
        lambda lib, a, q: lib.nanquantile(a, q * 0.2 + 0.5, dim=0)
        + a.nanquantile(q[0] * 0.1 + 0.5, -1, True).sum(),
        ((3, 2), (2,)),
    ),
    "nanquantile.scalar": Line(
        lambda lib, a: lib.nanquantile(a, 0.75, 1, interpolation="lower") * a[:, 0],
        ((3, 4),),
    ),
    # PyTorch's entry has no forward formula.
    "segment_reduce": Line(_segment_reductions, ((2, 6),), forward=False),
}
