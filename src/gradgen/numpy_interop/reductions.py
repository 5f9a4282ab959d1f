"""numpy reductions (sum, mean, prod, max/min, argmax/argmin, var/std, cumulative) as gradgen operators."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..generated import ops
from ..tensor import Tensor
from ._registry import (
    _NO_VALUE,
    _axes,
    _axis,
    _dtype,
    _flat,
    _implements,
    _keepdims,
    _refuse,
    _tensor,
)

# -- reductions --------------------------------------------------------------------------


@_implements(np.sum, operators=("sum",))
def _sum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: Any = _NO_VALUE,
    initial: Any = _NO_VALUE,
    where: Any = _NO_VALUE,
) -> Tensor:
    _refuse("sum", out=out, initial=initial, where=where)
    self = _tensor(a)
    if axis is None and not _keepdims(keepdims):
        return ops.sum(self, dtype=_dtype(dtype))  # the full reduction, as torch.sum(t)
    dim = None if axis is None else _axes(axis, self.ndim)
    return ops.sum(self, dim, _keepdims(keepdims), dtype=_dtype(dtype))


@_implements(np.mean, operators=("mean",))
def _mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: Any = _NO_VALUE,
    *,
    where: Any = _NO_VALUE,
) -> Tensor:
    _refuse("mean", out=out, where=where)
    self = _tensor(a)
    if axis is None and not _keepdims(keepdims):
        return ops.mean(
            self, dtype=_dtype(dtype)
        )  # the full reduction, as torch.mean(t)
    dim = None if axis is None else _axes(axis, self.ndim)
    return ops.mean(self, dim, _keepdims(keepdims), dtype=_dtype(dtype))


@_implements(np.prod, operators=("prod",))
def _prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: Any = _NO_VALUE,
    initial: Any = _NO_VALUE,
    where: Any = _NO_VALUE,
) -> Tensor:
    _refuse("prod", out=out, initial=initial, where=where)
    self = _tensor(a)
    keep = _keepdims(keepdims)
    if axis is None:
        result = ops.prod(self, dtype=_dtype(dtype))
        return ops.reshape(result, (1,) * self.ndim) if keep else result
    # gradgen's prod reduces one dim at a time: the highest first, so the others keep
    # their numbers.
    result = self
    for dim in sorted(_axes(axis, self.ndim), reverse=True):
        result = ops.prod(result, dim, keep, dtype=_dtype(dtype))
    return result


def _extremum(name: str, operator_name: str) -> Callable[..., Tensor]:
    def translation(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: Any = _NO_VALUE,
        initial: Any = _NO_VALUE,
        where: Any = _NO_VALUE,
    ) -> Tensor:
        _refuse(name, out=out, initial=initial, where=where)
        self = _tensor(a)
        dim = () if axis is None else _axes(axis, self.ndim)
        return getattr(ops, operator_name)(self, dim, _keepdims(keepdims))

    return translation


_implements(np.max, np.amax, operators=("amax",))(_extremum("max", "amax"))
_implements(np.min, np.amin, operators=("amin",))(_extremum("min", "amin"))


def _argextremum(name: str, operator_name: str) -> Callable[..., Tensor]:
    def translation(
        a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = _NO_VALUE
    ) -> Tensor:
        _refuse(name, out=out)
        self = _tensor(a)
        dim = None if axis is None else _axis(axis, self.ndim)
        return getattr(ops, operator_name)(self, dim, _keepdims(keepdims))

    return translation


_implements(np.argmax, operators=("argmax",))(_argextremum("argmax", "argmax"))
_implements(np.argmin, operators=("argmin",))(_argextremum("argmin", "argmin"))


def _moment(name: str, operator_name: str) -> Callable[..., Tensor]:
    def translation(
        a: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: Any = 0,
        keepdims: Any = _NO_VALUE,
        *,
        where: Any = _NO_VALUE,
        mean: Any = _NO_VALUE,
        correction: Any = _NO_VALUE,
    ) -> Tensor:
        _refuse(name, out=out, where=where, mean=mean)
        if correction is not _NO_VALUE:
            if ddof != 0:
                raise ValueError(
                    "ddof and correction can't be provided simultaneously."
                )
            ddof = correction
        self = _tensor(a)
        if dtype is not None:
            self = self.to(_dtype(dtype))  # numpy computes in `dtype`
        dim = None if axis is None else _axes(axis, self.ndim)
        function = getattr(ops, operator_name)
        return function(self, dim, correction=ddof, keepdim=_keepdims(keepdims))

    return translation


_implements(np.var, operators=("var",))(_moment("var", "var"))
_implements(np.std, operators=("std",))(_moment("std", "std"))


def _cumulative(name: str, operator_name: str) -> Callable[..., Tensor]:
    def translation(
        a: Any, axis: Any = None, dtype: Any = None, out: Any = None
    ) -> Tensor:
        _refuse(name, out=out)
        self = _tensor(a)
        if axis is None:  # numpy runs over the flattened array
            self, axis = _flat(self), 0
        function = getattr(ops, operator_name)
        return function(self, _axis(axis, self.ndim), dtype=_dtype(dtype))

    return translation


_implements(np.cumsum, operators=("cumsum",))(_cumulative("cumsum", "cumsum"))
_implements(np.cumprod, operators=("cumprod",))(_cumulative("cumprod", "cumprod"))
