"""torch.nn.Parameter: a leaf tensor that a Module registers as one of its parameters."""

from __future__ import annotations


import numpy as np

from gradgen.tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf Tensor that requires grad (by default) and that `Module.__setattr__`
    registers. As in PyTorch it shares its memory with `data`, has no history, and
    operators applied to it return plain Tensors.
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            array = np.empty((0,), dtype=np.float32)
        elif isinstance(data, Tensor):
            array = data._data
        else:
            raise TypeError(
                f"Parameter(): data must be a Tensor, got {type(data).__name__}"
            )
        if requires_grad and array.dtype.kind not in "fc":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        super().__init__(array, requires_grad=bool(requires_grad))

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
