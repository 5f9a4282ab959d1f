"""Kernels that are one numpy call plus PyTorch's checks of its arguments.

numpy's own errors for these cases name numpy's internals ("the array at index 0",
"axis 3", "numpy boolean negative"); PyTorch's name the tensors. Each function here
checks first, with PyTorch's message, and then calls numpy. They are re-exported by
numpy_kernels (whose `__all__` is what kernel expressions may call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import warnings

import numpy as np

from ._common import _wrap_dim, checked_scalar

# Like the generated kernels, these produce inf and nan silently (PyTorch does):
# numpy's floating-point warnings raised in this module are ignored.
warnings.filterwarnings(
    "ignore",
    message="(divide by zero|invalid value|overflow|underflow) encountered",
    category=RuntimeWarning,
    module=__name__,
)


def cat_arrays(tensors: Sequence[np.ndarray], dim: int) -> np.ndarray:
    """cat: PyTorch's checks, then np.concatenate. As in PyTorch, a 1-d tensor with no
    elements (the legacy empty tensor) is skipped whatever the others' shapes."""
    for position, tensor in enumerate(tensors):
        if tensor.ndim == 0:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {position}) cannot be concatenated"
            )
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not kept:
        return np.concatenate(tensors, axis=0)
    first = kept[0]
    axis = _wrap_dim(dim, first.ndim)
    for position, tensor in enumerate(tensors):
        if tensor.ndim == 1 and tensor.shape[0] == 0:
            continue
        if tensor.ndim != first.ndim:
            raise RuntimeError(
                "Tensors must have same number of dimensions: got "
                f"{first.ndim} and {tensor.ndim}"
            )
        for d in range(first.ndim):
            if d != axis and tensor.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {axis}. Expected "
                    f"size {first.shape[d]} but got size {tensor.shape[d]} for tensor "
                    f"number {position} in the list."
                )
    return np.concatenate(kept, axis=axis)


def stack_arrays(tensors: Sequence[np.ndarray], dim: int) -> np.ndarray:
    """stack: every tensor of the first one's shape, `dim` in [-(ndim + 1), ndim]."""
    first = tensors[0]
    axis = _wrap_dim(dim, first.ndim + 1)
    for position, tensor in enumerate(tensors):
        if tensor.shape != first.shape:
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{list(first.shape)} at entry 0 and {list(tensor.shape)} at entry "
                f"{position}"
            )
    return np.stack(tensors, axis=axis)


def negative(self: np.ndarray) -> np.ndarray:
    """neg, refused for bool tensors as PyTorch does."""
    if self.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    result: np.ndarray = np.negative(self)
    return result


def alpha_check(common: np.dtype, alpha: Any) -> None:
    """PyTorch's alpha_check of add and sub: alpha's kind must fit the operands' common
    dtype `common` (no float alpha for integral tensors, bool only for bool ones)."""
    if isinstance(alpha, (bool, np.bool_)):
        if common.kind != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, (float, np.floating)):
        if common.kind in "biu":
            raise RuntimeError(
                "For integral input tensors, argument alpha must not be a floating "
                "point number."
            )
    elif isinstance(alpha, (complex, np.complexfloating)) and common.kind != "c":
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )


def alpha_scaled(self: np.ndarray, other: Any, alpha: Any) -> Any:
    """`alpha * other` for add and sub, after PyTorch's alpha_check on `self`'s dtype
    (the operands' common dtype); `other` itself for the int 1. (`alpha == 1` is
    also true of 1.0, True and 1+0j, which the check must see: `add(ints, ints,
    alpha=1.0)` is PyTorch's error.)"""
    if alpha.__class__ is int and alpha == 1:
        return other
    alpha_check(self.dtype, alpha)
    checked_scalar(alpha, self.dtype)  # 70000 for float16: PyTorch's overflow error
    return alpha * other


def add_scaled(self: np.ndarray, other: Any, alpha: Any) -> Any:
    """add in the operands' common dtype: `self + alpha * other` (alpha_scaled)."""
    if alpha.__class__ is int and alpha == 1:
        return self + other
    return self + alpha_scaled(self, other, alpha)


TWO_BOOLS_SUBTRACTION = (
    "Subtraction, the `-` operator, with two bool tensors is not supported. "
    "Use the `^` or `logical_xor()` operator instead."
)
BOOL_SUBTRACTION = (
    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
    "trying to invert a mask, use the `~` or `logical_not()` operator instead."
)


def sub_check(self: np.ndarray, other: np.ndarray) -> None:
    """PyTorch's sub_check on sub's operands before their promotion (the kernel's
    `promotion_check:`, run where their dtypes differ): a bool operand, a bool tensor
    or a bool number (`x - True`), cannot be subtracted."""
    if self.dtype.kind == "b" or other.dtype.kind == "b":
        both = self.dtype.kind == other.dtype.kind
        raise RuntimeError(TWO_BOOLS_SUBTRACTION if both else BOOL_SUBTRACTION)


def subtract(self: np.ndarray, other: np.ndarray, alpha: Any) -> np.ndarray:
    """sub in the operands' common dtype: `self - alpha * other`, refused for two
    bool tensors as PyTorch does (sub_check refuses one, before the promotion)."""
    if self.dtype.kind == "b":
        raise RuntimeError(TWO_BOOLS_SUBTRACTION)
    result: np.ndarray = self - alpha_scaled(self, other, alpha)
    return result


NEGATIVE_POWER_ERROR = "Integers to negative integer powers are not allowed."


def power(self: Any, exponent: Any) -> Any:
    """pow: numpy's `**`, except integers to negative integer powers. A Scalar
    exponent is PyTorch's error; a tensor exponent is computed as PyTorch's integer
    kernel does: 1 for a base of 1, +-1 for a base of -1 (by the exponent's parity),
    0 for any other base (0 included)."""
    # The common case first: a float array base needs no check and no asarray.
    base = self.dtype if self.__class__ is np.ndarray else np.asarray(self).dtype
    if base.kind not in "iu":
        if base.itemsize == 2 and exponent.__class__ is not np.ndarray:
            # float16, bfloat16: PyTorch takes a Scalar exponent in the tensor's dtype
            checked_scalar(exponent, base)
        return self**exponent
    if np.asarray(exponent).dtype.kind not in "iu":
        return self**exponent
    if not isinstance(exponent, np.ndarray):
        if exponent < 0:
            raise RuntimeError(NEGATIVE_POWER_ERROR)
        return self ** checked_scalar(exponent, base)
    negative_exponent = exponent < 0
    if not negative_exponent.any():
        return self**exponent
    powers = np.power(self, np.where(negative_exponent, 0, exponent))
    base = np.asarray(self)
    inverse = np.where(
        base == 1, 1, np.where(base == -1, np.where(exponent % 2 == 0, 1, -1), 0)
    )
    return np.where(negative_exponent, inverse, powers).astype(powers.dtype)
