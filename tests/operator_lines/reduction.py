"""Operator-table lines of the reduction family of native_functions.yaml."""

from __future__ import annotations

from .common import Line

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
}
