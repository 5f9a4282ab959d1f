"""numpy functions on gradgen tensors: numpy's override protocols, routed to gradgen.

A Tensor takes part in both of numpy's protocols, each through a method of Tensor that
only delegates here:

- `__array_ufunc__` (NEP 13): `np.exp(t)`, `np.add(array, t)`, `array * t`: the ufunc's
  gradgen operator (`UFUNC_OPERATORS`), so the result is a Tensor in the graph.
- `__array_function__` (NEP 18): `np.sum(t, axis=0)`, `np.concatenate([t, u])`, ...:
  a translation of numpy's arguments into a call of gradgen operators (`FUNCTIONS`,
  filled by the `@_implements` translations below): numpy's `axis`/`keepdims` become
  `dim`/`keepdim`, `axis=None` is the full reduction, `ddof` is `correction`, a numpy
  `dtype=` becomes a gradgen dtype, ndarray arguments become tensors.

What gradgen cannot do, it refuses the way numpy expects:
- a ufunc or function without a gradgen operator (or a foreign array type among the
  arguments) returns NotImplemented, and numpy raises its TypeError ("no implementation
  found for 'numpy.sort' on types that implement __array_function__: [...Tensor]");
- a mapped function given an argument gradgen cannot honour (`out=`, `where=`,
  `initial=`, `order='F'`, ...) raises TypeError naming the argument, as PyTorch's
  `np.sum(t, dtype=np.float64)` raises TypeError for the argument it cannot take.

Results follow gradgen's operators (PyTorch's semantics): a reduction gives a 0-d
Tensor, not a numpy scalar, and dtypes follow gradgen's promotion rules (`np.mean` of
an integer tensor is an error, as `torch.mean`'s).

`np.asarray(t)` is `Tensor.__array__`, which gives the data (no copy) and, as PyTorch,
raises RuntimeError for a tensor that requires grad: data leaving the graph must be
detached on purpose (`t.detach()`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from . import dtypes
from .factories import tensor as _new_tensor
from .generated import ops
from .tensor import Tensor, wrap_number

__all__ = ["UFUNC_OPERATORS", "FUNCTIONS", "array_ufunc", "array_function"]

# numpy ufunc name -> the gradgen operator computing the same function.
UFUNC_OPERATORS: dict[str, str] = {
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "true_divide": "div",
    "divide": "div",
    "power": "pow",
    "matmul": "matmul",
    "negative": "neg",
    "absolute": "abs",
    "sign": "sign",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "sqrt": "sqrt",
    "square": "square",
    "reciprocal": "reciprocal",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "maximum": "maximum",
    "minimum": "minimum",
    "fmax": "fmax",
    "fmin": "fmin",
    "fmod": "fmod",
    "remainder": "remainder",
    "hypot": "hypot",
    "conjugate": "conj",
    "equal": "eq",
    "not_equal": "ne",
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "logical_not": "logical_not",
    "isnan": "isnan",
    "isinf": "isinf",
    "isfinite": "isfinite",
    "floor_divide": "floor_divide",
}

# numpy function -> its translation into gradgen operators.
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
# numpy function -> the gradgen operators its translation calls (for tests and readers).
FUNCTION_OPERATORS: dict[Callable[..., Any], tuple[str, ...]] = {}


def array_ufunc(
    ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """`Tensor.__array_ufunc__`: the ufunc's gradgen operator, or NotImplemented for a
    ufunc without one and for `out=`, `where=`, `.reduce`, `.accumulate`, ..."""
    operator_name = UFUNC_OPERATORS.get(ufunc.__name__)
    if method != "__call__" or kwargs or operator_name is None:
        return NotImplemented
    function = getattr(ops, operator_name, None)
    if function is None:
        return NotImplemented
    arguments = [_new_tensor(x) if isinstance(x, np.ndarray) else x for x in inputs]
    if arguments and isinstance(arguments[0], (np.generic, bool, int, float, complex)):
        # `np.float64(2) + t`: numpy hands the reflected operation to us with its
        # scalar first, where the operator wants a Tensor: a wrapped number, as
        # PyTorch makes of `2.0 + t`.
        arguments[0] = wrap_number(arguments[0])
    return function(*arguments)


def array_function(
    func: Callable[..., Any],
    types: Iterable[type],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """`Tensor.__array_function__`: numpy's `func(*args, **kwargs)` as gradgen
    operators, or NotImplemented when `func` has no translation or another array type
    that overrides numpy takes part (it may know what to do)."""
    translation = FUNCTIONS.get(func)
    if translation is None or not all(map(_understood, types)):
        return NotImplemented
    return translation(*args, **kwargs)


def _understood(kind: type) -> bool:
    """Tensors, and arrays that leave numpy functions to numpy (ndarray and the
    subclasses that do not override `__array_function__`): their data joins as a
    tensor. Another overriding type gets its own say."""
    return issubclass(kind, Tensor) or (
        issubclass(kind, np.ndarray)
        and getattr(kind, "__array_function__", None) is np.ndarray.__array_function__
    )


def _implements(
    *functions: Callable[..., Any], operators: tuple[str, ...]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated translation for numpy's `functions`."""

    def register(translation: Callable[..., Any]) -> Callable[..., Any]:
        for function in functions:
            FUNCTIONS[function] = translation
            FUNCTION_OPERATORS[function] = operators
        return translation

    return register


# -- argument translation --------------------------------------------------------------


class _NoValue:
    """numpy's "argument not given" for arguments whose absence means something."""

    def __repr__(self) -> str:
        return "<no value>"


_NO_VALUE: Any = _NoValue()


def _tensor(value: Any) -> Tensor:
    """A Tensor argument as is; an ndarray, list or number as a new tensor of its data
    (numpy's dtype kept: a float64 array stays float64)."""
    if isinstance(value, Tensor):
        return value
    return _new_tensor(np.asarray(value))


def _number_or_tensor(value: Any) -> Any:
    """Python and numpy numbers stay numbers (gradgen's Scalar overloads, with
    wrapped-number promotion); anything array-like becomes a tensor."""
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        return value
    return _tensor(value)


def _refuse(function: str, **arguments: Any) -> None:
    """TypeError for arguments gradgen cannot honour (those not at their default)."""
    reasons = {
        "out": "gradgen operators return a new tensor; use the result instead of out=",
        "where": "gradgen has no masked reductions",
        "initial": "gradgen reductions take no initial value",
        "casting": "gradgen casts by its own promotion rules",
        "subok": "gradgen has no array subclasses",
        "mean": "gradgen computes the mean itself",
    }
    for name, value in arguments.items():
        if value is not None and value is not _NO_VALUE:
            if name == "casting" and value == "same_kind":
                continue
            if name == "subok" and value is False:
                continue
            raise TypeError(
                f"numpy.{function}() on a gradgen Tensor does not support "
                f"{name}={value!r}: {reasons.get(name, 'gradgen cannot honour it')}"
            )


def _dtype(value: Any) -> dtypes.dtype | None:
    """numpy's `dtype=` as a gradgen dtype (TypeError for dtypes gradgen lacks)."""
    return None if value is None else dtypes.as_dtype(value)


def _axis(value: Any, ndim: int) -> int:
    """One axis, negative ones counted from the end, checked as numpy does."""
    axis = operator.index(value)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _axes(value: Any, ndim: int) -> tuple[int, ...]:
    """An int or a sequence of ints as normalised axes; a repeated axis is numpy's
    ValueError."""
    items = value if isinstance(value, Sequence) else (value,)
    axes = tuple(_axis(item, ndim) for item in items)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    return axes


def _keepdims(value: Any) -> bool:
    return False if value is _NO_VALUE else bool(value)


def _flat(value: Tensor) -> Tensor:
    return ops.reshape(value, (-1,))


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


# -- shapes ------------------------------------------------------------------------------


@_implements(np.transpose, operators=("permute",))
def _transpose(a: Any, axes: Any = None) -> Tensor:
    self = _tensor(a)
    if axes is None:
        return ops.permute(self, tuple(reversed(range(self.ndim))))
    dims = _axes(axes, self.ndim)
    if len(dims) != self.ndim:
        raise ValueError("axes don't match array")
    return ops.permute(self, dims)


@_implements(np.swapaxes, operators=("transpose",))
def _swapaxes(a: Any, axis1: Any, axis2: Any) -> Tensor:
    self = _tensor(a)
    return ops.transpose(self, _axis(axis1, self.ndim), _axis(axis2, self.ndim))


@_implements(np.moveaxis, operators=("permute",))
def _moveaxis(a: Any, source: Any, destination: Any) -> Tensor:
    self = _tensor(a)
    sources = _axes(source, self.ndim)
    destinations = _axes(destination, self.ndim)
    if len(sources) != len(destinations):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [dim for dim in range(self.ndim) if dim not in sources]
    for target, moved in sorted(zip(destinations, sources)):
        order.insert(target, moved)
    return ops.permute(self, tuple(order))


@_implements(np.reshape, operators=("reshape",))
def _reshape(
    a: Any,
    shape: Any = None,
    order: str = "C",
    *,
    newshape: Any = None,
    copy: bool | None = None,
) -> Tensor:
    if shape is None and newshape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    if order != "C":
        raise TypeError(
            f"numpy.reshape() on a gradgen Tensor does not support order={order!r}: "
            "gradgen tensors are C-ordered"
        )
    size = shape if shape is not None else newshape
    size = (size,) if not isinstance(size, Sequence) else tuple(size)
    result = ops.reshape(_tensor(a), tuple(operator.index(n) for n in size))
    return ops.clone(result) if copy else result


@_implements(np.ravel, operators=("reshape",))
def _ravel(a: Any, order: str = "C") -> Tensor:
    if order not in ("C", "K", "A"):
        raise TypeError(
            f"numpy.ravel() on a gradgen Tensor does not support order={order!r}: "
            "gradgen tensors are C-ordered"
        )
    return _flat(_tensor(a))


@_implements(np.squeeze, operators=("squeeze",))
def _squeeze(a: Any, axis: Any = None) -> Tensor:
    self = _tensor(a)
    if axis is None:
        return ops.squeeze(self)
    axes = _axes(axis, self.ndim)
    if any(self.shape[dim] != 1 for dim in axes):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one"
        )
    for dim in sorted(axes, reverse=True):
        self = ops.squeeze(self, dim)
    return self


@_implements(np.expand_dims, operators=("unsqueeze",))
def _expand_dims(a: Any, axis: Any) -> Tensor:
    self = _tensor(a)
    count = len(axis) if isinstance(axis, Sequence) else 1
    for dim in sorted(_axes(axis, self.ndim + count)):
        self = ops.unsqueeze(self, dim)
    return self


@_implements(np.flip, operators=("flip",))
def _flip(m: Any, axis: Any = None) -> Tensor:
    self = _tensor(m)
    dims = tuple(range(self.ndim)) if axis is None else _axes(axis, self.ndim)
    return ops.flip(self, dims)


@_implements(np.roll, operators=("roll",))
def _roll(a: Any, shift: Any, axis: Any = None) -> Tensor:
    self = _tensor(a)
    shifts = tuple(shift) if isinstance(shift, Sequence) else (shift,)
    dims = () if axis is None else _axes(axis, self.ndim)
    if dims and len(shifts) == 1 and len(dims) > 1:
        shifts = shifts * len(dims)  # numpy broadcasts one shift over the axes
    return ops.roll(self, shifts, dims)


@_implements(np.concatenate, operators=("cat",))
def _concatenate(
    arrays: Any,
    axis: Any = 0,
    out: Any = None,
    *,
    dtype: Any = None,
    casting: Any = "same_kind",
) -> Tensor:
    _refuse("concatenate", out=out, casting=casting)
    tensors = _tensors(arrays, dtype)
    if axis is None:  # numpy joins the flattened arrays
        return ops.cat([_flat(t) for t in tensors], 0)
    return ops.cat(tensors, _axis(axis, tensors[0].ndim if tensors else 0))


@_implements(np.stack, operators=("stack",))
def _stack(
    arrays: Any,
    axis: Any = 0,
    out: Any = None,
    *,
    dtype: Any = None,
    casting: Any = "same_kind",
) -> Tensor:
    _refuse("stack", out=out, casting=casting)
    tensors = _tensors(arrays, dtype)
    return ops.stack(tensors, _axis(axis, (tensors[0].ndim if tensors else 0) + 1))


def _tensors(arrays: Any, dtype: Any) -> list[Tensor]:
    if isinstance(arrays, (Tensor, np.ndarray)):
        raise TypeError("expected a sequence of arrays, got a single array")
    tensors = [_tensor(a) for a in arrays]
    if not tensors:
        raise ValueError("need at least one array to concatenate")
    target = _dtype(dtype)
    return tensors if target is None else [t.to(target) for t in tensors]


@_implements(np.split, operators=("split", "split_with_sizes"))
def _split(ary: Any, indices_or_sections: Any, axis: Any = 0) -> list[Tensor]:
    self = _tensor(ary)
    dim = _axis(axis, self.ndim)
    length = self.shape[dim]
    if not isinstance(indices_or_sections, Sequence):
        sections = operator.index(indices_or_sections)
        if sections <= 0 or length % sections:
            raise ValueError("array split does not result in an equal division")
        return list(ops.split(self, length // sections, dim))
    bounds = [0, *(operator.index(i) for i in indices_or_sections), length]
    if any(not 0 <= b <= length for b in bounds) or bounds != sorted(bounds):
        raise TypeError(
            "numpy.split() on a gradgen Tensor takes increasing indices within the axis"
        )
    sizes = [stop - start for start, stop in zip(bounds, bounds[1:])]
    return list(ops.split_with_sizes(self, sizes, dim))


@_implements(np.broadcast_to, operators=("expand",))
def _broadcast_to(array: Any, shape: Any, subok: bool = False) -> Tensor:
    _refuse("broadcast_to", subok=subok)
    size = (shape,) if not isinstance(shape, Sequence) else tuple(shape)
    return _tensor(array).expand(tuple(operator.index(n) for n in size))


@_implements(np.tile, operators=("repeat",))
def _tile(A: Any, reps: Any) -> Tensor:  # noqa: N803 - numpy's name
    self = _tensor(A)
    repeats = (reps,) if not isinstance(reps, Sequence) else tuple(reps)
    repeats = (1,) * (self.ndim - len(repeats)) + repeats  # numpy pads reps with 1s
    return self.repeat(tuple(operator.index(n) for n in repeats))


@_implements(np.copy, operators=("clone",))
def _copy(a: Any, order: str = "K", subok: bool = False) -> Tensor:
    _refuse("copy", subok=subok)
    return ops.clone(_tensor(a))


@_implements(np.shape, operators=())
def _shape(a: Any) -> tuple[int, ...]:
    return tuple(_tensor(a).shape)


@_implements(np.ndim, operators=())
def _ndim(a: Any) -> int:
    return _tensor(a).dim()


@_implements(np.size, operators=())
def _size(a: Any, axis: Any = None) -> int:
    self = _tensor(a)
    return self.numel() if axis is None else int(self.shape[_axis(axis, self.ndim)])


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
