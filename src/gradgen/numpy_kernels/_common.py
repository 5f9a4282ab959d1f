"""Pieces the kernel families share: dimension wrapping, broadcast checks, PyTorch's
type names and error texts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import result_type, spelling

# PyTorch's refusal to write into memory that several elements share (an expanded
# tensor): in-place kernels, copy_into and Tensor.__setitem__ all say it this way.
OVERLAPPING_WRITE_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether shapes `a` and `b` broadcast together."""
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def broadcast_shape_error(
    *shapes: tuple[int, ...], otherwise: Exception | None = None
) -> Exception:
    """PyTorch's error for shapes that do not broadcast (infer_size's): "The size of
    tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
    for the first pair of shapes that disagrees (named a, b, c, ... in order) at its
    last disagreeing dimension. `otherwise` when no pair disagrees (they broadcast)."""
    names = "abcdefgh"
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            a, b = shapes[i], shapes[j]
            for offset in range(1, min(len(a), len(b)) + 1):
                size_a, size_b = a[-offset], b[-offset]
                if size_a != size_b and size_a != 1 and size_b != 1:
                    return RuntimeError(
                        f"The size of tensor {names[i]} ({size_a}) must match the size of "
                        f"tensor {names[j]} ({size_b}) at non-singleton dimension "
                        f"{max(len(a), len(b)) - offset}"
                    )
    if otherwise is not None:
        return otherwise
    return RuntimeError(f"shapes {[list(s) for s in shapes]} do not broadcast")


def broadcast_error(error: ValueError, *arrays: Any) -> Exception:
    """PyTorch's message for operands (arrays or numbers) that do not broadcast, where
    numpy raised `error`; other errors unchanged."""
    return broadcast_shape_error(*(np.shape(a) for a in arrays), otherwise=error)


def _wrap_dim(dim: int, ndim: int) -> int:
    """PyTorch's maybe_wrap_dim, with its error (a 0-d tensor accepts 0 and -1)."""
    low, high = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but "
            f"got {dim})"
        )
    return dim + ndim if dim < 0 and ndim else (0 if dim < 0 else dim)


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf_float64(x: np.ndarray) -> np.ndarray:
    """erf in float64, element by element (0-d arrays and empty arrays included)."""
    return np.asarray(_ERF(np.asarray(x, np.float64)), dtype=np.float64)


def _check_broadcast(*operands: Any) -> None:
    """PyTorch's error when the (array) operands of an elementwise kernel do not
    broadcast; numbers and None are skipped."""
    arrays = [a for a in operands if isinstance(a, np.ndarray)]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as error:
        raise broadcast_error(error, *arrays) from None


class _Operand:
    """An array as `dtypes.result_type` sees a tensor: a genuine (not wrapped) tensor."""

    __slots__ = ("_data", "_is_wrapped_number")

    def __init__(self, data: np.ndarray) -> None:
        self._data = data
        self._is_wrapped_number = False


def _common_dtype(*operands: Any) -> np.dtype:
    """PyTorch's result_type of arrays (tensors) and Python numbers (wrapped numbers),
    for kernels whose result dtype is not the common dtype (comparisons, clamp with
    optional bounds). None operands are skipped."""
    present = [
        _Operand(o) if isinstance(o, np.ndarray) else o
        for o in operands
        if o is not None
    ]
    return result_type(*present).numpy


# The largest finite value of each float dtype (bfloat16: ml_dtypes', kind "V").
_FLOAT_MAX = {
    np.dtype(np.float16): float(np.finfo(np.float16).max),
    np.dtype(np.float32): float(np.finfo(np.float32).max),
    np.dtype(np.float64): float(np.finfo(np.float64).max),
}
_BFLOAT16_MAX = float.fromhex("0x1.fep127")


def checked_scalar(value: Any, dtype: np.dtype) -> Any:
    """A Scalar converted to `dtype` as c10's checked_convert does: an error when the
    value does not fit (a complex with an imaginary part into a real type, inf or an
    out-of-range value into an integer, a finite value beyond a float type's range:
    70000 for float16, 1e39 for float32 and bfloat16; inf and nan pass). The error
    names the type as C++ does (c10::Half, float, int8_t)."""
    kind = dtype.kind
    if kind == "b":
        return bool(value)
    if isinstance(value, complex) and kind != "c":
        if value.imag != 0:
            raise _overflow(dtype)
        value = value.real
    if kind in "iu":
        if isinstance(value, float) and not math.isfinite(value):
            raise _overflow(dtype)
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise _overflow(dtype)
        return int(value)
    if kind == "c":
        return dtype.type(value)
    # float16, float32, float64 and bfloat16: a range check (65505 is an error for
    # float16, as in PyTorch, though it would round to 65504).
    number = float(value)
    if abs(number) > _FLOAT_MAX.get(dtype, _BFLOAT16_MAX) and math.isfinite(number):
        raise _overflow(dtype)
    return dtype.type(value)


def _overflow(dtype: np.dtype) -> RuntimeError:
    return RuntimeError(
        f"value cannot be converted to type {spelling(dtype).cpp} without overflow"
    )


def opmath_checked_scalar(value: Any, dtype: np.dtype) -> Any:
    """checked_scalar for the kernels that compute float16 and bfloat16 in float32
    (PyTorch's opmath type: addcmul's value, lerp's weight): checked against float32
    for those, against `dtype` otherwise."""
    if dtype.itemsize == 2 and dtype.kind in "fV":
        return checked_scalar(value, np.dtype(np.float32))
    return checked_scalar(value, dtype)


def _silently(kernel: Any) -> Any:
    """Run `kernel` with numpy's floating-point warnings off: like PyTorch, these
    kernels make inf and nan (log of 0, inf - inf, overflow) without a word."""

    def silent(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return kernel(*args)

    silent.__name__ = kernel.__name__
    silent.__doc__ = kernel.__doc__
    return silent


def _along(dim: int, ndim: int, item: Any) -> tuple[Any, ...]:
    """An index tuple selecting `item` along `dim` and everything elsewhere."""
    return (slice(None),) * dim + (item,) + (slice(None),) * (ndim - dim - 1)


def _reduction_dims(dim: Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """The wrapped dims of a reduction; None or [] is every dim (PyTorch's rule)."""
    if dim is None or len(dim) == 0:
        return tuple(range(ndim))
    seen: set[int] = set()
    for d in dim:
        wrapped = _wrap_dim(d, ndim)
        if wrapped in seen:
            raise RuntimeError(
                f"dim {wrapped} appears multiple times in the list of dims"
            )
        seen.add(wrapped)
    return tuple(sorted(seen)) if ndim else ()


def _scalar_type(array: np.ndarray) -> str:
    return spelling(array).scalar_type


def _not_implemented_for(kernel: str, array: np.ndarray) -> NotImplementedError:
    """PyTorch's error for a dtype a kernel is not compiled for."""
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{_scalar_type(array)}'"
    )


def _check_floating(kernel: str, array: np.ndarray) -> None:
    """PyTorch's AT_DISPATCH_FLOATING_TYPES: anything else is not implemented."""
    if array.dtype.kind != "f":
        raise _not_implemented_for(kernel, array)


def _same_dtype(result: Any, like: np.ndarray) -> np.ndarray:
    """`result` as an array of `like`'s dtype (Python scalars in the formulas must not
    widen a float32 computation)."""
    return np.asarray(result).astype(like.dtype, copy=False)


# The default generator's numpy stream: gradgen.random (a higher floor) puts its
# default Generator here when it is imported, so the sampling kernels (rrelu, dropout,
# bernoulli, ...) draw from the stream gradgen.manual_seed resets.
DEFAULT_GENERATOR: list[Any] = []


def random_generator(function: str, generator: Any) -> np.random.Generator:
    """The numpy Generator behind a kernel's `generator=` (None: the default one)."""
    chosen = DEFAULT_GENERATOR[0] if generator is None else generator
    inner = getattr(chosen, "_generator", None)
    if not isinstance(inner, np.random.Generator):
        raise TypeError(
            f"{function}(): argument 'generator' must be torch.Generator, not "
            f"{type(generator).__name__}"
        )
    return inner


def check_probabilities(p: np.ndarray) -> None:
    """bernoulli's probabilities are in [0, 1] (PyTorch's words)."""
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
            "error message be improved?  If so, please report an enhancement request "
            "to PyTorch.)"
        )


def check_p(p: float) -> None:
    """bernoulli's one probability is in [0, 1]."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
