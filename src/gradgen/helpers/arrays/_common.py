"""What every array twin shares: PyTorch's type promotion over arrays, and the switch
that lets a Backward node run its formulas over arrays.

An "array" here is an ndarray or a numpy scalar (what numpy returns for 0-d
arithmetic): both count as a tensor of their dtype and ndim, never as a wrapped number;
a Python number counts as a wrapped number, as in `gradgen.dtypes.result_type`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ... import dispatch, dtypes, grad_mode
from ...engine import ARRAY_FORMS
from ...graph import Saved, SavedVariable, plain_version_error, unpack_saved
from ...tensor import Tensor
from ...variable_type_utils import _normalise_dtype as normalise_dtype

__all__ = [
    "ARRAY_FORMS",
    "tensor_forms_only",
    "array_form_allowed",
    "array_of",
    "arrays_of",
    "as_tensor",
    "as_grad_array",
    "plain_tensors",
    "saved_array",
    "NOT_PLAIN",
    "tensors_of",
    "scalar_conj",
]

_NDARRAY = np.ndarray
_ARRAY_TYPES = (np.ndarray, np.generic)
_GRAD_MODE = grad_mode._state
_FORWARD_AD = dispatch.forward_ad_levels


@contextmanager
def tensor_forms_only() -> Iterator[None]:
    """Every node runs its tensor form inside (in every thread): the reference the
    array forms are checked against."""
    previous = ARRAY_FORMS.enabled
    ARRAY_FORMS.enabled = False
    try:
        yield
    finally:
        ARRAY_FORMS.enabled = previous


def array_form_allowed(
    grads: Sequence[Tensor | None], saved: Sequence[Tensor | None]
) -> bool:
    """Whether a node may run its array form: no graph of the backward is recorded
    (grad mode off), no forward-AD level is open, no dispatch detour (profiler, compile
    trace) would see the calls, and every gradient and saved tensor is a plain Tensor.
    vmap's detour alone does not count: on plain tensors its Batched kernel only
    redispatches (vmap(grad)'s backward runs on the batches, as plain tensors)."""
    if (
        _GRAD_MODE.enabled
        or _FORWARD_AD.count
        or dispatch._detour not in (None, dispatch._unobserved)
        or not ARRAY_FORMS.enabled
    ):
        return False
    for grad in grads:
        if grad is not None and grad.__class__ is not Tensor:
            return False
    for tensor in saved:
        if tensor is not None and tensor.__class__ is not Tensor:
            return False
    return True


def array_of(tensor: Tensor | None) -> Any:
    """A saved tensor's array; a wrapped number (`x * 2`'s 2) as the Python number it
    stands for, so that it keeps ranking lowest in type promotion."""
    if tensor is None:
        return None
    if tensor._is_wrapped_number:
        return tensor._data.item()
    return tensor._data


class _NotPlain:
    """saved_array's answer for a saved tensor that is no plain Tensor."""

    __slots__ = ()


NOT_PLAIN: Any = _NotPlain()


def saved_array(saved: Saved | None, node: Any) -> Any:
    """What `array_of(unpack_saved(saved, node))` gives, in one step: the array of a
    saved tensor (checked against in-place changes), a wrapped number as its Python
    number, None when nothing was saved; NOT_PLAIN when the tensor is no plain Tensor
    (a subclass: the node runs its tensor form)."""
    if saved.__class__ is Tensor:
        tensor: Any = saved
        counter = tensor._version_counter
        if counter is not None and counter.version:
            raise RuntimeError(plain_version_error(tensor, 0))
    elif saved is None:
        return None
    elif saved.__class__ is tuple:  # an input saved plain with its version
        pair: Any = saved
        tensor, version = pair
        counter = tensor._version_counter
        if counter is not None and counter.version != version:
            raise RuntimeError(plain_version_error(tensor, version))
        if tensor.__class__ is not Tensor:
            return NOT_PLAIN
    elif saved.__class__ is SavedVariable and _unchanged(saved):
        # unpack's common case: it would check this version and, for an output,
        # rebuild a Tensor with its history around this very array.
        tensor = saved._data
    else:
        tensor = unpack_saved(saved, node)
        if tensor.__class__ is not Tensor:
            return NOT_PLAIN
    if tensor._is_wrapped_number:
        return tensor._data.item()
    return tensor._data


def _unchanged(saved: Any) -> bool:
    """A SavedVariable holding a plain Tensor (not released, no saved-tensor hooks) at
    the version it was saved at."""
    data = saved._data
    if data.__class__ is not Tensor:
        return False
    counter = data._version_counter
    return counter is None or counter.version == saved._saved_version


def arrays_of(grads: Sequence[Tensor | None]) -> list[np.ndarray | None]:
    return [None if grad is None else grad._data for grad in grads]


def as_tensor(value: Any, grads: Sequence[Tensor | None]) -> Tensor | None:
    """A formula's array result as the gradient Tensor (None stays None). An incoming
    gradient's own array (`handle_r_to_c(..., grad)`) is that gradient, the very
    object the tensor form returns."""
    if value is None:
        return None
    if value.__class__ is not _NDARRAY:
        return Tensor(np.asarray(value))
    for grad in grads:
        if grad is not None and grad._data is value:
            return grad
    return Tensor(value)


def as_grad_array(value: Any) -> np.ndarray | None:
    """A formula's result as the engine hands it on: an ndarray (a numpy scalar made
    0-d), or None."""
    if value is None or value.__class__ is _NDARRAY:
        return value
    return np.asarray(value)


def plain_tensors(saved: Sequence[Tensor | None]) -> bool:
    """Whether every saved tensor is a plain Tensor (or None): what the array form
    reads the arrays of (a subclass, vmap's BatchedTensor, is more than its _data)."""
    for tensor in saved:
        if tensor is not None and tensor.__class__ is not Tensor:
            return False
    return True


def tensors_of(values: list[Any] | None, grads: Sequence[Tensor | None]) -> list[Any]:
    """An array form's results as gradient Tensors, in place (see as_tensor). (A
    node's apply_arrays returns None only when it read no saved arrays it was given.)"""
    assert values is not None
    for index, value in enumerate(values):
        if value is not None:
            values[index] = as_tensor(value, grads)
    return values


def scalar_conj(scalar: Any) -> Any:
    """The conjugate of a Scalar argument (PyTorch's ``Scalar::conj``)."""
    return scalar.conjugate() if isinstance(scalar, complex) else scalar


def kernel_result(value: Any) -> np.ndarray:
    """A kernel's result as its operator returns it when nothing is promoted (as
    wrap_result without a dtype: numpy types gradgen lacks mapped to its own)."""
    array = as_array(value)
    if array.dtype not in dtypes._FROM_NUMPY:
        array = normalise_dtype(array)
    return array


def optional_array(value: Any) -> np.ndarray | None:
    """A Tensor? argument's array (None stays None)."""
    return None if value is None else as_array(value)


def is_array(value: object) -> bool:
    return isinstance(value, _ARRAY_TYPES)


def as_array(value: Any) -> np.ndarray:
    return value if value.__class__ is _NDARRAY else np.asarray(value)


def result_dtype(*operands: Any) -> np.dtype:
    """PyTorch's result_type of arrays and Python numbers, as a numpy dtype."""
    common = None
    for operand in operands:
        if isinstance(operand, _ARRAY_TYPES):
            if common is None:
                common = operand.dtype
            elif operand.dtype != common:
                common = None
                break
    if common is not None:
        kind = common.kind
        for operand in operands:
            if not isinstance(operand, _ARRAY_TYPES) and not _number_fits(
                operand, kind
            ):
                common = None
                break
    if common is not None:
        return common
    # The general rule: the runtime's own, on tensors wrapping the arrays.
    tensors = [
        Tensor(as_array(o)) if isinstance(o, _ARRAY_TYPES) else o for o in operands
    ]
    return dtypes.result_type(*tensors).numpy


# Which Python numbers an array of a numpy kind takes without changing category.
_FITS = {
    "b": (bool,),
    "i": (bool, int),
    "u": (bool, int),
    "f": (bool, int, float),
    "V": (bool, int, float),  # ml_dtypes' bfloat16
    "c": (bool, int, float, complex),
}


def _number_fits(number: object, kind: str) -> bool:
    return type(number) in _FITS.get(kind, ())


FLOAT16 = np.dtype(np.float16)
# The magnitude from which a number is inf in float16 (65504 is its largest; 65520
# rounds up).
FLOAT16_LIMIT = 65520.0


def promoted(operand: Any, common: np.dtype) -> Any:
    """An array operand in `common` (as the kernels' promoted_array); a Python number
    stays a number (numpy takes it in the array's dtype, as the 0-d tensor would be),
    except one float16 cannot hold: float32 then, as the kernels' promoted_array (the
    result is float32, then float16 by in_dtype: PyTorch's float arithmetic for half).
    """
    if isinstance(operand, _ARRAY_TYPES):
        if operand.dtype != common:
            if common == FLOAT16 and not operand.ndim and operand.dtype.kind in "biuf":
                return _number_for_float16(operand)
            return operand.astype(common)
    elif (
        common == FLOAT16
        and operand.__class__ in (int, float)
        and abs(operand) >= FLOAT16_LIMIT
        and abs(operand) != float("inf")
    ):
        return np.float32(operand)
    return operand


def _number_for_float16(operand: Any) -> Any:
    """A 0-d array meeting float16 (nanmean's count, 70000): in float16, or in float32
    where float16 cannot hold it (as the forward kernels' promoted_array: 1 / 70000 is
    1.43e-05 in float16, not 0)."""
    with np.errstate(over="ignore"):
        cast = operand.astype(FLOAT16)
    if np.isinf(cast) and not np.isinf(operand):
        return operand.astype(np.float32)
    return cast


def in_dtype(value: Any, common: np.dtype) -> np.ndarray:
    """A kernel's result in the operator's common dtype (as wrap_result)."""
    array = as_array(value)
    if array.dtype != common:
        with np.errstate(over="ignore"):  # float32 to float16 may overflow to inf
            array = array.astype(common)
    return array


def float_dtype(common: np.dtype) -> np.dtype:
    """PyTorch's integer_to_float on a numpy dtype."""
    if common.kind in "fcV":
        return common
    return dtypes.get_default_dtype().numpy
