"""What the engine checks and converts of the gradients between nodes (engine.py runs
them): PyTorch's validate_outputs (a gradient checked against the input it flows to,
summed to its shape, cast to its dtype, with PyTorch's messages), and the input
buffers: the sum of the gradients arriving at one input, and the conversions between
bare arrays and Tensors; and a leaf's sink for a bare array (`_accumulate_array`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from . import dtypes, grad_mode
from .graph import AccumulateGrad, EdgeTuple, Node, is_stealable
from .numpy_kernels import sum_to_size
from .tensor import Tensor, array_tensor

_NDARRAY = np.ndarray
_asarray = np.asarray
_GRAD_MODE = grad_mode._state
# What a 0-d array form's arithmetic returns: numpy scalars, handed on as they are
# (each is a 0-d gradient of its dtype; numpy's scalar arithmetic does what its 0-d
# array arithmetic does, in the same dtype, at a fraction of the cost).
_SCALARS: frozenset[Any] = frozenset(
    {np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128}
)
# Each numpy scalar class's dtype (numpy's one instance of it: a numpy scalar's dtype
# is told by its class).
_SCALAR_DTYPES: dict[Any, np.dtype[Any]] = {cls: np.dtype(cls) for cls in _SCALARS}
# ndarray and the numpy scalars: what a buffer holds while arrays flow.
_ARRAYS: frozenset[Any] = frozenset({np.ndarray}) | _SCALARS


# The gradients arriving at one node, summed per input slot, are a plain list (one
# entry per input of the node): `buffer_add` adds one gradient into it. A backward that
# records no graph hands gradients on as bare arrays between the nodes that have an
# array form (`Node.apply_arrays`), so a slot holds a Tensor or an ndarray; a node
# without one gets Tensors (`_as_tensors`), as every hook and capture does.
InputBuffer: TypeAlias = "list[Tensor | np.ndarray | None]"


def buffer_add(slots: InputBuffer, position: int, gradient: Any) -> None:
    """Add `gradient` into slot `position` (None adds nothing)."""
    if gradient is None:
        return
    old = slots[position]
    if old is None:
        slots[position] = gradient
    elif old.__class__ in _ARRAYS or gradient.__class__ in _ARRAYS:
        _array_buffer_add(slots, position, old, gradient)
    elif grad_mode.is_grad_enabled():
        slots[position] = old + gradient  # recorded: create_graph
    elif old.__class__ is not Tensor or gradient.__class__ is not Tensor:
        # A subclass (vmap's BatchedTensor): its _data is not all of it.
        slots[position] = old + gradient
    else:
        slots[position] = None
        if is_stealable(old):
            np.add(old._data, gradient._data, out=old._data)
            slots[position] = old
        else:
            slots[position] = Tensor(np.asarray(old._data + gradient._data))


def _array_buffer_add(
    slots: InputBuffer, position: int, old: Any, gradient: Any
) -> None:
    """buffer_add where a gradient is a bare array (no graph recorded): in place into
    the array already there when nothing else sees it, else into a new array."""
    old_array: Any = old if old.__class__ in _ARRAYS else old._data
    new_array: Any = gradient if gradient.__class__ in _ARRAYS else gradient._data
    if old.__class__ not in _ARRAYS and old.__class__ is not Tensor:
        # a subclass (vmap's BatchedTensor)
        slots[position] = old + Tensor(np.asarray(new_array))
        return
    if old_array.__class__ is not _NDARRAY or new_array.__class__ is not _NDARRAY:
        slots[position] = old_array + new_array  # a numpy scalar: 0-d, no copy to save
        return
    slots[position] = None
    del old
    if (
        sys.getrefcount(old_array) <= _BUFFER_ARRAY_REFS
        and old_array.base is None
        and old_array.flags.writeable
    ):
        np.add(old_array, new_array, out=old_array)
        slots[position] = old_array
    else:
        slots[position] = np.asarray(old_array + new_array)


# Gradients up to this many elements are summed into a new array by the engine's loop
# (the in-place add saves an allocation only where one costs more than the checks).
_SMALL_SUM = 1024

# In _array_buffer_add an array nobody else holds is referenced by the local
# `old_array` and getrefcount's argument only (its slot was emptied).
_BUFFER_ARRAY_REFS = 2


def _as_tensors(inputs: InputBuffer) -> list[Tensor | None]:
    """The buffer with its bare arrays wrapped as Tensors (in place), for a node that
    runs its tensor form, hooks and captures."""
    for slot, value in enumerate(inputs):
        if value.__class__ is _NDARRAY:
            inputs[slot] = Tensor(value)
        elif value.__class__ in _SCALARS:
            inputs[slot] = Tensor(np.asarray(value))
    return inputs  # type: ignore[return-value]


def _as_arrays(inputs: InputBuffer) -> bool:
    """Replace each plain Tensor of the buffer by its array (in place); False (and
    nothing changed that matters) when a slot holds a Tensor subclass."""
    for slot, value in enumerate(inputs):
        if value is None or value.__class__ in _ARRAYS:
            continue
        if value.__class__ is not Tensor:
            return False
        inputs[slot] = value._data
    return True


def _shape_error(index: int, got: tuple[int, ...], expected: tuple[int, ...]) -> str:
    return (
        f"invalid gradient at index {index} - got {list(got)} but expected shape "
        f"compatible with {list(expected)}"
    )


def is_expandable_to(shape: tuple[int, ...], desired: tuple[int, ...]) -> bool:
    """Whether a tensor of `shape` broadcasts to `desired` (so `desired` sums back)."""
    if len(shape) > len(desired):
        return False
    for size, target in zip(reversed(shape), reversed(desired)):
        if size != target and size != 1:
            return False
    return True


def _error(node: Node | None, message: str) -> str:
    """A validation failure: "Function XBackward0 returned an invalid ..." for a node's
    gradients, the bare message for the root gradients."""
    return message if node is None else f"Function {node.name()} returned an {message}"


def validate_outputs(
    edges: Sequence[EdgeTuple], grads: list[Tensor | None], node: Node | None = None
) -> None:
    """Check every gradient against the input it flows to; reduce and cast in place.

    `node` produced `grads` (None for the root gradients); errors name it.
    """
    if len(grads) != len(edges):
        raise RuntimeError(
            _error(
                node,
                f"invalid number of gradients - expected {len(edges)}, but got "
                f"{len(grads)}",
            )
        )
    for index, (function, input_nr) in enumerate(edges):
        grad = grads[index]
        if function is None or grad is None:
            continue
        grads[index] = _validated(node, index, grad, function, input_nr)


def _validated(
    node: Node | None, index: int, grad: object, function: Node, input_nr: int
) -> Tensor:
    """Gradient `index` of `node`, checked against input `input_nr` of `function` it
    flows to, summed to that input's shape and cast to its dtype."""
    if not isinstance(grad, Tensor):
        raise TypeError(
            _error(
                node,
                f"invalid gradient at index {index} - expected a Tensor or None, "
                f"but got {type(grad).__name__}",
            )
        )
    expected_shape, expected_dtype = function._input_metadata[input_nr]
    shape = grad._data.shape
    if shape != expected_shape:
        if not is_expandable_to(expected_shape, shape):
            raise RuntimeError(_error(node, _shape_error(index, shape, expected_shape)))
        grad = grad.sum_to_size(expected_shape)
    if expected_dtype is not None and grad._data.dtype != expected_dtype:
        grad_is_complex = grad._data.dtype.kind == "c"
        if grad._data.dtype.kind != "f" and grad_is_complex != (
            expected_dtype.kind == "c"
        ):
            raise RuntimeError(
                _error(
                    node,
                    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex "
                    "== grad_is_complex) to be true, but got false.",
                )
            )
        grad = grad._to_copy(dtype=dtypes._FROM_NUMPY[expected_dtype])
    return grad


def _checked(
    node: Node, index: int, gradient: Any, function: Node, input_nr: int
) -> Any:
    """Gradient `index` of `node` as it flows to input `input_nr` of `function`: as it
    is when it matches that input's shape and dtype, else through `_validated`."""
    expected_shape, expected_dtype = function._input_metadata[input_nr]
    cls = gradient.__class__
    if cls is _NDARRAY:
        shape = gradient.shape
        if shape != expected_shape:
            # As _validated, on the array: no graph is recorded, so the operator
            # would run this very kernel.
            if not is_expandable_to(expected_shape, shape):
                raise RuntimeError(
                    _error(node, _shape_error(index, shape, expected_shape))
                )
            gradient = np.asarray(sum_to_size(gradient, expected_shape))
        if expected_dtype is None or gradient.dtype == expected_dtype:
            return gradient
        return _validated(node, index, Tensor(gradient), function, input_nr)
    if cls is Tensor:
        data = gradient._data
        if data.shape == expected_shape and (
            expected_dtype is None or data.dtype == expected_dtype
        ):
            return gradient
    elif isinstance(gradient, np.generic):  # an array form's 0-d result
        return _checked(node, index, np.asarray(gradient), function, input_nr)
    return _validated(node, index, gradient, function, input_nr)


def passed_on(
    node: Node, index: int, gradient: Any, function: Node, input_nr: int
) -> tuple[Any, bool]:
    """What _run_plain hands on for gradient `index` of `node` (input `input_nr` of
    `function`) when it is not an array (or numpy scalar) of that input's shape and
    dtype: checked as `_checked` does; an array, or a plain Tensor's array when
    `function` takes arrays. The flag is True for a Tensor subclass (it goes on as it
    is, and the buffers are mixed from then on)."""
    expected_shape, expected_dtype = function._input_metadata[input_nr]
    cls = gradient.__class__
    data = (
        gradient
        if cls is _NDARRAY or cls in _SCALARS
        else gradient._data if cls is Tensor else None
    )
    if (
        data is None
        or data.shape != expected_shape
        or (
            (dtype := data.dtype) is not expected_dtype
            and expected_dtype is not None
            and dtype != expected_dtype
        )
    ):
        gradient = _checked(node, index, gradient, function, input_nr)
        cls = gradient.__class__
        data = (
            gradient if cls is _NDARRAY else gradient._data if cls is Tensor else None
        )
    if data is None:
        return gradient, True
    if cls is not Tensor or (
        function._has_array_form or type(function) is AccumulateGrad
    ):
        return data, False
    return gradient, False


def _accumulate_array(node: AccumulateGrad, inputs: InputBuffer) -> bool:
    """AccumulateGrad.apply for a gradient that arrives as a bare array (or a plain
    Tensor): the same `.grad`, stolen or copied by the same rule. False when the
    tensor form must run instead (a subclass, grad mode turned on by a hook)."""
    new: Any = inputs[0]
    cls = new.__class__
    if cls in _SCALARS:
        new = _asarray(new)  # a new 0-d array, nobody else's: .grad takes it
        fresh = True
    elif cls is _NDARRAY:
        fresh = False
    else:
        return False  # None, or a Tensor that may become .grad: AccumulateGrad.apply
    if _GRAD_MODE.enabled:
        return False
    variable = node.variable
    if variable._grad_fn is not None:
        raise RuntimeError("leaf variable has been moved into the graph interior")
    if not (variable._requires_grad or variable.requires_grad):
        return True
    mutex = node._mutex or node._lock()
    mutex.acquire()  # (as `with`, without its two method calls)
    try:
        old_grad = variable._grad
        if old_grad is None:
            inputs[0] = None
            if fresh or (
                sys.getrefcount(new) <= _ACCUMULATE_ARRAY_REFS
                and new.base is None
                and new.flags.writeable
            ):
                variable._grad = array_tensor(new)  # (Tensor(new), without __init__)
            else:
                variable._grad = array_tensor(np.copy(new, order="K"))  # Tensor.clone
        elif old_grad._data.flags.writeable:
            np.add(old_grad._data, new, out=old_grad._data)
            old_grad._counter().version += 1
        else:
            variable._grad = old_grad + Tensor(new)
        if variable._post_accumulate_grad_hooks:
            for hook in list(variable._post_accumulate_grad_hooks):
                hook(variable)
    finally:
        mutex.release()
    return True


# In _accumulate_array a gradient nobody else holds is referenced by the local `new`
# and getrefcount's argument only (its buffer slot was emptied).
_ACCUMULATE_ARRAY_REFS = 2
