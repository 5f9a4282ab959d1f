"""torch.autograd.Variable, PyTorch's deprecated wrapper: since tensors carry autograd
themselves, `Variable(t, requires_grad=...)` returns a tensor (a new leaf over t's
memory) and `isinstance(x, Variable)` is true for every tensor."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import dtypes
from ..factories import REQUIRES_GRAD_DTYPE_ERROR
from ..tensor import Tensor

VOLATILE_WARNING = (
    "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."
)


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)

    def __call__(
        cls,
        data: Any = None,
        requires_grad: bool = False,
        volatile: bool = False,
        **kwargs: Any,
    ) -> Tensor:
        if volatile:
            warnings.warn(VOLATILE_WARNING, UserWarning, stacklevel=2)
        if data is None:
            return Tensor(np.zeros(0, dtypes.get_default_dtype().numpy))
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(data).__name__}"
            )
        if requires_grad and data._data.dtype.kind not in "fc":
            raise RuntimeError(REQUIRES_GRAD_DTYPE_ERROR)
        result: Tensor = data.detach()
        return result.requires_grad_(requires_grad)


class Variable(metaclass=_VariableMeta):
    """Calling it returns a Tensor; every Tensor is an instance."""
