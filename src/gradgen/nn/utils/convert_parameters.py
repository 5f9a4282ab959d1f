"""torch.nn.utils.convert_parameters: parameters as one flat vector and back."""

from __future__ import annotations

from collections.abc import Iterable

from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated, in order (differentiable)."""
    return ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Each parameter's data replaced by its slice of `vec`, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    values = vec.detach()
    for param in parameters:
        count = param.numel()
        param.data = values[pointer : pointer + count].view_as(param)
        pointer += count
