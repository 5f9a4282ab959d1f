"""numpy shape functions (transpose, reshape, concatenate, split, ...) as gradgen operators."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..generated import ops
from ..tensor import Tensor
from ._registry import (
    _axes,
    _axis,
    _dtype,
    _flat,
    _implements,
    _refuse,
    _tensor,
)

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
