"""`t[index]` and `t[index] = value`, as PyTorch's Python indexing does them.

Reading: the basic parts of an index (ints, slices, None, ...) become the view
operators select / slice / unsqueeze, so a basic index gives a differentiable view.
Tensors, lists, arrays and boolean masks are advanced indices: after the basic parts
are applied, the `index` operator gathers along the dimensions they index (a copy;
its backward adds the gradient back at the indexed places). As in PyTorch, an int
next to an advanced index is a select applied first, so `x[0, :, [0, 1]]` has shape
(3, 2) for a (2, 3, 4) x, where numpy gives (2, 3).

Writing, as PyTorch: a basic index is a `copy_` into the view it selects (recorded
through CopySlices when anything requires grad; without anything to record, straight
into memory). An advanced index is `index_put_` on the tensor itself
(IndexPutBackward0); the positions written are found by indexing a tensor of flat
positions with the same index, so reads and writes agree on every index.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import grad_mode
from .dtypes import int64
from .factories import tensor
from .graph import _legacy_type_name
from .scalars import checked_value, python_type_name
from .numpy_kernels import OVERLAPPING_WRITE_ERROR
from .tensor import Tensor, _is_integer_index


def _is_bool(item: Any) -> bool:
    return isinstance(item, (bool, np.bool_))


def _is_advanced(item: Any) -> bool:
    """A tensor (not a 0-d integer one), a list, an array or a bool: advanced
    indexing (`t[True]` adds a dimension of size 1 and indexes it with [0], `t[False]`
    with [], as PyTorch)."""
    if isinstance(item, (list, np.ndarray, bool, np.bool_)):
        return True
    return isinstance(item, Tensor) and not _is_integer_index(item)


def _index_tensor(item: Any) -> Tensor:
    """An advanced index as an integer or bool tensor."""
    if isinstance(item, Tensor):
        return item
    return tensor(item, dtype=int64 if isinstance(item, list) and not item else None)


def getitem(self: Tensor, index: Any) -> Tensor:
    items = index if isinstance(index, tuple) else (index,)
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    advanced = any(_is_advanced(item) for item in items)
    indexes = [
        _index_tensor(item) if _is_advanced(item) and not _is_bool(item) else item
        for item in items
    ]
    specified = 0
    for item in indexes:
        if item is None or item is Ellipsis or _is_bool(item):
            continue
        data = getattr(item, "_data", None)
        specified += data.ndim if data is not None and data.dtype.kind == "b" else 1
    ndim = self._data.ndim
    if ndim == 0 and any(_is_integer_index(item) for item in indexes):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
        )
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = self
    dim = 0
    gathered: list[Tensor | None] = []  # the `index` operator's indices, per dimension
    for item in indexes:
        if item is None:
            result = result.unsqueeze(dim)
            gathered.append(None)
            dim += 1
        elif _is_bool(item):
            result = result.unsqueeze(dim)
            gathered.append(Tensor(np.zeros(1 if item else 0, np.int64)))
            dim += 1
        elif item is Ellipsis:
            gathered += [None] * (ndim - specified)
            dim += ndim - specified
        elif isinstance(item, slice):
            step = 1 if item.step is None else operator.index(item.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if item.start is None else operator.index(item.start)
            stop = None if item.stop is None else operator.index(item.stop)
            if not (start in (None, 0) and stop is None and step == 1):
                result = result.slice(dim, start, stop, step)
            gathered.append(None)
            dim += 1
        elif not _is_advanced(item) and _is_integer_index(item):
            position, size = operator.index(item), result._data.shape[dim]
            if not -size <= position < size:
                raise IndexError(
                    f"index {position} is out of bounds for dimension {dim} with size {size}"
                )
            result = result.select(dim, position)
        elif _is_advanced(item):
            gathered.append(item)
            dim += item._data.ndim if item._data.dtype.kind == "b" else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(item).__name__})"
            )
    if advanced:
        return result.index(gathered)
    if result is self:
        return self.view(self._data.shape)
    return result


def _scalar_value(self: Tensor, value: Any) -> Any:
    """A number written with `t[index] = value`, converted to t's dtype as PyTorch
    does (an int beyond int64, a complex or out-of-range value are errors). As in
    PyTorch the value is a Tensor or a Python number (numpy's ints, float64 and
    complex128 count as such); lists, arrays and other numpy scalars are refused."""
    number = isinstance(value, (bool, int, float, complex, np.integer))
    if not number or (
        isinstance(value, np.generic)
        and not isinstance(value, (np.integer, float, complex))
    ):
        raise TypeError(
            f"can't assign a {python_type_name(value)} to a {_legacy_type_name(self)}"
        )
    return checked_value(value, self._data.dtype, to_inf=True)


def setitem(self: Tensor, index: Any, value: Any) -> None:
    items = index if isinstance(index, tuple) else (index,)
    basic = not any(_is_advanced(item) for item in items)
    if not isinstance(value, Tensor):
        source = Tensor(np.asarray(_scalar_value(self, value), dtype=self._data.dtype))
    elif basic and value.dtype is not self.dtype:
        # A basic write is a copy_ into a view, which casts; index_put_ does not.
        source = value.to(self.dtype)
    else:
        source = value
    recording = grad_mode.is_grad_enabled() and (
        self.requires_grad or source.requires_grad
    )
    if basic:
        if recording:
            # As PyTorch: a copy_ into the view (recorded through CopySlices).
            getitem(self, index).copy_(source)
        else:
            _write_basic(self, items, source)
        return
    # The flat positions `index` selects, in the layout reading would give them.
    positions = Tensor(np.arange(self._data.size).reshape(self._data.shape))
    with grad_mode.no_grad():
        selected = getitem(positions, index)._data
    coordinates = [
        Tensor(np.asarray(c, dtype=np.int64))
        for c in np.unravel_index(selected, self._data.shape)
    ]
    self.index_put_(coordinates, source)


def _write_basic(self: Tensor, items: tuple[Any, ...], source: Tensor) -> None:
    """A basic-index write with nothing to record: straight into memory, as a view's
    copy_ would, counted as an in-place change."""
    key = tuple(operator.index(i) if _is_integer_index(i) else i for i in items)
    try:
        self._data[key] = source._data
    except IndexError as error:  # numpy's "for axis 0": PyTorch says dimension
        raise IndexError(str(error).replace(" for axis ", " for dimension ")) from None
    except ValueError as error:
        if not self._data.flags.writeable:
            raise RuntimeError(OVERLAPPING_WRITE_ERROR) from None
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(source._data.shape)} cannot be "
            f"broadcast to indexing result of shape {list(self._data[key].shape)}"
        ) from error
    self._counter().version += 1
