"""torch.nn's Flatten and Unflatten."""

from __future__ import annotations

from collections.abc import Sequence

from gradgen.tensor import Tensor

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Dimensions start_dim..end_dim merged into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dimension `dim` split into `unflattened_size` (one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                "unflattened_size must be a tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        for index, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(
                    "unflattened_size must be tuple of ints, but found element of type "
                    f"{type(size).__name__} at pos {index}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        shape = tuple(input.shape)
        dim = self.dim + len(shape) if self.dim < 0 else self.dim
        if not 0 <= dim < len(shape):
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-len(shape)}, "
                f"{len(shape) - 1}], but got {self.dim})"
            )
        sizes = tuple(self.unflattened_size)
        new_shape = shape[:dim] + sizes + shape[dim + 1 :]
        return input.reshape(new_shape)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
