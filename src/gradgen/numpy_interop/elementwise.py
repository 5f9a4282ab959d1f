"""numpy element-wise functions, products, sorting, masks, triangles and norms as gradgen operators."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes
from ..factories import tensor as _new_tensor
from ..generated import ops
from ..tensor import Tensor
from ._registry import (
    _NO_VALUE,
    _axes,
    _axis,
    _flat,
    _implements,
    _keepdims,
    _number_or_tensor,
    _refuse,
    _tensor,
)

# -- element-wise --------------------------------------------------------------------------


@_implements(np.where, operators=("where",))
def _where(condition: Any, x: Any = _NO_VALUE, y: Any = _NO_VALUE) -> Any:
    if x is _NO_VALUE and y is _NO_VALUE:
        return NotImplemented  # np.where(condition) is nonzero: no gradgen operator
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ValueError("either both or neither of x and y should be given")
    mask = _tensor(condition)
    if mask.dtype != dtypes.bool:
        mask = ops.ne(mask, 0)  # numpy takes any truth value
    return ops.where(mask, _number_or_tensor(x), _number_or_tensor(y))


@_implements(np.clip, operators=("clamp",))
def _clip(
    a: Any,
    a_min: Any = _NO_VALUE,
    a_max: Any = _NO_VALUE,
    out: Any = None,
    *,
    min: Any = _NO_VALUE,  # noqa: A002 - numpy's name
    max: Any = _NO_VALUE,  # noqa: A002 - numpy's name
    **kwargs: Any,
) -> Tensor:
    _refuse("clip", out=out, **kwargs)
    if a_min is not _NO_VALUE and min is not _NO_VALUE:
        raise ValueError(
            "Passed more than one argument for the lower bound: a_min and min"
        )
    if a_max is not _NO_VALUE and max is not _NO_VALUE:
        raise ValueError(
            "Passed more than one argument for the upper bound: a_max and max"
        )
    self = _tensor(a)
    low = a_min if a_min is not _NO_VALUE else min
    high = a_max if a_max is not _NO_VALUE else max
    low = None if low is _NO_VALUE else low
    high = None if high is _NO_VALUE else high
    if low is None and high is None:
        return ops.clone(self)
    bounds = [_number_or_tensor(b) if b is not None else None for b in (low, high)]
    if any(isinstance(b, Tensor) for b in bounds):
        # one clamp overload takes two tensor bounds: a number becomes one
        bounds = [
            (
                b
                if b is None or isinstance(b, Tensor)
                else _new_tensor(b, dtype=self.dtype)
            )
            for b in bounds
        ]
    return ops.clamp(self, bounds[0], bounds[1])


@_implements(np.round, np.around, operators=("round",))
def _round(a: Any, decimals: Any = 0, out: Any = None) -> Tensor:
    _refuse("round", out=out)
    self = _tensor(a)
    decimals = operator.index(decimals)
    return ops.round(self) if decimals == 0 else ops.round(self, decimals=decimals)


@_implements(np.real, operators=("real",))
def _real(val: Any) -> Tensor:
    return ops.real(_tensor(val))


@_implements(np.imag, operators=("imag",))
def _imag(val: Any) -> Tensor:
    return ops.imag(_tensor(val))


@_implements(np.angle, operators=("angle",))
def _angle(z: Any, deg: bool = False) -> Tensor:
    result = ops.angle(_tensor(z))
    return result * (180.0 / math.pi) if deg else result


# -- products ------------------------------------------------------------------------------


@_implements(np.dot, operators=("mul", "matmul"))
def _dot(a: Any, b: Any, out: Any = None) -> Tensor:
    _refuse("dot", out=out)
    left, right = _tensor(a), _tensor(b)
    if left.ndim == 0 or right.ndim == 0:
        return ops.mul(left, right)
    if left.ndim <= 2 and right.ndim <= 2:
        return ops.matmul(left, right)
    raise TypeError(
        "numpy.dot() on gradgen Tensors takes arrays of at most 2 dimensions; for a "
        "batched product use np.matmul (gradgen.matmul)"
    )


@_implements(np.vdot, operators=("vdot",))
def _vdot(a: Any, b: Any) -> Tensor:
    return ops.vdot(_flat(_tensor(a)), _flat(_tensor(b)))


@_implements(np.outer, operators=("outer",))
def _outer(a: Any, b: Any, out: Any = None) -> Tensor:
    _refuse("outer", out=out)
    return ops.outer(_flat(_tensor(a)), _flat(_tensor(b)))


# -- sorting, masks, triangles, norms, comparisons ------------------------------------------


@_implements(np.sort, operators=("sort",))
def _sort(
    a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None
) -> Tensor:
    if order is not None:
        raise TypeError(
            "numpy.sort() on gradgen Tensors takes no order= (no structured dtypes)"
        )
    self = _tensor(a)
    if axis is None:
        self, axis = _flat(self), 0
    is_stable = bool(stable) or kind == "stable" or kind == "mergesort"
    return ops.sort(self, stable=is_stable, dim=_axis(axis, max(self.ndim, 1))).values


def _truth(name: str) -> Callable[..., Any]:
    def translation(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: Any = _NO_VALUE,
        *,
        where: Any = _NO_VALUE,
    ) -> Tensor:
        _refuse(name, out=out, where=where)
        self = _tensor(a)
        method = getattr(self, name)
        if axis is None and not _keepdims(keepdims):
            return method()
        dims = tuple(range(self.ndim)) if axis is None else _axes(axis, self.ndim)
        return method(dims, _keepdims(keepdims))

    return translation


_implements(np.any, operators=("any",))(_truth("any"))
_implements(np.all, operators=("all",))(_truth("all"))


@_implements(np.tril, operators=("tril",))
def _tril(m: Any, k: int = 0) -> Tensor:
    return ops.tril(_tensor(m), operator.index(k))


@_implements(np.triu, operators=("triu",))
def _triu(m: Any, k: int = 0) -> Tensor:
    return ops.triu(_tensor(m), operator.index(k))


@_implements(np.diag, operators=("diag",))
def _diag(v: Any, k: int = 0) -> Tensor:
    return ops.diag(_tensor(v), operator.index(k))


@_implements(np.trace, operators=("trace",))
def _trace(
    a: Any,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    _refuse("trace", out=out)
    self = _tensor(a)
    if (
        self.ndim != 2
        or offset != 0
        or (axis1, axis2) not in ((0, 1), (1, 0))
        or dtype is not None
    ):
        return NotImplemented
    return ops.trace(self)


@_implements(np.linalg.norm, operators=("norm",))
def _norm(
    x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False
) -> Any:  # noqa: A002
    """Vector norms (numpy's ord None/0/1/2/inf/-inf/p over an axis or the flattened
    array); matrix norms (ord 'fro', 'nuc', 2 over two axes) have no gradgen operator.
    """
    self = _tensor(x)
    if isinstance(ord, str) or (
        axis is not None and not isinstance(axis, (int, np.integer))
    ):
        return NotImplemented
    if axis is None and self.ndim > 1 and ord is not None:
        return NotImplemented  # numpy's matrix norm of a 2-D array
    p = 2.0 if ord is None else float(ord)
    if axis is None:
        result = ops.norm(_flat(self), p)
        return ops.reshape(result, (1,) * self.ndim) if keepdims else result
    return ops.norm(self, p, _axis(axis, self.ndim), bool(keepdims))


@_implements(np.allclose, operators=("allclose",))
def _allclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    left, right = _tensor(a), _tensor(b)
    return bool(ops.allclose(left, right.to(left.dtype), rtol, atol, equal_nan))


@_implements(np.array_equal, operators=("equal",))
def _array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    if equal_nan:
        return NotImplemented
    left, right = _tensor(a1), _tensor(a2)
    if tuple(left.shape) != tuple(right.shape):
        return False
    return bool(ops.equal(left, right.to(left.dtype)))


@_implements(np.nan_to_num, operators=("nan_to_num",))
def _nan_to_num(
    x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None, neginf: Any = None
) -> Tensor:
    if not copy:
        raise TypeError(
            "numpy.nan_to_num(copy=False) on gradgen Tensors: use Tensor.nan_to_num_()"
        )
    return ops.nan_to_num(_tensor(x), nan, posinf, neginf)
