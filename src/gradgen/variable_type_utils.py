"""What the generated VariableType and backend kernels call (PyTorch's VariableTypeUtils).

The generated autograd wrapper of an operator runs, in order:
``next_edges`` (PyTorch's compute_requires_grad and collect_next_edges in one pass: None
when nothing records) -> create the Node -> ``set_next_edges`` -> save what the
formulas need -> the kernel below Autograd -> ``set_history``.
These functions are that sequence's vocabulary; they stay small because every operator
call runs through them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import dtypes
from .dtypes import _FROM_NUMPY, _KIND_CATEGORY, _PYTHON_CATEGORY, dtype
from .grad_mode import _state as _grad_mode_state
from .graph import NO_EDGE, Edge, EdgeTuple, InputMetadata, Node, new_edge
from .numpy_kernels import OVERLAPPING_WRITE_ERROR, broadcastable
from .numpy_kernels import broadcast_error as broadcast_error  # generated kernels
from .tensor import Tensor, array_tensor
from .view_history import rebase_view_history, refresh_view
from .dtypes import spelling

# The gradgen dtype of a numpy dtype: what `tensor.dtype` returns, read off the array
# (the generated wrappers save `SCALAR_TYPES[x._data.dtype]` for a formula's
# `x.scalar_type()`, without the property's call).
SCALAR_TYPES = _FROM_NUMPY

# What the fast paths' inline kernels pass as a ufunc's `out=`: `...` (numpy >= 2.3)
# returns a 0-d array where numpy would return a scalar, so a 0-d result is wrapped
# without `np.asarray`; older numpy returns the scalar (None: numpy's default), which
# the fast paths convert.
ARRAY_OUT: Any = (
    ...
    if tuple(int(part) for part in np.__version__.split(".")[:2]) >= (2, 3)
    else None
)


# The numbers a fused dunder over a Scalar (`x ** n`) passes to its fast path itself;
# anything else goes to the Tensor method (its overloads, its error for a non-number).
DUNDER_NUMBER_TYPES = (int, float, complex, np.number)


class IntOperands(dict[tuple[int, np.dtype[Any]], Any]):
    """`INT_OPERANDS[n, dtype]`: the operand numpy makes of a Python int `n` in a ufunc
    over arrays of `dtype` (a "weak" Python int takes the array's dtype), made once:
    a read-only 0-d array of that dtype. numpy converts an int argument on every call
    (half the cost of a 0-d `np.power(x, 3)`); an array already in the loop's dtype
    goes straight in, the same number into the same loop. An int the dtype cannot hold
    exactly stays the int, for numpy to convert (or refuse) as it always does."""

    def __missing__(self, key: tuple[int, np.dtype[Any]]) -> Any:
        value, dtype_ = key
        try:
            with np.errstate(all="ignore"):  # too large a float16: inf, not the int
                operand = np.asarray(value, dtype=dtype_)
        except OverflowError:  # too large a float64
            return value
        if operand.item() != value:
            return value
        operand.flags.writeable = False
        if len(self) < _INT_OPERANDS_LIMIT:
            self[key] = operand
        return operand


# Read by the generated fast paths' inline kernels (`x ** 3`); bounded.
INT_OPERANDS = IntOperands()
_INT_OPERANDS_LIMIT = 256


def compute_requires_grad(*tensors: Tensor | None) -> bool:
    """True when grad mode is on and any given tensor requires grad."""
    if not _grad_mode_state.enabled:
        return False
    for tensor in tensors:
        if tensor is None:
            continue
        if tensor._base is not None:
            refresh_view(tensor)
        if tensor._requires_grad or tensor._grad_fn is not None:
            return True
    return False


def collect_next_edges(*tensors: Tensor | None) -> tuple[Edge, ...]:
    """One edge per tensor: its grad_fn, its AccumulateGrad, or no edge."""
    edges = []
    for tensor in tensors:
        if tensor is None:
            edges.append(NO_EDGE)
            continue
        if tensor._base is not None:
            refresh_view(tensor)
        if tensor._grad_fn is not None:
            edges.append(new_edge(tensor._grad_fn, tensor._output_nr))
        elif tensor._requires_grad:
            edges.append(new_edge(tensor._get_grad_accumulator(), 0))
        else:
            edges.append(NO_EDGE)
    return tuple(edges)


# -- the generated wrappers' fused entry ------------------------------------------------
#
# `next_edges*` is compute_requires_grad and collect_next_edges in one pass: the edges
# of a call that records, or None when it records nothing (grad mode off, or no input
# requires grad). The edges are plain `(node, input_nr)` tuples (an Edge is one too),
# built without a per-call list for one and two inputs, the common arities.


def next_edge(tensor: Tensor | None) -> EdgeTuple:
    """Where the gradient of one input goes (NO_EDGE: nowhere)."""
    if tensor is None:
        return NO_EDGE
    if tensor._base is not None:
        refresh_view(tensor)
    function = tensor._grad_fn
    if function is not None:
        return (function, tensor._output_nr)
    if tensor._requires_grad:
        return (tensor._get_grad_accumulator(), 0)
    return NO_EDGE


def next_edges_1(tensor: Tensor | None) -> tuple[EdgeTuple] | None:
    """`next_edges` of one input."""
    if not _grad_mode_state.enabled or tensor is None:
        return None
    if tensor._base is not None:
        refresh_view(tensor)
    function = tensor._grad_fn
    if function is not None:
        return ((function, tensor._output_nr),)
    if tensor._requires_grad:
        # The leaf's living AccumulateGrad, read off its weak reference inline.
        reference = tensor._grad_accumulator
        function = None if reference is None else reference()
        if function is None:
            function = tensor._get_grad_accumulator()
        return ((function, 0),)
    return None


def next_edges_2(
    first: Tensor | None, second: Tensor | None
) -> tuple[EdgeTuple, EdgeTuple] | None:
    """`next_edges` of two inputs (next_edge twice, inline: binary operators are the
    most common calls)."""
    if not _grad_mode_state.enabled:
        return None
    edge: EdgeTuple = NO_EDGE
    if first is not None:
        if first._base is not None:
            refresh_view(first)
        function = first._grad_fn
        if function is not None:
            edge = (function, first._output_nr)
        elif first._requires_grad:
            # A leaf's living AccumulateGrad, read off its weak reference inline.
            reference = first._grad_accumulator
            function = None if reference is None else reference()
            if function is None:
                function = first._get_grad_accumulator()
            edge = (function, 0)
    if second is not None:
        if second._base is not None:
            refresh_view(second)
        function = second._grad_fn
        if function is not None:
            return (edge, (function, second._output_nr))
        if second._requires_grad:
            reference = second._grad_accumulator
            function = None if reference is None else reference()
            if function is None:
                function = second._get_grad_accumulator()
            return (edge, (function, 0))
    if edge is NO_EDGE:
        return None
    return (edge, NO_EDGE)


def next_edges(*tensors: Tensor | None) -> tuple[EdgeTuple, ...] | None:
    """The edges of a call that records (one per input), or None if it records nothing."""
    if not _grad_mode_state.enabled:
        return None
    edges = tuple([next_edge(tensor) for tensor in tensors])
    for edge in edges:
        if edge is not NO_EDGE:
            return edges
    return None


# The input metadata of one-output nodes, shared by every node whose output has that
# shape and dtype: most recorded calls then allocate no metadata tuples at all (fewer
# objects for the garbage collector to see). Bounded; cleared when full.
_SINGLE_METADATA: dict[tuple[tuple[int, ...], np.dtype[Any]], tuple[InputMetadata]] = {}
_SINGLE_METADATA_LIMIT = 512
# The same tuples by shape alone, the last dtype seen with it: one dict lookup keyed by
# a tuple that exists already, for the common case of a node's only output (read inline
# by the generated fast paths too). Only differentiable dtypes are entered.
ONE_OUTPUT_METADATA: dict[tuple[int, ...], tuple[InputMetadata]] = {}


def set_history(result: Tensor, grad_fn: Node) -> None:
    """Make `result` the next output of `grad_fn`."""
    data = result._data
    if not grad_fn._input_metadata:
        single = ONE_OUTPUT_METADATA.get(data.shape)
        # A differentiable dtype: only those are entered below.
        if single is not None and single[0][1] is data.dtype:
            result._grad_fn = grad_fn
            result._output_nr = 0
            grad_fn._input_metadata = single
            return
    dtype = data.dtype
    if dtype.kind not in "fcV":  # V: ml_dtypes' bfloat16
        raise RuntimeError(
            f"Autograd not support dtype: {spelling(result).scalar_type}"
        )
    # grad_fn.add_input_metadata(result), inlined: every recorded output runs it.
    metadata = grad_fn._input_metadata
    result._grad_fn = grad_fn
    if metadata:
        result._output_nr = len(metadata)
        grad_fn._input_metadata = metadata + ((data.shape, dtype),)
        return
    result._output_nr = 0
    key = (data.shape, dtype)
    single = _SINGLE_METADATA.get(key)
    if single is None:
        if len(_SINGLE_METADATA) >= _SINGLE_METADATA_LIMIT:
            _SINGLE_METADATA.clear()
            ONE_OUTPUT_METADATA.clear()
        single = _SINGLE_METADATA[key] = (key,)
    ONE_OUTPUT_METADATA[key[0]] = single
    grad_fn._input_metadata = single


def set_history_if_differentiable(result: Tensor, grad_fn: Node) -> None:
    """set_history for an output that may be integral or bool (which gets none)."""
    if result._data.dtype.kind in "fcV":
        set_history(result, grad_fn)


def check_no_requires_grad(tensor: Tensor | None, name: str, function: str) -> None:
    """A differentiable-typed input with no formula must not require grad."""
    if tensor is not None and tensor.requires_grad and _grad_mode_state.enabled:
        raise RuntimeError(
            f"The function '{function}' is not differentiable with respect to argument "
            f"'{name}'. This input cannot have requires_grad True."
        )


def not_implemented(name: str, reason: str = "") -> Any:
    """What a `not_implemented("...")` formula does when the backward runs."""
    message = f"the derivative for '{name}' is not implemented."
    if reason:
        message += f" {reason}"
    raise NotImplementedError(message)


def as_view(base: Tensor, view: Tensor) -> Tensor:
    """Make `view` a view of `base`: same version counter, `_base` the root base."""
    view._base = base._base if base._base is not None else base
    counter = view._version_counter = base._counter()
    # A view made while recording follows its base's later in-place changes (its
    # grad_fn is remade, see view_history); one made under no_grad never does.
    view._view_version = counter.version if _grad_mode_state.enabled else -1
    return view


def result_type_2(first: object, second: object) -> dtype:
    """`result_type(first, second)`, the binary operators' common cases first: two
    tensors of one dtype (unless both are wrapped numbers), or a wrapped number of no
    higher category than the tensor it meets (`x * 2.0`, `3 * x`)."""
    if isinstance(first, Tensor) and isinstance(second, Tensor):
        left = first._data.dtype
        right = second._data.dtype
        found: dtype | None = None
        if left is right:
            if not (first._is_wrapped_number and second._is_wrapped_number):
                found = _FROM_NUMPY.get(left)
        elif second._is_wrapped_number:
            if not first._is_wrapped_number and _KIND_CATEGORY.get(
                right.kind, 9
            ) <= _KIND_CATEGORY.get(left.kind, -1):
                found = _FROM_NUMPY.get(left)
        elif first._is_wrapped_number and _KIND_CATEGORY.get(
            left.kind, 9
        ) <= _KIND_CATEGORY.get(right.kind, -1):
            found = _FROM_NUMPY.get(right)
        if found is not None:
            return found
    elif isinstance(first, Tensor) and not first._is_wrapped_number:
        # A Python number (a Scalar argument) of no higher category: `x ** 2`.
        left = first._data.dtype
        category = _PYTHON_CATEGORY.get(type(second))
        if category is not None and category <= _KIND_CATEGORY.get(left.kind, -1):
            number_found = _FROM_NUMPY.get(left)
            if number_found is not None:
                return number_found
    return dtypes.result_type(first, second)


_FLOAT16 = np.dtype(np.float16)

# A number cast to the common dtype overflows to inf silently, as in PyTorch (`x + 1e39`
# for float32, bfloat16): numpy's warning for promoted_array's cast is ignored (a filter
# costs nothing until a warning is raised, unlike an errstate around every cast).
warnings.filterwarnings(
    "ignore",
    message="overflow encountered in cast",
    category=RuntimeWarning,
    module=__name__,
)


def promoted_array(tensor: Tensor, common: dtype) -> np.ndarray:
    """The array of a kernel input, in the operator's common dtype; a 0-d one (a
    number, wrapped or a 0-d tensor) too large for float16 in float32 instead, so that
    the kernel computes in float32 and its result is cast to float16, as PyTorch
    computes half-precision operators in float (`x_half * 70000` is 35008 for 0.5,
    not inf)."""
    data = tensor._data
    if data.dtype is common.numpy or data.dtype == common.numpy:
        return data
    if common.numpy is _FLOAT16 and not data.ndim and data.dtype.kind in "biuf":
        return _number_for_float16(data)
    return data.astype(common.numpy)


def _number_for_float16(data: np.ndarray) -> np.ndarray:
    """A 0-d array meeting a float16 tensor: in float16, or in float32 when float16
    cannot hold it (the kernel's float32 result is then cast to float16)."""
    with np.errstate(over="ignore"):
        cast = data.astype(_FLOAT16)
    if np.isinf(cast) and not np.isinf(data):
        return data.astype(np.float32)
    return cast


def wrap_result(value: Any, result_dtype: dtype | None = None) -> Tensor:
    """A kernel's numpy result as a Tensor (an ndarray, in `result_dtype` if given)."""
    array = value if type(value) is np.ndarray else np.asarray(value)
    if result_dtype is not None:
        wanted = result_dtype.numpy
        if array.dtype is wanted:  # the common case (a 0-d result's numpy scalar)
            return array_tensor(array)
        if array.dtype != wanted:
            if array.dtype.kind not in "biufc":
                raise _unsupported_result(array)
            if wanted is _FLOAT16:  # float32 to float16 overflows to inf, silently
                with np.errstate(over="ignore"):
                    array = array.astype(wanted)
            else:
                array = array.astype(wanted)
    elif array.dtype not in dtypes._FROM_NUMPY:
        array = _normalise_dtype(array)
    return array_tensor(array)


def _normalise_dtype(array: np.ndarray) -> np.ndarray:
    """Map numpy types gradgen lacks (float16, int8, ...) to the nearest it has."""
    kind = array.dtype.kind
    target = {
        "b": np.bool_,
        "i": np.int64,
        "u": np.int64,
        "f": np.float64,
        "c": np.complex128,
    }
    if kind not in target:
        raise _unsupported_result(array)
    return array.astype(target[kind])


def _unsupported_result(array: np.ndarray) -> TypeError:
    return TypeError(
        f"a kernel returned a numpy array of dtype {array.dtype.name}, which no gradgen "
        "dtype holds (expected bool, integer, floating or complex values)"
    )


class NotImplementedBackward(Node):
    """The grad_fn of an operator that has no derivatives.yaml entry.

    The forward runs; the backward raises PyTorch's error naming the operator.
    """

    __slots__ = ("operator",)

    def __init__(self, operator: str) -> None:
        super().__init__()
        self.operator = operator

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads: Any) -> list[Tensor | None]:
        raise RuntimeError(f"derivative for aten::{self.operator} is not implemented")


class TypeAndSize:
    """What `zeros_like(x)` in a formula saves instead of x: its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, tensor: Tensor) -> None:
        self.shape = tensor._data.shape
        self.dtype = tensor._data.dtype

    def zeros(self) -> Tensor:
        return Tensor(np.zeros(self.shape, self.dtype))


# -- in-place operators ----------------------------------------------------------------


def check_inplace(tensor: Tensor, requires_grad: bool) -> None:
    """PyTorch's check_inplace: a leaf that requires grad (or a view of one) may not be
    modified in place while the graph is being recorded."""
    if not requires_grad:
        return
    base = tensor._base
    if base is not None:
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an "
                "in-place operation."
            )
    elif tensor._grad_fn is None and tensor._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


def increment_version(tensor: Tensor) -> None:
    """Record an in-place change (saved tensors compare versions at backward)."""
    tensor._counter().version += 1


def rebase_history(tensor: Tensor, grad_fn: Node) -> None:
    """Make `tensor`, just modified in place, the output of `grad_fn`."""
    if tensor._base is not None:
        # Changed through a view: the base's history continues through CopySlices.
        if not rebase_view_history(tensor, grad_fn):
            raise RuntimeError(
                "gradgen cannot record an in-place operation on this view "
                f"({grad_fn.name()}): its elements cannot be located in its base (a view "
                "of another dtype, such as .real or .imag of a complex tensor); compute "
                "the new tensor out of place instead"
            )
        return
    set_history(tensor, grad_fn)


def copy_into(destination: Tensor, value: Any) -> Tensor:
    """Write an in-place kernel's result into `destination`'s memory; return it."""
    target = destination._data
    if value is target:  # the kernel computed into destination's memory already
        return destination
    array = np.asarray(value)
    if array.dtype != target.dtype and not np.can_cast(
        array.dtype, target.dtype, "same_kind"
    ):
        raise RuntimeError(
            f"result type {spelling(array).scalar_type} "
            "can't be cast to the desired output type "
            f"{spelling(target).scalar_type}"
        )
    if array.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(np.broadcast_shapes(array.shape, target.shape)) if broadcastable(array.shape, target.shape) else list(array.shape)}"
        )
    if not target.flags.writeable:
        raise RuntimeError(OVERLAPPING_WRITE_ERROR)
    np.copyto(target, array, casting="same_kind")
    return destination
