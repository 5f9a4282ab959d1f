"""gradcheck's view of the function under test: its inputs (checked: tensors of a
floating or complex dtype that require grad), its outputs as a tuple, the ones that are
differentiable, and `GradcheckError`, which every failed check raises.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor

_TensorOrTensors = Tensor | Sequence[Tensor]


class GradcheckError(RuntimeError):
    """A gradient check failed (raised by gradcheck and gradgradcheck)."""

    # Its public home, shown in tracebacks and reprs (as PyTorch's is).
    __module__ = "gradgen.autograd.gradcheck"


# -- small helpers ---------------------------------------------------------------------


def _autograd_grad(*args: Any, **kwargs: Any) -> tuple[Tensor | None, ...]:
    # Imported at call time: gradgen.autograd imports this module while initialising.
    from . import grad

    return grad(*args, **kwargs)


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)


def _is_float_or_complex(tensor: Tensor) -> bool:
    return tensor._data.dtype.kind in "fc"


def _check_func_outputs(outputs: tuple[Any, ...]) -> tuple[Tensor, ...]:
    for index, output in enumerate(outputs):
        if not _is_tensor(output):
            raise TypeError(
                "gradcheck: func must return a Tensor or a tuple of Tensors, but "
                f"output {index} is {type(output).__name__}"
            )
    return outputs


def _differentiable_outputs(outputs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    return tuple(output for output in outputs if output.requires_grad)


def _diff_inputs(inputs: tuple[Any, ...]) -> list[Tensor]:
    return [x for x in inputs if _is_tensor(x) and x.requires_grad]


def _as_gradgen(array: np.ndarray) -> Tensor:
    """A numpy Jacobian as a Tensor, so messages print it in PyTorch's format."""
    return Tensor(np.ascontiguousarray(array))


def _check_inputs(inputs: tuple[Any, ...]) -> None:
    """Warn on single precision; refuse overlapping or read-only data, or no grads."""
    any_requires_grad = False
    for index, value in enumerate(inputs):
        if not (_is_tensor(value) and value.requires_grad):
            continue
        if value._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{index} requires gradient and "
                "is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are "
                "not of double precision floating point or complex. ",
                UserWarning,
                stacklevel=4,
            )
        data = value._data
        if not all(
            stride != 0 or size <= 1 for stride, size in zip(data.strides, data.shape)
        ):
            raise RuntimeError(
                f"The {index}th input has a dimension with stride 0. gradcheck only "
                "supports inputs that are non-overlapping to be able to "
                "compute the numerical gradients correctly. You should call "
                ".contiguous on the input before passing it to gradcheck."
            )
        if not data.flags.writeable:
            raise RuntimeError(
                f"gradcheck: the data of input #{index} is a read-only numpy array; "
                "gradcheck perturbs it in place to compute numerical gradients. Pass "
                "a tensor that owns writable data (for example a clone)."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of them have requires_grad=True."
        )
