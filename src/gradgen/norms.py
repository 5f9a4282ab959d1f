"""`gradgen.norm` and `Tensor.norm`: PyTorch's Python-level norm (torch.functional).

The schema overloads (`norm.Scalar`, `norm.ScalarOpt_dim`) need `p` whenever `dim` is
given; PyTorch's Python function does not: `norm(x, dim=1)` is the 2-norm over dim 1
and `p="fro"` (the default) is the 2-norm of the elements taken. Both run
linalg_vector_norm, as PyTorch's do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .dtypes import as_dtype
from .generated import operators
from .tensor import Tensor


def norm(
    input: Tensor,
    p: Any = "fro",
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: Any = None,
) -> Tensor:
    """The p-norm of `input` over `dim` (all elements when None); `p` a number, None
    (2) or "fro" (the 2-norm over at most two dimensions)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"norm(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if isinstance(p, str):
        if p != "fro" or (dims is not None and len(dims) > 2):
            if p == "nuc":
                raise NotImplementedError(
                    "norm(p='nuc'): gradgen has no nuclear (matrix) norm"
                )
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        p = 2
    order = 2.0 if p is None else p
    target = None if dtype is None else as_dtype(dtype)
    return operators.linalg_vector_norm.call(input, order, dims, keepdim, target)  # type: ignore[no-any-return]


def tensor_norm(
    self: Tensor,
    p: Any = "fro",
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: Any = None,
) -> Tensor:
    """`Tensor.norm`, as `gradgen.norm(self, ...)`."""
    return norm(self, p, dim, keepdim, dtype=dtype)
